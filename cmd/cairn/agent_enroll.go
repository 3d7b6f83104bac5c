package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/agents/enroll"
	"github.com/cairnhq/cairn/agents/node"
)

func newAgentEnrollCommand() *cobra.Command {
	var (
		cfg     enroll.Config
		busURL  string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "enroll",
		Short: "Enroll this machine's agent on the bus with a one-time token",
		Long: `enroll gets this agent's bus credentials from the manager. It makes the
agent's NATS user key here (its seed never leaves this machine), sends the
public key with the one-time token a superadmin made
(POST /v1/agents/<agent id>/enrollment) to POST /v1/agent-enrollments, and
writes <data dir>/bus.creds (mode 0600) and, when the bus uses TLS,
<data dir>/bus-ca.pem. "cairn agent" with the same --data-dir uses them
without --bus-credentials and --bus-ca. The token works once; enrolling
again needs a new token, and revokes the key enrolled before.`,
		Example: `  cairn agent enroll --api http://manager:8080 --agent-id node-2 --token cairn_e_... --data-dir ./data/agent-2
  CAIRN_TOKEN=cairn_e_... cairn agent enroll --api http://manager:8080 --agent-id node-2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			res, err := enroll.Run(ctx, cfg)
			if err != nil {
				return err
			}
			if busURL == "" {
				busURL = guessBusURL(cfg.API)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "enrolled agent %s (user key %s)\ncredentials: %s\n", cfg.AgentID, res.UserKey, res.CredentialsPath)
			if res.CAPath != "" {
				fmt.Fprintf(out, "bus CA: %s\n", res.CAPath)
			}
			fmt.Fprintf(out, "run the agent with:\n  cairn agent --bus %s --agent-id %s --data-dir %s\n", busURL, cfg.AgentID, cfg.DataDir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.API, "api", "", "the manager's HTTP API, http://host:8080 (required)")
	f.StringVar(&cfg.AgentID, "agent-id", defaultAgentID(), "the agent id the token was made for")
	f.StringVar(&cfg.Token, "token", "", "the one-time enrollment token, cairn_e_... (required; prefer CAIRN_TOKEN to keep it out of the process list)")
	f.StringVar(&cfg.DataDir, "data-dir", "./data/agent", "the agent's data directory, where bus.creds and bus-ca.pem are written")
	f.StringVar(&busURL, "bus", "", "the bus URL to print in the agent's command line (default: nats://<api host>:4222)")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the manager")
	return cmd
}

// guessBusURL is the usual bus address beside an API URL.
func guessBusURL(api string) string {
	u, err := url.Parse(api)
	if err != nil || u.Hostname() == "" {
		return "nats://<manager>:4222"
	}
	return "nats://" + net.JoinHostPort(u.Hostname(), "4222")
}

// enrolledFiles defaults the agent's bus credentials and CA to the files
// "cairn agent enroll" wrote in its data directory, when the flags leave
// them empty and the files exist.
func enrolledFiles(cfg *node.Config) error {
	for _, f := range []struct {
		field *string
		name  string
	}{{&cfg.BusCredentialsFile, enroll.CredentialsFile}, {&cfg.BusCAFile, enroll.CAFile}} {
		if strings.TrimSpace(*f.field) != "" || cfg.DataDir == "" {
			continue
		}
		path := filepath.Join(cfg.DataDir, f.name)
		switch _, err := os.Stat(path); {
		case err == nil:
			*f.field = path
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}
