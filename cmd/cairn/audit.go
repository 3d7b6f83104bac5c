package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/auditheads"
)

func newAuditCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Manage the audit trail: the key that signs its heads, archives of old records",
	}
	cmd.AddCommand(newAuditKeygenCommand(), newAuditPubkeyCommand(), newAuditArchiveCommand())
	return cmd
}

func newAuditKeygenCommand() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Make a new ed25519 key to sign the audit chain's heads, and print its public key line",
		Long: `keygen writes a new private key to --out (mode 0600; an existing file is
never overwritten) and prints its public key as a keys file lists it:

  ed25519 <base64 public key> key_id=<id>

Give the private key to "cairn dev --audit-head-key FILE" (keep it out of
the event store's host backups if you can, readable only by Cairn's user),
and the public line to auditors: they add it to the keys file they verify
signed heads with ("cairn replay audit --verify --heads FILE --head-keys FILE").

To rotate: make a new key, append its public line to the keys file (keep
the old line as long as heads signed by the old key must verify), then
restart Cairn with the new key.`,
		Example: `  cairn audit keygen --out /etc/cairn/audit-head.key >> audit-head-keys.txt`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			key, err := auditheads.WriteKey(out)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), audit.PublicKeyLine(key.Public().(ed25519.PublicKey)))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write the private key to (mode 0600; must not exist)")
	return cmd
}

func newAuditPubkeyCommand() *cobra.Command {
	var keyFile string
	cmd := &cobra.Command{
		Use:     "pubkey",
		Short:   "Print the public key line of an audit head key, for the verifiers' keys file",
		Example: `  cairn audit pubkey --key /etc/cairn/audit-head.key`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyFile == "" {
				return errors.New("--key is required")
			}
			key, err := auditheads.LoadKey(keyFile)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), audit.PublicKeyLine(key.Public().(ed25519.PublicKey)))
			return nil
		},
	}
	cmd.Flags().StringVar(&keyFile, "key", "", "the private key file (mode 0600)")
	return cmd
}
