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
	"github.com/cairnhq/cairn/infra/proxyserver"
)

func newBusAppProxyKeyCommand() *cobra.Command {
	var dataDir, out, credsOut, name string
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
		Example: `  cairn bus app-proxy-key --data-dir ./data --out proxy-agent.key --credentials-out proxy-bus.creds --valid 2160h`,
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
			for _, f := range []string{out, credsOut} {
				if f == "" {
					continue
				}
				if _, err := os.Stat(f); err == nil && !force {
					return fmt.Errorf("%s exists (--force replaces it)", f)
				} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
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
			if credsOut == "" {
				return nil
			}
			creds, err := keys.AppProxyCredentials(proxyserver.Durable(name))
			if err != nil {
				return err
			}
			if err := busauth.WriteSecretFile(credsOut, creds); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: bus credentials of app proxy %q (read the agents' reports, nothing else)\n", credsOut, name)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dataDir, "data-dir", "./data", "the manager's data directory (holds bus-keys/)")
	f.StringVar(&out, "out", "", "file to write the key to (mode 0600)")
	f.DurationVar(&valid, "valid", 365*24*time.Hour, "how long agents accept the key")
	f.StringVar(&credsOut, "credentials-out", "", "also write the proxy's bus credentials (reading the agents' reports only) to this file (mode 0600), for cairn proxy --bus-credentials")
	f.StringVar(&name, "name", proxyserver.DefaultName, "the proxy's --name, which its bus credentials are bound to")
	f.BoolVar(&force, "force", false, "replace --out and --credentials-out if they exist")
	return cmd
}
