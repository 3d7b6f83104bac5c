// Command cairn is Cairn's binary: the development server and, as they
// land, the cluster server, the node agent and the replay tools. The
// benchmarks are a binary of their own (cmd/cairn-bench), so none of their
// code ships in this one. Every command has --help; every flag can also be
// set with a CAIRN_* environment variable.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cairn:", err)
		os.Exit(1)
	}
}
