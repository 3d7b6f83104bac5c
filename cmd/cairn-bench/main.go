// Command cairn-bench runs Cairn's benchmarks against raw baselines
// measured in the same run: the event store (store), scheduling end to end
// (schedule), the HTTP API with the audit trail on and off (api),
// session start latency against bare podman run (sessions), and the app
// proxy against the app's published port (apps). Each writes a
// table to stdout and, with --out or --append, Markdown for
// docs/benchmarks.md (`make bench` runs them all). It is a binary of its
// own so that the production binary, cairn, carries no benchmark code.
// Every command has --help; every flag can also be set with a CAIRN_*
// environment variable.
package main

import "github.com/cairnhq/cairn/infra/cli"

func main() { cli.Main("cairn-bench", newRootCommand()) }
