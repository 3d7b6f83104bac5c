package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/bus/busauth"
)

func newBusCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bus",
		Short: "Manage who may use the message bus (agents' credentials)",
	}
	cmd.AddCommand(newBusAgentCredentialsCommand(), newBusAppProxyKeyCommand())
	return cmd
}

func newBusAgentCredentialsCommand() *cobra.Command {
	var dataDir, agentID, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "agent-credentials",
		Short: "Issue bus credentials for an agent on another machine",
		Long: `Issues NATS credentials (a .creds file: a signed JWT and the agent's own
private key) for one agent, from the bus keys that ` + "`cairn dev`" + ` keeps in its data
directory (run it on the manager's machine, as the user that owns the data
directory). With them the agent may do only what an agent needs: publish
its own reports, and consume its own topic. Copy the file to the agent's
machine over a secure channel, readable only by the agent's user, and start
the agent with --bus-credentials FILE.

Example:
  cairn bus agent-credentials --data-dir ./data --agent-id gpu-07 --out gpu-07.creds
  scp gpu-07.creds gpu-07:/etc/cairn/ && ssh gpu-07 cairn agent --agent-id gpu-07 \
    --bus nats://manager:4222 --bus-credentials /etc/cairn/gpu-07.creds`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if agentID == "" || out == "" {
				return errors.New("--agent-id and --out are required")
			}
			dir := filepath.Join(dataDir, "bus-keys")
			if _, err := os.Stat(filepath.Join(dir, "account.nk")); err != nil {
				return fmt.Errorf("no bus keys in %s (has `cairn dev --data-dir %s` run?): %w", dir, dataDir, err)
			}
			keys, err := busauth.LoadOrCreateKeys(dir)
			if err != nil {
				return err
			}
			if _, err := os.Stat(out); err == nil && !force {
				return fmt.Errorf("%s exists (--force replaces it)", out)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			creds, userKey, err := keys.AgentCredentials(agentID)
			if err != nil {
				return err
			}
			if err := busauth.WriteSecretFile(out, creds); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: bus credentials of agent %s (user key %s)\n", out, agentID, userKey)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "./data", "the manager's data directory (holds bus-keys/)")
	f.StringVar(&agentID, "agent-id", "", "the agent's id (letters, digits, '-' and '_')")
	f.StringVar(&out, "out", "", "file to write the credentials to (mode 0600)")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}
