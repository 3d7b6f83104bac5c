package auditarchive

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/maintenance"
)

// DefaultFileRecords is how many records an archive file holds at most.
const DefaultFileRecords = 100_000

// readPage is how many events of the audit stream are read at a time.
const readPage = 64

// Options configure one Archive.
type Options struct {
	// Through is the last seq to archive; the archive ends at the last
	// whole run (event) that ends at or before it.
	Through uint64
	// Dir is the archive's directory: created if missing, and it must not
	// hold an archive already.
	Dir string
	// Key signs the head of the archive's last record (heads.ndjson).
	Key ed25519.PrivateKey
	// Prune removes the archived runs from the live store once the
	// archive is written and verified; without it the archive is only
	// written and verified.
	Prune bool
	// FileRecords bounds the records of one file (default
	// DefaultFileRecords).
	FileRecords int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives the progress (default slog.Default()).
	Logger *slog.Logger
}

// Result says what Archive did.
type Result struct {
	// Start is the head the archive continues (Genesis for the first
	// archive); Through the head of its last record.
	Start, Through audit.Head
	Records        uint64
	Files          []string
	Signed         audit.SignedHead
	// Pruned counts the audit stream's events made tombstones (0 without
	// Options.Prune).
	Pruned int64
}

const op = "audit.archive"

// Archive archives the live audit trail's records up to Options.Through
// into Options.Dir and, with Options.Prune, prunes them from the store
// (see the package documentation). Nothing is pruned unless the live
// trail verifies from its start through the run after the archive (the
// archive is a prefix of the live trail that links to the rest), the
// files were written and synced, and reading them back verifies to the
// same head, signed in heads.ndjson.
func Archive(ctx context.Context, store eventstore.Store, o Options) (Result, error) {
	if len(o.Key) != ed25519.PrivateKeySize {
		return Result{}, domain.Invalid(op, "key", "an audit head key is required to sign the archive's head")
	}
	if o.Dir == "" {
		return Result{}, domain.Invalid(op, "out", "the archive's directory is required")
	}
	if o.Through == 0 {
		return Result{}, domain.Invalid(op, "through", "must be a seq (1 or more)")
	}
	if o.FileRecords <= 0 {
		o.FileRecords = DefaultFileRecords
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var pruner eventstore.Pruner
	if o.Prune {
		p, ok := store.(eventstore.Pruner)
		if !ok {
			return Result{}, domain.Errorf(op, domain.KindInternal, "this event store (%T) cannot prune", store)
		}
		pruner = p
	}
	if err := prepareDir(o.Dir); err != nil {
		return Result{}, err
	}
	start, err := maintenance.AuditStart(ctx, store)
	if err != nil {
		return Result{}, err
	}
	w := &writer{dir: o.Dir, max: o.FileRecords}
	res, before, err := copyRuns(ctx, store, start, o.Through, w)
	if err == nil {
		err = w.close()
	} else {
		w.abort()
	}
	if err != nil {
		return Result{}, err
	}
	res.Files = w.files
	res.Signed = audit.SignHead(o.Key, res.Through, o.Now())
	if err := writeSynced(filepath.Join(o.Dir, HeadsFile), res.Signed.AppendJSON(nil)); err != nil {
		return Result{}, err
	}
	if err := syncDir(o.Dir); err != nil {
		return Result{}, err
	}
	if err := verifyWritten(o.Dir, res, o.Key.Public().(ed25519.PublicKey)); err != nil {
		return Result{}, domain.Errorf(op, domain.KindConflict, "the archive written to %s does not verify, so nothing was pruned: %v", o.Dir, err)
	}
	o.Logger.Info("audit archive written and verified", slog.String("dir", o.Dir), slog.Uint64("from_seq", res.Start.Seq+1),
		slog.Uint64("through_seq", res.Through.Seq), slog.Int("files", len(res.Files)))
	if pruner == nil {
		return res, nil
	}
	tomb, err := json.Marshal(domain.AuditPruned{Through: res.Through, At: o.Now().UTC()})
	if err != nil {
		return Result{}, err
	}
	n, err := pruner.Prune(ctx, domain.AuditStream, before, eventstore.Tombstone{Type: domain.TypeAuditPruned, Data: tomb})
	if err != nil {
		return res, fmt.Errorf("audit archive written and verified, but the prune failed (run the command again with a new directory, or prune later): %w", err)
	}
	res.Pruned = n
	o.Logger.Info("archived audit records pruned from the live store", slog.Uint64("through_seq", res.Through.Seq), slog.Int64("events", n))
	return res, nil
}

// copyRuns reads the live audit stream from its start to its end,
// verifying every record (the archive must be a prefix of a trail that
// verifies), and writes the records of the runs that end at or before
// through (never the stream's last event) to w. It returns the revision
// of the first run not archived: the prune's bound.
func copyRuns(ctx context.Context, store eventstore.Store, start audit.Head, through uint64, w *writer) (Result, int64, error) {
	lastEv, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: eventstore.FromEnd, Limit: 1})
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(lastEv) == 0) {
		return Result{}, 0, domain.Errorf(op, domain.KindConflict, "the audit trail is empty: nothing to archive")
	}
	if err != nil {
		return Result{}, 0, err
	}
	lastRev := lastEv[0].Revision
	res := Result{Start: start, Through: start}
	v := audit.NewVerifier(start)
	before := int64(-1) // the revision of the first run not archived
	for from := int64(0); from <= lastRev; {
		evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{From: from, Limit: readPage})
		if err != nil {
			return Result{}, 0, err
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.Type == domain.TypeAuditPruned {
				continue
			}
			d, err := domain.DecodeEvent(ev.Type, ev.Version, ev.Data)
			if err != nil {
				return Result{}, 0, fmt.Errorf("audit stream revision %d: %w", ev.Revision, err)
			}
			run, ok := d.(domain.AuditSealed)
			if !ok || len(run.Records) == 0 {
				return Result{}, 0, fmt.Errorf("audit stream revision %d: a %s event, not sealed records", ev.Revision, ev.Type)
			}
			for _, rec := range run.Records {
				if err := v.Add(rec.Record); err != nil {
					return Result{}, 0, domain.Errorf(op, domain.KindConflict, "the live audit trail does not verify, so nothing is archived: %v", err)
				}
			}
			archived := before < 0 && run.Records[len(run.Records)-1].Seq <= through && ev.Revision < lastRev
			if !archived {
				if res.Records == 0 {
					return Result{}, 0, domain.Errorf(op, domain.KindConflict,
						"nothing to archive through seq %d: the live trail's first run ends at seq %d (only whole runs are archived, and never the last one)",
						through, run.Records[len(run.Records)-1].Seq)
				}
				if before < 0 {
					before = ev.Revision
				}
				continue // verified to the end: a broken trail is evidence, never pruned
			}
			for _, rec := range run.Records {
				if err := w.add(rec.Seq, rec.Raw); err != nil {
					return Result{}, 0, err
				}
			}
			res.Records += uint64(len(run.Records))
			res.Through = run.Records[len(run.Records)-1].Head()
		}
		from = evs[len(evs)-1].Revision + 1
	}
	if _, err := v.Finish(); err != nil {
		return Result{}, 0, domain.Errorf(op, domain.KindConflict, "the live audit trail does not verify, so nothing is archived: %v", err)
	}
	if before < 0 {
		return Result{}, 0, fmt.Errorf("audit stream: its last event (%d) was not read", lastRev)
	}
	return res, before, nil
}

// verifyWritten reads the archive back: its records verify from res.Start
// and end exactly at res.Through, which heads.ndjson signs.
func verifyWritten(dir string, res Result, pub ed25519.PublicKey) error {
	f, err := os.Open(filepath.Join(dir, HeadsFile))
	if err != nil {
		return err
	}
	anchors, err := audit.VerifyHeads(f, audit.Keyring{audit.KeyID(pub): pub})
	f.Close()
	if err != nil {
		return err
	}
	v := audit.NewVerifier(res.Start, anchors...)
	var n uint64
	for r, err := range Records(dir) {
		if err != nil {
			return err
		}
		if err := v.Add(r.Record); err != nil {
			return err
		}
		n++
	}
	head, err := v.Finish()
	if err != nil {
		return err
	}
	if head != res.Through || n != res.Records {
		return fmt.Errorf("read back %d records ending at %d:%s, wrote %d ending at %d:%s", n, head.Seq, head.Hash, res.Records, res.Through.Seq, res.Through.Hash)
	}
	return nil
}

// prepareDir creates dir (0750) or checks that it holds no archive.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	files, err := Files(dir)
	if err != nil {
		return err
	}
	if _, serr := os.Stat(filepath.Join(dir, HeadsFile)); len(files) > 0 || serr == nil {
		return &domain.Error{Op: op, Kind: domain.KindConflict, Message: dir, Err: ErrNotEmpty}
	}
	return nil
}

// writer writes records to files of at most max records, each written
// under a temporary name, synced, closed and renamed to its final name
// (its seq range) once full.
type writer struct {
	dir         string
	max         int
	f           *os.File
	buf         bytes.Buffer
	first, last uint64
	n           int
	files       []string
}

const partName = ".audit-part.tmp"

func (w *writer) add(seq uint64, raw []byte) error {
	if w.f == nil {
		f, err := os.OpenFile(filepath.Join(w.dir, partName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			return fmt.Errorf("audit archive: %w", err)
		}
		w.f, w.first, w.n = f, seq, 0
	}
	w.buf.Write(raw)
	w.buf.WriteByte('\n')
	w.last = seq
	w.n++
	if w.buf.Len() >= 1<<20 {
		if _, err := w.f.Write(w.buf.Bytes()); err != nil {
			return fmt.Errorf("audit archive: %w", err)
		}
		w.buf.Reset()
	}
	if w.n == w.max {
		return w.finish()
	}
	return nil
}

// finish syncs, closes and names the current file.
func (w *writer) finish() error {
	f := w.f
	w.f = nil
	_, err := f.Write(w.buf.Bytes())
	w.buf.Reset()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	name := filepath.Join(w.dir, fileName(w.first, w.last))
	if err := os.Rename(filepath.Join(w.dir, partName), name); err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	w.files = append(w.files, name)
	return nil
}

func (w *writer) close() error {
	if w.f == nil {
		return nil
	}
	return w.finish()
}

// abort removes the file being written.
func (w *writer) abort() {
	if w.f != nil {
		w.f.Close()
		os.Remove(filepath.Join(w.dir, partName))
		w.f = nil
	}
}

// writeSynced writes data and a newline to a new file (0640) and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	return nil
}

// syncDir syncs a directory, making the names of the files in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("audit archive: %w", err)
	}
	return nil
}
