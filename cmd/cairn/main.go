// Command cairn is Cairn's binary: the development server and, as they
// land, the cluster server, the node agent and the replay tools. The
// benchmarks are a binary of their own (cmd/cairn-bench), so none of their
// code ships in this one. Every command has --help; every flag can also be
// set with a CAIRN_* environment variable.
package main

import "github.com/cairnhq/cairn/infra/cli"

func main() { cli.Main("cairn", newRootCommand()) }
