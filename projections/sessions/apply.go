package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection. It mirrors the fold of
// domain.Session (session_rehydrate.go): the same facts, as rows.
func (m *ReadModel) Apply(ctx context.Context, tx projections.Tx, ev projections.Event) error {
	if _, ok := ev.Payload.(domain.SessionScheduled); !ok {
		m.flush(tx) // the held placements come first
	}
	if e, ok := ev.Payload.(domain.SessionRequested); ok {
		return m.applyRequested(ctx, tx, ev, e)
	}
	if records, ok := domain.AccessRecords(ev.Payload); ok {
		return m.applyUsed(ctx, tx, records)
	}
	sid, err := sessionIDFromStream(ev.Stream)
	if err != nil {
		return err
	}
	pos := int64(ev.Position)
	d := tx.Dialect()
	switch e := ev.Payload.(type) {
	case domain.SessionPendingUpdated:
		details, err := jsonText(nonNil(e.Details))
		if err != nil {
			return err
		}
		return exec(ctx, tx, m.sql.pendingUpdated, sid, e.Reason, details, e.Tries, pos)
	case domain.SessionScheduled:
		return m.applyScheduled(ctx, tx, sid, pos, e)
	case domain.SessionStatusChanged:
		var started any
		if e.Status == domain.StatusRunning {
			started = d.Time(e.At)
		}
		return exec(ctx, tx, m.sql.setStatus, sid, string(e.Status), e.Reason, started, pos)
	case domain.SessionTerminating:
		return exec(ctx, tx, m.sql.setStatus, sid, string(domain.StatusTerminating), e.Reason, nil, pos)
	case domain.SessionTerminated:
		var code any
		if e.ExitCode != nil {
			code = int64(*e.ExitCode)
		}
		return exec(ctx, tx, m.sql.terminated, sid, string(domain.StatusTerminated), e.Reason, string(e.Result), code, d.Time(e.At), pos)
	case domain.SessionCancelled:
		return m.applyEnded(ctx, tx, sid, pos, domain.StatusCancelled, e.Reason, "", d.Time(e.At))
	case domain.SessionErrored:
		return m.applyEnded(ctx, tx, sid, pos, domain.StatusError, e.Reason, e.Message, d.Time(e.At))
	case domain.SessionDisconnected:
		return exec(ctx, tx, m.sql.setStatus, sid, string(domain.StatusDisconnected), e.Reason, nil, pos)
	case domain.SessionReconnected:
		if e.Status == "" {
			// Another agent of the session is still disconnected.
			return exec(ctx, tx, m.sql.touchSession, sid, pos)
		}
		var started any
		if e.Status == domain.StatusRunning {
			started = d.Time(e.At)
		}
		return exec(ctx, tx, m.sql.setStatus, sid, string(e.Status), e.Reason, started, pos)
	case domain.KernelPullProgressed, domain.KernelAppsReady:
		return m.applyKernelDetail(ctx, tx, sid, pos, e)
	default:
		return m.applyKernel(ctx, tx, sid, pos, ev.Payload)
	}
}

// applyRequested creates the session's row and its kernels' rows.
func (m *ReadModel) applyRequested(ctx context.Context, tx projections.Tx, ev projections.Event, e domain.SessionRequested) error {
	pos := int64(ev.Position)
	total := domain.Slots{}
	for _, k := range e.Kernels {
		total = total.Add(k.Slots)
	}
	requested, err := jsonText(total)
	if err != nil {
		return err
	}
	dependencies := e.Dependencies
	if dependencies == nil {
		dependencies = []uuid.UUID{}
	}
	deps, err := jsonText(dependencies)
	if err != nil {
		return err
	}
	var startsAt any
	if !e.StartsAt.IsZero() {
		startsAt = tx.Dialect().Time(e.StartsAt)
	}
	sid := e.SessionID.String()
	if err := exec(ctx, tx, m.sql.insertSession,
		sid, e.Name, e.Owner.UserID, e.Owner.AccessKey, e.Domain, e.Project, e.ResourceGroup,
		string(e.Type), e.Image, e.Command, e.Priority, string(e.ClusterMode), len(e.Kernels),
		string(domain.StatusPending), "[]", requested, tx.Dialect().Time(e.At), pos,
		startsAt, e.Architecture, deps,
	); err != nil {
		return err
	}
	for i, k := range e.Kernels {
		slots, err := jsonText(k.Slots)
		if err != nil {
			return err
		}
		if err := exec(ctx, tx, m.sql.insertKernel,
			k.KernelID.String(), sid, i, string(k.Role), string(domain.StatusPending), slots, "[]", pos,
		); err != nil {
			return err
		}
	}
	return nil
}

// applyScheduled records every kernel's agent and devices (the session's
// agents and device assignment are read from its kernels). The rows are
// held and written with the batch's other placements (Flush), many per
// statement.
func (m *ReadModel) applyScheduled(_ context.Context, tx projections.Tx, sid string, pos int64, e domain.SessionScheduled) error {
	kernels := make([][]any, 0, len(e.Kernels))
	for _, p := range e.Kernels {
		devices, err := jsonText(sortedShares(p.Devices))
		if err != nil {
			return err
		}
		kernels = append(kernels, []any{p.KernelID.String(), p.AgentID, devices, string(domain.StatusScheduled), e.Reason, pos})
	}
	session := []any{sid, string(domain.StatusScheduled), e.Reason, "[]", tx.Dialect().Time(e.At), pos}
	if !m.held.hold(tx, session, kernels) {
		// The session's placement is held already (a stream cannot say
		// so twice; written in order all the same).
		m.flush(tx)
		m.held.hold(tx, session, kernels)
	}
	return nil
}

// applyEnded ends a session that was cancelled or failed, and every kernel
// of it that had not ended.
func (m *ReadModel) applyEnded(ctx context.Context, tx projections.Tx, sid string, pos int64, status domain.SessionStatus, reason, message string, at any) error {
	if err := exec(ctx, tx, m.sql.endKernels, sid, string(status), reason, pos,
		string(domain.StatusTerminated), string(domain.StatusCancelled), string(domain.StatusError)); err != nil {
		return err
	}
	return exec(ctx, tx, m.sql.ended, sid, string(status), reason, message, at, pos)
}

// applyKernelDetail records a kernel's progress within its phase: the
// latest pull progress, or every app ready so far (each event carries the
// whole value, so a write replaces the column).
func (m *ReadModel) applyKernelDetail(ctx context.Context, tx projections.Tx, sid string, pos int64, ev domain.Event) error {
	var err error
	switch e := ev.(type) {
	case domain.KernelPullProgressed:
		var text string
		if text, err = jsonText(e.Progress); err == nil {
			err = exec(ctx, tx, m.sql.kernelPull, e.KernelID.String(), text, pos)
		}
	case domain.KernelAppsReady:
		var text string
		apps := e.Apps
		if apps == nil {
			apps = []domain.AppReady{}
		}
		if text, err = jsonText(apps); err == nil {
			err = exec(ctx, tx, m.sql.kernelAppsReady, e.KernelID.String(), text, pos)
		}
	}
	if err != nil {
		return err
	}
	return exec(ctx, tx, m.sql.touchSession, sid, pos)
}

// applyKernel records a kernel's progress or end.
func (m *ReadModel) applyKernel(ctx context.Context, tx projections.Tx, sid string, pos int64, ev domain.Event) error {
	var (
		id                       uuid.UUID
		status                   domain.SessionStatus
		reason                   string
		container, code, message any
		ports                    any
	)
	switch e := ev.(type) {
	case domain.KernelPreparing:
		id, status, reason = e.KernelID, domain.StatusPreparing, domain.ReasonKernelPreparing
	case domain.KernelPulling:
		id, status, reason = e.KernelID, domain.StatusPulling, domain.ReasonKernelPulling
	case domain.KernelPrepared:
		id, status, reason = e.KernelID, domain.StatusPrepared, domain.ReasonKernelPrepared
	case domain.KernelCreating:
		id, status, reason = e.KernelID, domain.StatusCreating, domain.ReasonKernelCreating
	case domain.KernelRunning:
		id, status, reason = e.KernelID, domain.StatusRunning, domain.ReasonKernelStarted
		container = e.ContainerID
		text, err := jsonText(nonNilPorts(e.ServicePorts))
		if err != nil {
			return err
		}
		ports = text
	case domain.KernelExited:
		id, status, reason = e.KernelID, domain.StatusTerminated, e.Reason
		code = int64(e.ExitCode)
	case domain.KernelTerminated:
		id, status, reason = e.KernelID, domain.StatusTerminated, e.Reason
	case domain.KernelErrored:
		id, status, reason = e.KernelID, domain.StatusError, e.Reason
		message = e.Message
	default:
		return fmt.Errorf("sessions: unexpected event %s", ev.EventType())
	}
	if err := exec(ctx, tx, m.sql.kernelStatus, id.String(), string(status), reason, container, code, message, pos, ports); err != nil {
		return err
	}
	return exec(ctx, tx, m.sql.touchSession, sid, pos)
}

// sessionIDFromStream returns the session id of a session stream
// ("session-<uuid>", domain.SessionStream).
func sessionIDFromStream(stream string) (string, error) {
	s, err := domain.ParseStreamOf(domain.StreamSession, stream)
	if err != nil {
		return "", fmt.Errorf("sessions: %w", err)
	}
	return s.ID, nil
}

// exec queues a write (see projections.Tx.Queue): its failure fails the
// batch, naming this event.
func exec(_ context.Context, tx projections.Tx, query string, args ...any) error {
	tx.Queue(query, args...)
	return nil
}

// jsonText encodes v for a JSON column (TEXT on SQLite, jsonb on
// PostgreSQL: both take the text).
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("sessions: encode %T: %w", v, err)
	}
	return string(b), nil
}

func nonNilPorts(p []domain.PublishedPort) []domain.PublishedPort {
	if p == nil {
		return []domain.PublishedPort{}
	}
	return p
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// sortedShares returns shares sorted by device id (never nil), the order
// the domain keeps them in.
func sortedShares(shares []domain.DeviceShare) []domain.DeviceShare {
	out := append([]domain.DeviceShare{}, shares...)
	sort.Slice(out, func(i, j int) bool { return out[i].DeviceID < out[j].DeviceID })
	return out
}

// applyUsed notes the latest use of each session a successful access
// record is about: one UPDATE per such record (most batches of reads are
// about no session and cost nothing).
func (m *ReadModel) applyUsed(ctx context.Context, tx projections.Tx, records []audit.Record) error {
	for _, r := range records {
		if r.EntityType != "session" || r.Outcome != audit.Success {
			continue
		}
		id, err := uuid.Parse(r.EntityID)
		if err != nil {
			continue
		}
		if err := exec(ctx, tx, m.sql.used, id.String(), tx.Dialect().Time(r.Time)); err != nil {
			return err
		}
	}
	return nil
}
