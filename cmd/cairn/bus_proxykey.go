package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/infra/bus/busauth"
)

func newBusAppProxyKeyCommand() *cobra.Command {
	var dataDir, out string
	var valid time.Duration
	var force bool
	cmd := &cobra.Command{
		Use:   "app-proxy-key",
		Short: "Issue the key a separate app proxy (cairn proxy) signs its requests to agents with",
		Long: `Makes a new key for "cairn proxy --agent-key" and the grant of it, signed with
the bus account key that ` + "`cairn dev`" + ` keeps in its data directory (run it on the
manager's machine, as the user that owns the data directory). Agents accept
requests signed by it for their kernels' apps and terminals only, until
--valid has passed; the proxy never needs the account key itself. Issue a new
one before the grant ends (the proxy warns two weeks ahead). Copy the file
to the proxy's machine over a secure channel, readable only by its user.`,
		Example: `  cairn bus app-proxy-key --data-dir ./data --out proxy-agent.key --valid 2160h`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			if valid <= 0 {
				return errors.New("--valid must be positive")
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
			expires := time.Now().Add(valid).Truncate(time.Second)
			raw, err := keys.IssueAppProxyKey(expires)
			if err != nil {
				return err
			}
			if err := busauth.WriteSecretFile(out, raw); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: the app proxy's key for agents, valid until %s\n", out, expires.UTC().Format(time.RFC3339))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "./data", "the manager's data directory (holds bus-keys/)")
	f.StringVar(&out, "out", "", "file to write the key to (mode 0600)")
	f.DurationVar(&valid, "valid", 365*24*time.Hour, "how long agents accept the key")
	f.BoolVar(&force, "force", false, "replace --out if it exists")
	return cmd
}
