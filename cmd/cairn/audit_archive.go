package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/infra/auditarchive"
	"github.com/cairnhq/cairn/infra/auditheads"
)

// archiveHeadsPath is the signed heads file of the archive in dir.
func archiveHeadsPath(dir string) string { return filepath.Join(dir, auditarchive.HeadsFile) }

func newAuditArchiveCommand() *cobra.Command {
	var sf storeFlags
	var o auditarchive.Options
	var keyFile string
	var noPrune bool
	cmd := &cobra.Command{
		Use:   "archive",
		Short: "Move the oldest audit records to NDJSON files, verified and signed, then prune them from the live store",
		Long: `archive writes every record of the live audit trail up to --through SEQ
(rounded down to the end of a whole sealed run, and never the trail's last
run) to --out DIR: files audit-<first seq>-<last seq>.ndjson holding the
records exactly as stored (so their hashes verify), and heads.ndjson, the
head of the last archived record signed with the audit head key (--key, as
given to cairn dev --audit-head-key). It syncs them, reads them back and
verifies them (every hash and link, ending at the signed head); only then
it prunes the archived runs from the event store: each becomes a
tombstone naming the last archived record, where the live trail now
starts. It refuses (and prunes nothing) when the live trail does not
verify, when the archive does not read back the same, or when DIR already
holds an archive. --no-prune writes and verifies the archive only.

Keep archives where the live store's writers cannot change them (another
system, write-once storage). Verify archive and live store as one chain:

  cairn replay audit --verify --archive DIR --head-keys KEYS

Archive again later into a new directory: it continues from where the live
trail starts. Verify them all, oldest first:

  cairn replay audit --verify --archive DIR1 --archive DIR2 --head-keys KEYS`,
		Example: `  cairn audit archive --through 1000000 --out /srv/audit-archive/2026-11 --key /etc/cairn/audit-head.key
  cairn audit archive --through 5000 --out ./archive --key head.key --no-prune --store postgres://cairn@db/cairn`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if keyFile == "" || o.Dir == "" || o.Through == 0 {
				return errors.New("--through, --out and --key are required")
			}
			key, err := auditheads.LoadKey(keyFile)
			if err != nil {
				return err
			}
			o.Key, o.Prune, o.Logger = key, !noPrune, slog.Default()
			storeDSN, err := sf.dsn()
			if err != nil {
				return err
			}
			store, err := dsn.Open(ctx, storeDSN)
			if err != nil {
				return err
			}
			defer store.Close()
			res, err := auditarchive.Archive(ctx, store, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "archived records %d to %d (%d records, %d files) to %s; head %d:%s signed in %s\n",
				res.Start.Seq+1, res.Through.Seq, res.Records, len(res.Files), o.Dir, res.Through.Seq, res.Through.Hash, archiveHeadsPath(o.Dir))
			if o.Prune {
				fmt.Fprintf(cmd.OutOrStdout(), "pruned from the live store: %d events of the audit stream\n", res.Pruned)
			}
			return nil
		},
	}
	sf.register(cmd)
	f := cmd.Flags()
	f.Uint64Var(&o.Through, "through", 0, "last seq to archive (rounded down to the end of a whole run; the last run always stays)")
	f.StringVar(&o.Dir, "out", "", "the archive's directory (created; must not hold an archive)")
	f.StringVar(&keyFile, "key", "", "the audit head key file (mode 0600) that signs the archive's head")
	f.BoolVar(&noPrune, "no-prune", false, "write and verify the archive, prune nothing")
	f.IntVar(&o.FileRecords, "file-records", auditarchive.DefaultFileRecords, "most records per archive file")
	return cmd
}
