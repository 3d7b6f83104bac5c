package sessions_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/sessions"
)

func TestSessionLifecycle(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		if _, err := e.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 8)}); err != nil {
			t.Fatal(err)
		}
		res := e.request(t, projectiontest.SessionSpec("alice", "0.5", 2))
		id := res.SessionID
		step := func(name string, pos uint64) sessions.Session {
			t.Helper()
			got := e.get(t, pos, id)
			t.Run(name, func(t *testing.T) { checkMirrors(t, got, e.aggregate(t, id)) })
			if got.Position != pos && !strings.HasPrefix(name, "report") {
				t.Errorf("%s: position %d, want %d", name, got.Position, pos)
			}
			return got
		}

		s := step("requested", res.Position)
		if s.Status != domain.StatusPending || s.RequestedSlots[domain.SlotCUDAShares] != projectiontest.Qty("1") ||
			s.RequestedSlots[domain.SlotCPU] != domain.Units(2) || s.Kernels[0].Role != domain.KernelMain || s.Kernels[1].Role != domain.KernelSub {
			t.Fatalf("requested session %+v", s)
		}

		out, err := e.h.UpdatePendingSession.Handle(ctx, projectiontest.MD, commands.UpdatePendingSession{
			SessionID: id, Reason: domain.ReasonNoAvailableInstances, Details: []string{"node-1: busy"}, Tries: 3})
		if err != nil {
			t.Fatal(err)
		}
		if s := step("pending-updated", out.Position); s.StatusReason != domain.ReasonNoAvailableInstances || s.PendingTries != 3 {
			t.Fatalf("pending session %+v", s)
		}

		placements := []domain.KernelPlacement{
			{KernelID: res.KernelIDs[0], AgentID: "node-1", Devices: []domain.DeviceShare{{DeviceID: "GPU-0", Amount: projectiontest.Qty("0.5")}}},
			{KernelID: res.KernelIDs[1], AgentID: "node-1", Devices: []domain.DeviceShare{{DeviceID: "GPU-1", Amount: projectiontest.Qty("0.5")}}},
		}
		out, err = e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{SessionID: id, Kernels: placements})
		if err != nil {
			t.Fatal(err)
		}
		s = step("scheduled", out.Position)
		if s.Status != domain.StatusScheduled || len(s.Devices) != 2 || s.PendingDetails != nil || s.ScheduledAt == nil {
			t.Fatalf("scheduled session %+v", s)
		}

		report := func(k int, phase domain.KernelPhase) commands.ReportKernelStatus {
			return commands.ReportKernelStatus{SessionID: id, KernelID: res.KernelIDs[k], AgentID: "node-1", Phase: phase}
		}
		for k := range 2 {
			step("report preparing", e.report(t, report(k, domain.PhasePreparing)))
			if k == 0 {
				step("report pulling", e.report(t, report(k, domain.PhasePulling)))
				progress := report(k, domain.PhasePulling)
				progress.Pull = &domain.PullProgress{LayersDone: 1, LayersTotal: 2, BytesDone: 300, BytesTotal: 1000}
				if s := step("report pull progress", e.report(t, progress)); s.Kernels[0].PullProgress == nil || s.Kernels[0].PullProgress.BytesDone != 300 {
					t.Fatalf("pulling kernel %+v", s.Kernels[0])
				}
			}
			running := report(k, domain.PhaseRunning)
			running.ContainerID = fmt.Sprintf("c0ffee-%d", k)
			if k == 0 {
				running.ServicePorts = []domain.PublishedPort{
					{Name: "jupyter", Protocol: "http", ContainerPort: 8888, HostPort: 30000},
					{Name: "port-9000", Protocol: "preopen", ContainerPort: 9000, HostPort: 30001},
				}
			}
			step("report running", e.report(t, running))
			if k == 0 {
				running.ReadyApps = []string{"port-9000"}
				if s := step("report app ready", e.report(t, running)); len(s.Kernels[0].AppsReady) != 1 || s.Kernels[0].AppsReady[0].Name != "port-9000" {
					t.Fatalf("ready kernel %+v", s.Kernels[0])
				}
			}
		}
		s = e.get(t, 0, id)
		if s.Status != domain.StatusRunning || s.StartedAt == nil || s.Kernels[1].ContainerID != "c0ffee-1" ||
			len(s.Kernels[0].ServicePorts) != 2 || s.Kernels[0].ServicePorts[1].HostPort != 30001 || len(s.Kernels[1].ServicePorts) != 0 {
			t.Fatalf("running session %+v", s)
		}
		exited := report(0, domain.PhaseExited)
		exited.ExitCode = 3
		step("report exited main", e.report(t, exited))
		step("report removed sub", e.report(t, report(1, domain.PhaseRemoved)))
		s = e.get(t, 0, id)
		if s.Status != domain.StatusTerminated || s.Result != domain.ResultFailure || s.ExitCode == nil || *s.ExitCode != 3 || s.TerminatedAt == nil {
			t.Fatalf("terminated session %+v", s)
		}

		// The JSON the HTTP layer sends.
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"status":"TERMINATED"`, `"exit_code":3`, `"agent_ids":["node-1"]`,
			`"requested_slots":{"cpu":"2","cuda.shares":"1","mem":"2147483648"}`,
			`"devices":[{"device_id":"GPU-0","amount":"0.5"}]`, `"owner":{"user_id":"alice","access_key":"AK-alice"}`,
			`"service_ports":[{"name":"jupyter","protocol":"http","container_port":8888,"host_port":30000},{"name":"port-9000","protocol":"preopen","container_port":9000,"host_port":30001}]`,
			`"service_ports":[]`, `"apps_ready":[{"name":"port-9000","at":"`, `"apps_ready":[]`,
			`"pull_progress":{"layers_done":1,"layers_total":2,"bytes_done":300,"bytes_total":1000}`} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("JSON %s lacks %s", raw, want)
			}
		}
	})
}

func TestCancelledAndErroredSessions(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		if _, err := e.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 8)}); err != nil {
			t.Fatal(err)
		}
		pending := e.request(t, projectiontest.SessionSpec("alice", "", 1))
		out, err := e.h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: pending.SessionID, Reason: domain.ReasonPendingTimeout})
		if err != nil {
			t.Fatal(err)
		}
		s := e.get(t, out.Position, pending.SessionID)
		checkMirrors(t, s, e.aggregate(t, pending.SessionID))
		if s.Status != domain.StatusCancelled || s.Kernels[0].Status != domain.StatusCancelled || s.TerminatedAt == nil {
			t.Fatalf("cancelled session %+v", s)
		}

		running := e.request(t, projectiontest.SessionSpec("alice", "1", 1))
		if _, err := e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{
			SessionID: running.SessionID, Kernels: projectiontest.Place("node-1", running.KernelIDs, "GPU-0", "1")}); err != nil {
			t.Fatal(err)
		}
		out, err = e.h.MarkAgentLost.Handle(ctx, projectiontest.MD, commands.MarkAgentLost{AgentID: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		s = e.get(t, out.Position, running.SessionID)
		checkMirrors(t, s, e.aggregate(t, running.SessionID))
		if s.Status != domain.StatusError || s.StatusReason != domain.ReasonAgentLost || s.StatusMessage != "agent node-1 lost" ||
			s.Kernels[0].Status != domain.StatusError {
			t.Fatalf("errored session %+v", s)
		}
	})
}

// TestDisconnectedSessions: a session whose agent is silent shows
// DISCONNECTED (agent-disconnected), can be listed as such, and shows
// RUNNING (agent-reconnected) when the agent is back.
func TestDisconnectedSessions(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		if _, err := e.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 8)}); err != nil {
			t.Fatal(err)
		}
		res := e.request(t, projectiontest.SessionSpec("alice", "1", 1))
		if _, err := e.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{
			SessionID: res.SessionID, Kernels: projectiontest.Place("node-1", res.KernelIDs, "GPU-0", "1")}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.h.ReportKernelStatus.Handle(ctx, projectiontest.MD, commands.ReportKernelStatus{
			SessionID: res.SessionID, KernelID: res.KernelIDs[0], AgentID: "node-1", Phase: domain.PhaseRunning, ContainerID: "c1"}); err != nil {
			t.Fatal(err)
		}
		out, err := e.h.DisconnectAgent.Handle(ctx, projectiontest.MD, commands.DisconnectAgent{AgentID: "node-1"})
		if err != nil {
			t.Fatal(err)
		}
		s := e.get(t, out.Position, res.SessionID)
		checkMirrors(t, s, e.aggregate(t, res.SessionID))
		if s.Status != domain.StatusDisconnected || s.StatusReason != domain.ReasonAgentDisconnected || s.Kernels[0].Status != domain.StatusRunning {
			t.Fatalf("disconnected session %+v", s)
		}
		page, err := e.rm.ListSessions(ctx, sessions.Filter{Statuses: []domain.SessionStatus{domain.StatusDisconnected}})
		if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != res.SessionID {
			t.Fatalf("disconnected sessions %+v, %v", page.Sessions, err)
		}

		out, err = e.h.ReconnectAgent.Handle(ctx, projectiontest.MD, commands.ReconnectAgent{AgentID: "node-1", Running: res.KernelIDs})
		if err != nil {
			t.Fatal(err)
		}
		s = e.get(t, out.Position, res.SessionID)
		checkMirrors(t, s, e.aggregate(t, res.SessionID))
		if s.Status != domain.StatusRunning || s.StatusReason != domain.ReasonAgentReconnected || s.Kernels[0].ContainerID != "c1" {
			t.Fatalf("reconnected session %+v", s)
		}
	})
}

func TestGetSessionNotFound(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		_, err := e.rm.GetSession(ctx, uuid.New())
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("GetSession(unknown) = %v, want KindNotFound", err)
		}
	})
}

func TestListSessions(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		var alice []uuid.UUID // in request order
		var last uint64
		for i := range 5 {
			res := e.request(t, projectiontest.SessionSpec("alice", "", 1+i%2))
			alice = append(alice, res.SessionID)
			last = res.Position
			if i%2 == 0 {
				out, err := e.h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: res.SessionID})
				if err != nil {
					t.Fatal(err)
				}
				last = out.Position
			}
			last = max(last, e.request(t, projectiontest.SessionSpec("bob", "", 1)).Position)
		}
		e.r.WaitFor(t, last)

		// Pages of two, newest first, until the cursor runs out.
		var got []uuid.UUID
		cursor := ""
		for pages := 0; ; pages++ {
			page, err := e.rm.ListSessions(ctx, sessions.Filter{Owner: "alice", Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range page.Sessions {
				if s.Owner.UserID != "alice" || len(s.Kernels) != s.ClusterSize {
					t.Fatalf("listed %+v", s)
				}
				checkMirrors(t, s, e.aggregate(t, s.ID))
				got = append(got, s.ID)
			}
			if page.NextCursor == "" {
				if pages != 2 {
					t.Errorf("%d pages, want 3", pages+1)
				}
				break
			}
			cursor = page.NextCursor
		}
		want := []uuid.UUID{alice[4], alice[3], alice[2], alice[1], alice[0]}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("alice's sessions\n got %v\nwant %v", got, want)
		}

		page, err := e.rm.ListSessions(ctx, sessions.Filter{Owner: "alice", Statuses: []domain.SessionStatus{domain.StatusPending}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Sessions) != 2 || page.Sessions[0].ID != alice[3] || page.Sessions[1].ID != alice[1] || page.NextCursor != "" {
			t.Fatalf("alice's pending sessions: %+v", page)
		}
		page, err = e.rm.ListSessions(ctx, sessions.Filter{AccessKey: "AK-bob", Statuses: []domain.SessionStatus{domain.StatusPending, domain.StatusCancelled}})
		if err != nil || len(page.Sessions) != 5 {
			t.Fatalf("bob's sessions: %d, %v", len(page.Sessions), err)
		}
		page, err = e.rm.ListSessions(ctx, sessions.Filter{})
		if err != nil || len(page.Sessions) != 10 {
			t.Fatalf("all sessions: %d, %v", len(page.Sessions), err)
		}
		// Search: a session's id, or a name's start (ignoring case; % and _
		// match only themselves).
		page, err = e.rm.ListSessions(ctx, sessions.Filter{Search: alice[2].String()})
		if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != alice[2] {
			t.Fatalf("search by id: %+v, %v", page.Sessions, err)
		}
		for search, n := range map[string]int{"TRA": 10, "train": 10, "tr%": 0, "t_ain": 0, "x": 0} {
			page, err = e.rm.ListSessions(ctx, sessions.Filter{Search: search})
			if err != nil || len(page.Sessions) != n {
				t.Fatalf("search %q: %d sessions, want %d (%v)", search, len(page.Sessions), n, err)
			}
		}
		page, err = e.rm.ListSessions(ctx, sessions.Filter{Owner: "nobody"})
		if err != nil || page.Sessions == nil || len(page.Sessions) != 0 {
			t.Fatalf("nobody's sessions: %#v, %v", page.Sessions, err)
		}

		for _, f := range []sessions.Filter{{Limit: -1}, {Limit: sessions.MaxListLimit + 1}, {Cursor: "x"}, {Cursor: "0"},
			{Statuses: []domain.SessionStatus{"running"}}} {
			if _, err := e.rm.ListSessions(ctx, f); !errors.Is(err, domain.ErrInvalid) {
				t.Errorf("ListSessions(%+v) = %v, want KindInvalid", f, err)
			}
		}
	})
}

// Sixteen writers request sessions (and cancel some) while the projector
// runs: the read model ends with exactly the right rows.
func TestConcurrentWriters(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{BatchSize: 16})
		const writers, each = 16, 4
		var (
			mu   sync.Mutex
			last uint64
			ids  = map[uuid.UUID]string{} // session -> owner
			reqs = map[uuid.UUID]uint64{} // session -> position of its request
		)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner := fmt.Sprintf("user-%02d", w)
				for i := range each {
					res, err := e.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: projectiontest.SessionSpec(owner, "", 1+i%2)})
					if err != nil {
						t.Error(err)
						return
					}
					pos := res.Position
					if i%2 == 1 {
						out, err := e.h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: res.SessionID})
						if err != nil {
							t.Error(err)
							return
						}
						pos = out.Position
					}
					mu.Lock()
					ids[res.SessionID] = owner
					reqs[res.SessionID] = res.Position
					last = max(last, pos)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		e.r.WaitFor(t, last)

		page, err := e.rm.ListSessions(ctx, sessions.Filter{Limit: sessions.MaxListLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Sessions) != writers*each {
			t.Fatalf("%d sessions listed, want %d", len(page.Sessions), writers*each)
		}
		seen := map[uuid.UUID]bool{}
		for i, s := range page.Sessions {
			if seen[s.ID] || ids[s.ID] != s.Owner.UserID {
				t.Fatalf("session %s listed twice or with owner %q (want %q)", s.ID, s.Owner.UserID, ids[s.ID])
			}
			seen[s.ID] = true
			if i > 0 && reqs[s.ID] >= reqs[page.Sessions[i-1].ID] {
				t.Fatalf("sessions not newest first at %d", i)
			}
			checkMirrors(t, s, e.aggregate(t, s.ID))
		}
		for w := range writers {
			page, err := e.rm.ListSessions(ctx, sessions.Filter{Owner: fmt.Sprintf("user-%02d", w), Statuses: []domain.SessionStatus{domain.StatusCancelled}})
			if err != nil || len(page.Sessions) != each/2 {
				t.Fatalf("user-%02d has %d cancelled sessions (%v), want %d", w, len(page.Sessions), err, each/2)
			}
		}
	})
}

// LastUsedAt is the latest successful access record about the session:
// an earlier record or a refused one does not move it.
func TestLastUsedAt(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		e := newEnv(t, b, projections.Options{})
		res := e.request(t, projectiontest.SessionSpec("alice", "0.1", 1))
		if s := e.get(t, res.Position, res.SessionID); s.LastUsedAt != nil {
			t.Fatalf("last used %v before any use", s.LastUsedAt)
		}
		t1 := projectiontest.T0.Add(time.Hour)
		e.used(t, res.SessionID, t1, audit.Success)
		e.used(t, res.SessionID, t1.Add(-time.Minute), audit.Success)
		pos := e.used(t, res.SessionID, t1.Add(time.Minute), audit.Denied)
		if s := e.get(t, pos, res.SessionID); s.LastUsedAt == nil || !s.LastUsedAt.Equal(t1) {
			t.Fatalf("last used %v, want %v", s.LastUsedAt, t1)
		}
	})
}
