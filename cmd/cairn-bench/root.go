package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn-bench",
		Short: "Run Cairn's benchmarks against raw baselines measured in the same run",
		Long: `cairn-bench measures Cairn next to raw baselines measured in the same run on
the same machine, and reports the ratios against the targets:

  store     the event store backends: appends/s, replay events/s, subscription lag
  schedule  scheduling end to end: placements/s until visible in the read side
  api       the HTTP API: signed requests/s with p50/p99, audit trail on vs off
  sessions  session start latency (POST → RUNNING visible) against bare podman run
  apps      the app proxy: HTTP and WebSocket through it vs straight to the published
            port, POST /v1/sessions → a usable Jupyter
  webui     the Web-UI in Chromium: first page of Sessions and Data over 100,000
            sessions and 10,000 folders, queries per page, live delivery

"make bench" runs all five against a throwaway PostgreSQL and writes
docs/benchmarks.md. Every flag can also be set by an environment variable:
--postgres-url is CAIRN_POSTGRES_URL, --log-level is CAIRN_LOG_LEVEL, and so
on. Flags win.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newBenchStoreCommand(), newBenchSessionsCommand(), newBenchScheduleCommand(), newBenchAPICommand(), newBenchAppsCommand(), newBenchWebUICommand())
	cli.Setup(root)
	return root
}

// appendFile appends b to the file at path (made if missing): how every
// benchmark adds its Markdown to docs/benchmarks.md (--append).
func appendFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
