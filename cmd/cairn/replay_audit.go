package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/dsn"
	"github.com/cairnhq/cairn/infra/auditarchive"
	"github.com/cairnhq/cairn/infra/logging"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/progress"
)

// auditReplayOptions are the flags of "cairn replay audit".
type auditReplayOptions struct {
	verify  bool
	quiet   bool
	anchors []string
	// heads are files of signed heads, verified against headKeys (a keys
	// file) and then used as anchors.
	heads    []string
	headKeys string
	// archives are directories written by cairn audit archive, oldest
	// first: their records are verified (and printed) before the live
	// store's.
	archives []string
	actor    string
	action   string
	outcome  string
	from     string
	to       string
	page     int
	// fromFile is an NDJSON export read instead of the store ("-": stdin).
	fromFile string
}

func newReplayAuditCommand() *cobra.Command {
	var sf storeFlags
	var o auditReplayOptions
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Replay the audit trail from the event store; --verify checks its hash chain",
		Long: `audit reads the audit trail (the sealed access records of the audit stream)
straight from the event store, the source of truth, and writes the records
matching the filters to stdout as NDJSON, exactly as stored.

--verify checks the whole chain while it reads (filters only choose what is
printed): every record's hash, its link to the record before and the dense
sequence, so an altered, removed, reordered or duplicated record is reported
with its seq, and the command exits with status 1. Records removed from the
end leave a shorter chain that is consistent: pass a head published earlier
with --anchor SEQ:HASH (repeatable) to detect that too. The verified head is
printed on stderr; publish it to anchor the next verification.

--heads FILE --head-keys FILE does the same with the heads Cairn signed and
published (cairn dev --audit-head-key, --audit-head-sink): every head's
signature is checked first (a head whose key is not in the keys file, or
whose signature is wrong, fails the verification and is named), then each
head is an anchor: a trail that ends before the last head's seq is
truncated, a record whose hash differs from a head's is altered (a
rewritten and re-hashed suffix is caught at the first head after the
change).

--archive DIR verifies the records archived to DIR (cairn audit archive)
and the live store's as one chain, without a gap; with --head-keys, the
archive's own signed heads (DIR/heads.ndjson) are anchors too. Give it once
per archive, oldest first. Without it, a trail whose oldest records were
archived and pruned is verified from the last archived record.

--from-file FILE reads an NDJSON export (GET /v1/audit/stream, or this
command's output; - reads stdin) instead of the store, so an auditor can
verify what they were given, with the same anchors and signed heads: full
records are recomputed, elided records (a domain auditor's export) are
checked for their place in the chain. With --archive, the export continues
the archives.`,
		Example: `  cairn replay audit --verify --quiet
  cairn replay audit --actor alice@example.com --from 2026-11-01T00:00:00Z > alice.ndjson
  cairn replay audit --verify --anchor 1042:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
  cairn replay audit --verify --quiet --heads /mnt/other-disk/audit-heads.ndjson --head-keys audit-head-keys.txt
  cairn replay audit --verify --quiet --archive /srv/audit-archive --head-keys audit-head-keys.txt
  cairn replay audit --verify --quiet --from-file trail.ndjson --heads audit-heads.ndjson --head-keys audit-head-keys.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if o.quiet && !cmd.Flags().Changed("log-level") {
				// Quiet means the verdict alone: no progress, no store logs.
				if err := quietLogs(cmd); err != nil {
					return err
				}
			}
			if o.fromFile != "" {
				head, err := replayAuditFile(ctx, o.fromFile, cmd.InOrStdin(), o, cmd.OutOrStdout())
				if err != nil {
					return err
				}
				if o.verify {
					fmt.Fprintf(cmd.ErrOrStderr(), "audit trail verified: %d records, head %d:%s\n", head.Seq, head.Seq, head.Hash)
				}
				return nil
			}
			storeDSN, err := sf.dsn()
			if err != nil {
				return err
			}
			store, err := dsn.Open(ctx, storeDSN)
			if err != nil {
				return err
			}
			defer store.Close()
			head, err := replayAudit(ctx, store, o, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if o.verify {
				fmt.Fprintf(cmd.ErrOrStderr(), "audit trail verified: %d records, head %d:%s\n", head.Seq, head.Seq, head.Hash)
			}
			return nil
		},
	}
	sf.register(cmd)
	f := cmd.Flags()
	f.BoolVar(&o.verify, "verify", false, "verify the hash chain (exit status 1 when it is broken)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print no records (with --verify: only the verdict)")
	f.StringSliceVar(&o.anchors, "anchor", nil, "a head published earlier, SEQ:HASH (repeatable)")
	f.StringArrayVar(&o.heads, "heads", nil, "a file of signed heads (NDJSON, as the file sink writes it) to verify and use as anchors (repeatable; needs --head-keys)")
	f.StringVar(&o.headKeys, "head-keys", "", `the keys file signed heads are verified with: one "ed25519 <base64 public key> [comment]" a line`)
	f.StringArrayVar(&o.archives, "archive", nil, "a directory written by cairn audit archive (repeatable, oldest first): verify its records and the live store's as one chain")
	f.StringVar(&o.actor, "actor", "", "print the records of this user (id or e-mail address) or access key")
	f.StringVar(&o.action, "action", "", `print the records of this action, e.g. "POST /v1/sessions"`)
	f.StringVar(&o.outcome, "outcome", "", "print the records with this outcome: success, error, denied")
	f.StringVar(&o.from, "from", "", "print the records at or after this time (RFC 3339)")
	f.StringVar(&o.to, "to", "", "print the records before this time (RFC 3339)")
	f.IntVar(&o.page, "page", 64, "events read per page (each holds a run of sealed records)")
	f.StringVar(&o.fromFile, "from-file", "", `read an NDJSON export (GET /v1/audit/stream) instead of the store ("-": stdin)`)
	return cmd
}

// auditFilter decides which records are printed.
type auditFilter struct {
	actor, action string
	outcome       audit.Outcome
	from, to      time.Time
}

// quietLogs lowers the default logger to warnings, keeping the format the
// --log-format flag chose.
func quietLogs(cmd *cobra.Command) error {
	format, _ := cmd.Flags().GetString("log-format")
	logger, err := logging.New(cmd.ErrOrStderr(), logging.Config{Level: "warn", Format: format})
	if err != nil {
		return err
	}
	slog.SetDefault(logger)
	return nil
}

// resolveActor turns an --actor that is an e-mail address into the id of
// the user the address belongs to (its reservation stream says which),
// since the records name users by id. Anything else is used as given.
func resolveActor(ctx context.Context, store eventstore.Store, actor string) (string, error) {
	if !strings.Contains(actor, "@") {
		return actor, nil
	}
	recs, err := store.ReadStream(ctx, domain.UserEmailStream(actor).String(), eventstore.ReadStreamOptions{})
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(recs) == 0) {
		return "", fmt.Errorf("--actor %q: no user has this e-mail address", actor)
	}
	if err != nil {
		return "", err
	}
	events, err := commands.DecodeStream(recs)
	if err != nil {
		return "", err
	}
	r, err := domain.RehydrateEmailReservation(events)
	if err != nil {
		return "", err
	}
	return r.UserID().String(), nil
}

func (o auditReplayOptions) filter() (auditFilter, error) {
	f := auditFilter{actor: o.actor, action: o.action, outcome: audit.Outcome(o.outcome)}
	switch f.outcome {
	case "", audit.Success, audit.Failure, audit.Denied:
	default:
		return f, fmt.Errorf("--outcome %q: want success, error or denied", o.outcome)
	}
	for _, t := range []struct {
		flag, raw string
		dst       *time.Time
	}{{"--from", o.from, &f.from}, {"--to", o.to, &f.to}} {
		if t.raw == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339Nano, t.raw)
		if err != nil {
			return f, fmt.Errorf("%s %q: want an RFC 3339 time", t.flag, t.raw)
		}
		*t.dst = v
	}
	return f, nil
}

func (f auditFilter) match(r audit.Record) bool {
	return (f.actor == "" || r.UserID == f.actor || r.AccessKey == f.actor) &&
		(f.action == "" || r.Action == f.action) &&
		(f.outcome == "" || r.Outcome == f.outcome) &&
		(f.from.IsZero() || !r.Time.Before(f.from)) &&
		(f.to.IsZero() || r.Time.Before(f.to))
}

// parseAnchor reads SEQ:HASH.
func parseAnchor(s string) (audit.Head, error) {
	seqText, hashText, ok := strings.Cut(s, ":")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if !ok || err != nil || seq == 0 {
		return audit.Head{}, fmt.Errorf("--anchor %q: want SEQ:HASH", s)
	}
	var h audit.Hash
	if err := h.UnmarshalText([]byte(hashText)); err != nil {
		return audit.Head{}, fmt.Errorf("--anchor %q: %w", s, err)
	}
	return audit.Head{Seq: seq, Hash: h}, nil
}

// replayAudit reads the audit stream page by page, prints what matches
// and, with o.verify, verifies the chain; it returns the chain's head.
func replayAudit(ctx context.Context, store eventstore.Store, o auditReplayOptions, out io.Writer) (audit.Head, error) {
	filter, err := o.filter()
	if err != nil {
		return audit.Head{}, err
	}
	if filter.actor, err = resolveActor(ctx, store, filter.actor); err != nil {
		return audit.Head{}, err
	}
	var anchors []audit.Head
	for _, a := range o.anchors {
		h, err := parseAnchor(a)
		if err != nil {
			return audit.Head{}, err
		}
		anchors = append(anchors, h)
	}
	if o.page <= 0 {
		return audit.Head{}, fmt.Errorf("--page %d: must be positive", o.page)
	}
	signed, err := o.signedAnchors()
	if err != nil {
		return audit.Head{}, err
	}
	anchors = append(anchors, signed...)
	// The chain's length, for the progress bar: its last record's seq.
	var total uint64
	if tip, err := auditseq.Resume(ctx, store); err == nil {
		total = tip.Head.Seq
	}
	bar := progress.New("replay audit", progress.Options{Unit: "records"})
	w := bufio.NewWriter(out)
	// Where the live chain starts: Genesis, or the last record archived
	// and pruned. With --archive, the archive's records come first, from
	// Genesis, and the live ones must continue them.
	start, err := maintenance.AuditStart(ctx, store)
	if err != nil {
		return audit.Head{}, err
	}
	if len(o.archives) > 0 {
		start = audit.Genesis
	}
	v := audit.NewVerifier(start, anchors...)
	head, err := func() (audit.Head, error) {
		var read uint64
		add := func(r audit.Record, raw []byte) error {
			if o.verify {
				if err := v.Add(r); err != nil {
					return err
				}
			}
			if !o.quiet && filter.match(r) {
				w.Write(raw)
				w.WriteByte('\n')
			}
			read++
			return nil
		}
		var archived audit.Head // the archive's last record
		for _, dir := range o.archives {
			for r, err := range auditarchive.Records(dir) {
				if err == nil {
					err = add(r.Record, r.Raw)
				}
				if err != nil {
					return v.Head(), err
				}
				archived = r.Head()
			}
		}
		err := maintenance.AuditRuns(ctx, store, o.page, func(run domain.AuditSealed) error {
			for _, rec := range run.Records {
				if len(o.archives) > 0 && rec.Seq <= archived.Seq {
					// Archived but not pruned yet: the archive stands for it,
					// and the live record at its end must be the same.
					if rec.Seq == archived.Seq && rec.Hash != archived.Hash {
						return &audit.ChainError{Problem: audit.ProblemAltered, Seq: rec.Seq, Index: -1, Expected: rec.Seq,
							Detail: fmt.Sprintf("the live record %d differs from the archive's (hash %s, archived %s)", rec.Seq, rec.Hash, archived.Hash)}
					}
					continue
				}
				if err := add(rec.Record, rec.Raw); err != nil {
					return err
				}
			}
			bar.Update(read, total)
			return nil
		})
		if err != nil {
			return v.Head(), err
		}
		if !o.verify {
			return audit.Head{Seq: read}, nil
		}
		return v.Finish()
	}()
	if err == nil && o.verify && start.Seq > 0 {
		slog.Info("records before the live trail were archived and pruned: verified from the last archived record (pass --archive DIR to verify the archive too)",
			slog.Uint64("archived_through_seq", start.Seq), slog.String("archived_through_hash", start.Hash.String()))
	}
	bar.Finish(err)
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		var ce *audit.ChainError
		if errors.As(err, &ce) {
			return head, fmt.Errorf("the audit trail is broken: %w", err)
		}
		return head, err
	}
	return head, nil
}
