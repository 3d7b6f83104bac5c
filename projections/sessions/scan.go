package sessions

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// scanSessions reads rows of sessionColumns and kernelColumns, ordered by
// session then kernel index, into sessions (one per run of rows of the
// same session), and closes rows.
func scanSessions(rows projections.Rows) (_ []Session, err error) {
	defer func() {
		if cerr := rows.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	var out []Session
	for rows.Next() {
		var r sessionRow
		if err := rows.Scan(r.dest()...); err != nil {
			return nil, fmt.Errorf("sessions: scan: %w", err)
		}
		s, k, err := r.decode()
		if err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].ID != s.ID {
			out = append(out, s)
		}
		out[len(out)-1].Kernels = append(out[len(out)-1].Kernels, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: read: %w", err)
	}
	for i := range out {
		out[i].placement()
	}
	return out, nil
}

// placement sets the session's agents and device assignment from its
// kernels' (in kernel order, each kernel's shares by device id).
func (s *Session) placement() {
	s.AgentIDs, s.Devices = []string{}, []DeviceAssignment{}
	for _, k := range s.Kernels {
		if k.AgentID != "" && !slices.Contains(s.AgentIDs, k.AgentID) {
			s.AgentIDs = append(s.AgentIDs, k.AgentID)
		}
		for _, d := range k.Devices {
			s.Devices = append(s.Devices, DeviceAssignment{KernelID: k.ID, AgentID: k.AgentID, DeviceID: d.DeviceID, Amount: d.Amount.String()})
		}
	}
	slices.Sort(s.AgentIDs)
}

// sessionRow is one row of a session query, as scanned.
type sessionRow struct {
	id, name, ownerUser, ownerKey, domainName, project, group, typ, image, command string
	priority, clusterSize, pendingTries                                            int
	clusterMode, status, reason, message, result                                   string
	pendingDetails, requested                                                      string
	exitCode                                                                       sql.NullInt64
	createdAt, scheduledAt, startedAt, terminatedAt, lastUsedAt                    projections.NullTime
	createdPos, lastPos                                                            int64

	kID, kRole, kAgent, kContainer, kStatus, kReason, kMessage, kRequested, kDevices, kPorts, kPull, kReady string
	kIndex                                                                                                  int
	kExitCode                                                                                               sql.NullInt64
	kPos                                                                                                    int64
}

func (r *sessionRow) dest() []any {
	return []any{
		&r.id, &r.name, &r.ownerUser, &r.ownerKey, &r.domainName, &r.project,
		&r.group, &r.typ, &r.image, &r.command, &r.priority, &r.clusterMode, &r.clusterSize,
		&r.status, &r.reason, &r.message, &r.pendingDetails, &r.pendingTries,
		&r.requested, &r.result, &r.exitCode,
		&r.createdAt, &r.scheduledAt, &r.startedAt, &r.terminatedAt, &r.createdPos, &r.lastPos,
		&r.lastUsedAt,
		&r.kID, &r.kIndex, &r.kRole, &r.kAgent, &r.kContainer, &r.kStatus, &r.kReason,
		&r.kMessage, &r.kExitCode, &r.kRequested, &r.kDevices, &r.kPos, &r.kPorts, &r.kPull, &r.kReady,
	}
}

func (r *sessionRow) decode() (Session, Kernel, error) {
	sid, err := uuid.Parse(r.id)
	if err != nil {
		return Session{}, Kernel{}, fmt.Errorf("sessions: session id %q: %w", r.id, err)
	}
	kid, err := uuid.Parse(r.kID)
	if err != nil {
		return Session{}, Kernel{}, fmt.Errorf("sessions: kernel id %q: %w", r.kID, err)
	}
	s := Session{
		ID:              sid,
		Name:            r.name,
		Owner:           domain.Owner{UserID: r.ownerUser, AccessKey: r.ownerKey},
		Domain:          r.domainName,
		Project:         r.project,
		ResourceGroup:   r.group,
		Type:            domain.SessionType(r.typ),
		Image:           r.image,
		Command:         r.command,
		Priority:        r.priority,
		ClusterMode:     domain.ClusterMode(r.clusterMode),
		ClusterSize:     r.clusterSize,
		Status:          domain.SessionStatus(r.status),
		StatusReason:    r.reason,
		StatusMessage:   r.message,
		PendingTries:    r.pendingTries,
		Result:          domain.SessionResult(r.result),
		ExitCode:        intPtr(r.exitCode),
		CreatedAt:       r.createdAt.Time,
		ScheduledAt:     r.scheduledAt.Ptr(),
		StartedAt:       r.startedAt.Ptr(),
		TerminatedAt:    r.terminatedAt.Ptr(),
		LastUsedAt:      r.lastUsedAt.Ptr(),
		Position:        uint64(r.lastPos),
		createdPosition: uint64(r.createdPos),
	}
	k := Kernel{
		ID:            kid,
		Index:         r.kIndex,
		Role:          domain.KernelRole(r.kRole),
		AgentID:       r.kAgent,
		ContainerID:   r.kContainer,
		Status:        domain.SessionStatus(r.kStatus),
		StatusReason:  r.kReason,
		StatusMessage: r.kMessage,
		ExitCode:      intPtr(r.kExitCode),
		Position:      uint64(r.kPos),
	}
	for _, f := range []struct {
		name string
		text string
		dst  any
	}{
		{"pending_details", r.pendingDetails, &s.PendingDetails},
		{"requested_slots", r.requested, &s.RequestedSlots},
		{"kernels.requested_slots", r.kRequested, &k.RequestedSlots},
		{"kernels.devices", r.kDevices, &k.Devices},
		{"kernels.service_ports", r.kPorts, &k.ServicePorts},
		{"kernels.pull_progress", r.kPull, &k.PullProgress},
		{"kernels.apps_ready", r.kReady, &k.AppsReady},
	} {
		if err := json.Unmarshal([]byte(f.text), f.dst); err != nil {
			return Session{}, Kernel{}, fmt.Errorf("sessions: session %s: column %s: %w", sid, f.name, err)
		}
	}
	if len(s.PendingDetails) == 0 {
		s.PendingDetails = nil
	}
	return s, k, nil
}

func intPtr(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}
