package maintenance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
)

// auditPage is how many events of the audit stream are read at a time
// (each holds a run of sealed records).
const auditPage = 64

// Verification is an audit chain verification as the API shows it.
type Verification struct {
	ID string `json:"id"`
	// State is running, done (Head is the verified head) or failed
	// (Broken names the first bad record, or Error says why it could not
	// be read).
	State string `json:"state"`
	// Records counts the records verified so far; Total the chain's
	// length when the verification started.
	Records    uint64        `json:"records"`
	Total      uint64        `json:"total"`
	Head       *VerifiedHead `json:"head"`
	Broken     *Broken       `json:"broken"`
	StartedAt  time.Time     `json:"started_at"`
	FinishedAt *time.Time    `json:"finished_at"`
	Error      string        `json:"error,omitempty"`
	// ArchivedThrough is the seq of the last record archived and pruned
	// from the live store (0: none): the verification starts after it.
	ArchivedThrough uint64 `json:"archived_through"`
}

// VerifiedHead is the last record of a chain verified from its start:
// publish it to detect a truncated tail later.
type VerifiedHead struct {
	Seq     uint64     `json:"seq"`
	Hash    audit.Hash `json:"hash"`
	At      *time.Time `json:"at"`
	Records uint64     `json:"records"`
}

// Broken is the first bad record a verification found.
type Broken struct {
	// Problem is altered, removed, reordered, duplicated, truncated or
	// unsupported-version.
	Problem string `json:"problem"`
	// Seq is the seq the bad record carries; Expected the seq expected at
	// its place; Index its 0-based place in the trail.
	Seq      uint64 `json:"seq"`
	Expected uint64 `json:"expected"`
	Index    int    `json:"index"`
	Detail   string `json:"detail"`
}

type verification struct {
	mu sync.Mutex
	v  Verification
}

func (j *verification) snapshot() Verification {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.v
}

func (j *verification) finished() bool { return j.snapshot().State != StateRunning }

func (j *verification) update(fn func(v *Verification)) {
	j.mu.Lock()
	fn(&j.v)
	j.mu.Unlock()
}

const opGetVerify = "audit.verify.get"

// StartVerification starts verifying the audit trail's hash chain from
// its first record and returns the job. One runs at a time: while one
// runs, it is the job returned (a second reading of the whole trail would
// tell nothing more).
func (s *Service) StartVerification() (Verification, error) {
	job := &verification{v: Verification{ID: uuid.Must(uuid.NewV7()).String(), State: StateRunning, StartedAt: s.cfg.Clock().UTC()}}
	s.mu.Lock()
	if i := slices.IndexFunc(s.verifies, func(j *verification) bool { return !j.finished() }); i >= 0 {
		running := s.verifies[i].snapshot()
		s.mu.Unlock()
		return running, nil
	}
	s.verifies = keep(s.verifies, job)
	s.mu.Unlock()
	s.start(func(ctx context.Context) {
		start, _ := AuditStart(ctx, s.cfg.Store) // VerifyAudit reads it too, and fails if it cannot
		job.update(func(v *Verification) { v.ArchivedThrough = start.Seq })
		head, at, err := VerifyAudit(ctx, s.cfg.Store, func(records, total uint64) {
			job.update(func(v *Verification) { v.Records, v.Total = records, total })
		})
		end := s.cfg.Clock().UTC()
		job.update(func(v *Verification) {
			v.FinishedAt, v.State = &end, StateDone
			var ce *audit.ChainError
			switch {
			case errors.As(err, &ce):
				v.State = StateFailed
				v.Broken = &Broken{Problem: ce.Problem.String(), Seq: ce.Seq, Expected: ce.Expected, Index: ce.Index, Detail: ce.Detail}
			case err != nil:
				v.State, v.Error = StateFailed, err.Error()
			default:
				v.Head = &VerifiedHead{Seq: head.Seq, Hash: head.Hash, At: at, Records: head.Seq - start.Seq}
			}
		})
		if err != nil {
			s.cfg.Logger.Error("maintenance: audit verification failed", slog.Any("error", err))
		}
	})
	return job.snapshot(), nil
}

// GetVerification returns a verification job; an unknown id is
// KindNotFound.
func (s *Service) GetVerification(id string) (Verification, error) {
	u, err := parseID(opGetVerify, "verification", id)
	if err != nil {
		return Verification{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.verifies {
		if v := j.snapshot(); v.ID == u.String() {
			return v, nil
		}
	}
	return Verification{}, domain.NotFound(opGetVerify, "verification")
}

// ListVerifications returns the verifications remembered (the running
// one and the last finished ones), the newest first: the first done one
// holds the last verified head.
func (s *Service) ListVerifications() []Verification {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Verification, 0, len(s.verifies))
	for i := len(s.verifies) - 1; i >= 0; i-- {
		out = append(out, s.verifies[i].snapshot())
	}
	return out
}

// VerifyAudit verifies the audit trail in store from its first record
// (audit.Verifier: every hash, every link, the dense sequence), or from
// the last archived record when older ones were archived and pruned
// (AuditStart), and returns
// the verified head and its record's time (nil for an empty trail), or
// the first problem as an *audit.ChainError. progress (may be nil) is told
// the records verified and the chain's length at the start after every
// page.
func VerifyAudit(ctx context.Context, store eventstore.Store, progress func(records, total uint64)) (audit.Head, *time.Time, error) {
	total, err := chainLength(ctx, store)
	if err != nil {
		return audit.Head{}, nil, err
	}
	start, err := AuditStart(ctx, store)
	if err != nil {
		return audit.Head{}, nil, err
	}
	v := audit.NewVerifier(start)
	var read uint64
	var at *time.Time
	err = AuditRuns(ctx, store, auditPage, func(run domain.AuditSealed) error {
		for _, rec := range run.Records {
			if err := v.Add(rec.Record); err != nil {
				return err
			}
			t := rec.Record.Time
			at = &t
		}
		read += uint64(len(run.Records))
		if progress != nil {
			progress(read, max(total, read))
		}
		return nil
	})
	if err != nil {
		return v.Head(), at, err
	}
	head, err := v.Finish()
	return head, at, err
}

// AuditStart is where the live audit chain starts: Genesis, or, once
// records were archived and pruned, the head of the last one (the
// audit stream's first event is then a tombstone, domain.AuditPruned,
// that says so). The first live record's prev_hash must name it.
func AuditStart(ctx context.Context, store eventstore.Store) (audit.Head, error) {
	evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Limit: 1})
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && (len(evs) == 0 || evs[0].Type != domain.TypeAuditPruned)) {
		return audit.Genesis, nil
	}
	if err != nil {
		return audit.Head{}, err
	}
	d, err := domain.DecodeEvent(evs[0].Type, evs[0].Version, evs[0].Data)
	if err != nil {
		return audit.Head{}, fmt.Errorf("audit stream revision 0: %w", err)
	}
	return d.(domain.AuditPruned).Through, nil
}

// AuditRuns calls fn with every run of sealed records of the audit
// stream, in order, reading page events at a time. Runs archived and
// pruned (tombstones) are left out.
func AuditRuns(ctx context.Context, store eventstore.Store, page int, fn func(domain.AuditSealed) error) error {
	for from := int64(0); ; {
		evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{From: from, Limit: page})
		if errors.Is(err, eventstore.ErrStreamNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Type == domain.TypeAuditPruned {
				continue
			}
			run, err := decodeRun(ev)
			if err != nil {
				return err
			}
			if err := fn(run); err != nil {
				return err
			}
		}
		if len(evs) < page {
			return nil
		}
		from = evs[len(evs)-1].Revision + 1
	}
}

// decodeRun decodes an audit.sealed event, keeping each record's bytes.
func decodeRun(ev eventstore.RecordedEvent) (domain.AuditSealed, error) {
	if ev.Type != domain.TypeAuditSealed {
		return domain.AuditSealed{}, fmt.Errorf("audit stream revision %d: a %s event, not sealed records", ev.Revision, ev.Type)
	}
	d, err := domain.DecodeEvent(ev.Type, ev.Version, ev.Data)
	if err != nil {
		return domain.AuditSealed{}, fmt.Errorf("audit stream revision %d: %w", ev.Revision, err)
	}
	run, ok := d.(domain.AuditSealed)
	if !ok {
		if p, isPtr := d.(*domain.AuditSealed); isPtr && p != nil {
			return *p, nil
		}
		return domain.AuditSealed{}, fmt.Errorf("audit stream revision %d: decoded as %T", ev.Revision, d)
	}
	return run, nil
}

// chainLength is the seq of the audit stream's last record: the chain's
// length (0 when there is none).
func chainLength(ctx context.Context, store eventstore.Store) (uint64, error) {
	evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{Direction: eventstore.Backward, From: -1, Limit: 1})
	if errors.Is(err, eventstore.ErrStreamNotFound) || (err == nil && len(evs) == 0) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	run, err := decodeRun(evs[0])
	if err != nil || len(run.Records) == 0 {
		return 0, err
	}
	return run.Records[len(run.Records)-1].Record.Seq, nil
}
