package readapi

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

const opSessionTimeline = "session.timeline"

// Page sizes of GET /v1/sessions/{id}/timeline.
const (
	defaultTimelineLimit = 100
	maxTimelineLimit     = 1000
)

// timelineEntry is one thing that happened to a session: an event of its
// stream, in words. Kind is the event type ("session.status-changed",
// "kernel.running", ...); "access.logged" is the audit record of an API
// request that changed the session (who did what, and how it ended).
// Actor is who caused it: the requester of an API call, a system actor
// (the scheduler) for the rest. Details are the event's facts, chosen per
// kind (never the session's environment, which may hold secrets).
type timelineEntry struct {
	At       time.Time      `json:"at"`
	Position uint64         `json:"position"`
	Revision int64          `json:"revision"`
	Kind     string         `json:"kind"`
	Summary  string         `json:"summary"`
	Actor    string         `json:"actor,omitempty"`
	Details  map[string]any `json:"details"`
}

// timelinePage is the answer of GET /v1/sessions/{id}/timeline.
type timelinePage struct {
	Items []timelineEntry `json:"items"`
	// NextCursor reads the next page; null on the last one.
	NextCursor *string `json:"next_cursor"`
}

// sessionTimeline handles GET /v1/sessions/{id}/timeline?limit=&cursor=:
// the session's events in log order (its stream, read from the event
// store), each summarized, with the audit records of the API requests
// that changed it. It sees what GET /v1/sessions/{id} sees.
func (a *api) sessionTimeline(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	id, err := ParseSessionID(c, opSessionTimeline)
	if err != nil {
		return err
	}
	limit, err := QueryInt(c, opSessionTimeline, "limit", defaultTimelineLimit, 1, maxTimelineLimit)
	if err != nil {
		return err
	}
	var from int64
	if raw := c.Query("cursor"); raw != "" {
		if from, err = strconv.ParseInt(raw, 10, 64); err != nil || from < 1 {
			return domain.Invalid(opSessionTimeline, "cursor", "not a cursor this API returned")
		}
	}
	if err := a.WaitForPosition(c, opSessionTimeline); err != nil {
		return err
	}
	if _, err := a.VisibleSession(c, who, opSessionTimeline, id); err != nil {
		return err
	}
	recs, err := a.Events.ReadStream(c.UserContext(), domain.SessionStream(id).String(),
		eventstore.ReadStreamOptions{From: from, Limit: limit + 1})
	switch {
	case errors.Is(err, eventstore.ErrStreamNotFound):
		recs = nil
	case err != nil:
		return &domain.Error{Op: opSessionTimeline, Kind: domain.KindUnavailable, Err: err}
	}
	out := timelinePage{Items: make([]timelineEntry, 0, min(len(recs), limit))}
	if len(recs) > limit {
		recs = recs[:limit]
		next := strconv.FormatInt(recs[limit-1].Revision+1, 10)
		out.NextCursor = &next
	}
	for _, rec := range recs {
		e, err := timelineOf(rec)
		if err != nil {
			return &domain.Error{Op: opSessionTimeline, Kind: domain.KindInternal, Err: err}
		}
		out.Items = append(out.Items, e)
	}
	return c.JSON(out)
}

// timelineOf summarizes one event of a session's stream.
func timelineOf(rec eventstore.RecordedEvent) (timelineEntry, error) {
	ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
	if err != nil {
		return timelineEntry{}, fmt.Errorf("event %d (%s): %w", rec.Position, rec.Type, err)
	}
	e := timelineEntry{At: rec.RecordedAt, Position: rec.Position, Revision: rec.Revision, Kind: rec.Type,
		Actor: rec.Metadata.Actor, Details: map[string]any{}}
	with := func(at time.Time, summary string, details ...any) {
		if !at.IsZero() {
			e.At = at
		}
		e.Summary = summary
		for i := 0; i+1 < len(details); i += 2 {
			if v := details[i+1]; v != "" && v != nil {
				e.Details[details[i].(string)] = v
			}
		}
	}
	switch v := ev.(type) {
	case domain.SessionRequested:
		with(v.At, fmt.Sprintf("requested by %s: %s, %d kernel(s) in resource group %s", v.Owner.AccessKey, v.Image, len(v.Kernels), v.ResourceGroup),
			"image", v.Image, "type", string(v.Type), "resource_group", v.ResourceGroup, "cluster_mode", string(v.ClusterMode),
			"cluster_size", len(v.Kernels), "priority", v.Priority, "requested_slots", requestedOf(v))
	case domain.SessionPendingUpdated:
		with(v.At, fmt.Sprintf("still pending (%s): %s", v.Reason, strings.Join(v.Details, "; ")),
			"reason", v.Reason, "checks", nonNil(v.Details), "tries", v.Tries)
	case domain.SessionScheduled:
		agents := []string{}
		for _, k := range v.Kernels {
			if !slices.Contains(agents, k.AgentID) {
				agents = append(agents, k.AgentID)
			}
		}
		with(v.At, "scheduled on "+strings.Join(agents, ", "), "reason", v.Reason, "agents", agents, "kernels", v.Kernels)
	case domain.SessionStatusChanged:
		with(v.At, statusSummary(v.Status, v.Reason), "status", string(v.Status), "reason", v.Reason)
	case domain.SessionTerminating:
		with(v.At, statusSummary(domain.StatusTerminating, v.Reason), "status", string(domain.StatusTerminating), "reason", v.Reason)
	case domain.SessionTerminated:
		s := statusSummary(domain.StatusTerminated, v.Reason)
		if v.ExitCode != nil {
			s += fmt.Sprintf(", exit code %d", *v.ExitCode)
		}
		with(v.At, s, "status", string(domain.StatusTerminated), "reason", v.Reason, "result", string(v.Result))
		if v.ExitCode != nil {
			e.Details["exit_code"] = *v.ExitCode
		}
	case domain.SessionCancelled:
		with(v.At, statusSummary(domain.StatusCancelled, v.Reason), "status", string(domain.StatusCancelled), "reason", v.Reason)
	case domain.SessionErrored:
		s := statusSummary(domain.StatusError, v.Reason)
		if v.Message != "" {
			s += ": " + v.Message
		}
		with(v.At, s, "status", string(domain.StatusError), "reason", v.Reason, "message", v.Message)
	case domain.SessionDisconnected:
		with(v.At, fmt.Sprintf("DISCONNECTED: agent %s went silent (%s)", v.AgentID, v.Reason),
			"status", string(domain.StatusDisconnected), "agent_id", v.AgentID, "reason", v.Reason)
	case domain.SessionReconnected:
		with(v.At, fmt.Sprintf("agent %s is back (%s)", v.AgentID, v.Reason), "status", string(v.Status), "agent_id", v.AgentID, "reason", v.Reason)
	case domain.KernelPreparing:
		with(v.At, "kernel "+v.KernelID.String()+" preparing", "kernel_id", v.KernelID)
	case domain.KernelPulling:
		with(v.At, "kernel "+v.KernelID.String()+" pulling its image", "kernel_id", v.KernelID)
	case domain.KernelPrepared:
		with(v.At, "kernel "+v.KernelID.String()+" prepared", "kernel_id", v.KernelID)
	case domain.KernelCreating:
		with(v.At, "kernel "+v.KernelID.String()+" creating its container", "kernel_id", v.KernelID)
	case domain.KernelRunning:
		with(v.At, "kernel "+v.KernelID.String()+" running", "kernel_id", v.KernelID, "container_id", v.ContainerID)
	case domain.KernelExited:
		with(v.At, fmt.Sprintf("kernel %s exited with code %d (%s)", v.KernelID, v.ExitCode, v.Reason),
			"kernel_id", v.KernelID, "exit_code", v.ExitCode, "reason", v.Reason)
	case domain.KernelTerminated:
		with(v.At, fmt.Sprintf("kernel %s terminated (%s)", v.KernelID, v.Reason), "kernel_id", v.KernelID, "reason", v.Reason)
	case domain.KernelErrored:
		with(v.At, fmt.Sprintf("kernel %s failed (%s) %s", v.KernelID, v.Reason, v.Message), "kernel_id", v.KernelID, "reason", v.Reason, "message", v.Message)
	case domain.KernelPullProgressed:
		p := v.Progress
		with(v.At, fmt.Sprintf("kernel %s pulled %d%% of its image (%d of %d layers)", v.KernelID, p.Percent(), p.LayersDone, p.LayersTotal),
			"kernel_id", v.KernelID, "layers_done", p.LayersDone, "layers_total", p.LayersTotal, "bytes_done", p.BytesDone, "bytes_total", p.BytesTotal)
	case domain.KernelAppsReady:
		names := make([]string, len(v.Apps))
		for i, a := range v.Apps {
			names[i] = a.Name
		}
		with(v.At, fmt.Sprintf("kernel %s apps ready: %s", v.KernelID, strings.Join(names, ", ")), "kernel_id", v.KernelID, "apps", names)
	case domain.AccessLogged:
		r := v.Record
		who := cmp.Or(r.UserID, r.AccessKey, "an unauthenticated caller")
		e.Actor = cmp.Or(r.UserID, r.AccessKey)
		with(r.Time, fmt.Sprintf("API: %s by %s: %s (%d)", r.Action, who, r.Outcome, r.Status),
			"action", r.Action, "outcome", string(r.Outcome), "status", r.Status, "user_id", r.UserID,
			"access_key", r.AccessKey, "acting_as", r.ActingAs, "request_id", r.RequestID)
	default:
		with(time.Time{}, rec.Type)
	}
	return e, nil
}

func statusSummary(s domain.SessionStatus, reason string) string {
	if reason == "" {
		return string(s)
	}
	return fmt.Sprintf("%s (%s)", s, reason)
}

// requestedOf is the sum of the request's kernels' slots.
func requestedOf(e domain.SessionRequested) domain.Slots {
	total := domain.Slots{}
	for _, k := range e.Kernels {
		total = total.Add(k.Slots)
	}
	return total
}
