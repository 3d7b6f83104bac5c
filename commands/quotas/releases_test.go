package quotas_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/commands/scheduler"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/infra/managertest"
	"github.com/google/uuid"
)

var bg = context.Background()

// book folds the whole log, as a restarted scheduler would.
func book(e *managertest.Env) *quotas.Book {
	e.T.Helper()
	b := quotas.NewBook()
	var after uint64
	for {
		evs, err := e.Store.ReadAll(bg, after, 1000)
		if err != nil {
			e.T.Fatal(err)
		}
		if len(evs) == 0 {
			return b
		}
		for _, ev := range evs {
			if err := b.ApplyRecorded(ev); err != nil {
				e.T.Fatal(err)
			}
			after = ev.Position
		}
	}
}

func occupancy(e *managertest.Env, ak string) quota.Occupancy {
	return book(e).Ledger.Snapshot().Of(quota.ScopeKeypair, ak)
}

func cpuMem(cpu, memGiB int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: domain.Units(memGiB << 30)}
}

func spec(ak string, size int, mode domain.ClusterMode, each domain.Slots) domain.SessionSpec {
	return domain.SessionSpec{
		Name: "nb", Owner: domain.Owner{UserID: "u-" + ak, AccessKey: ak},
		Domain: "default", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionInteractive, Image: "cr.io/jupyter:1", ClusterSize: size, ClusterMode: mode, Resources: each,
	}
}

// TestEveryEndReleasesItsSlots drives sessions through the real command
// handlers and the scheduler to every way a session can end, and checks
// after each that the occupancy folded from the log — what the scheduler
// and the quota checks see — and the agents' own allocations are back to
// nothing, while they held exactly the request before.
func TestEveryEndReleasesItsSlots(t *testing.T) {
	t.Parallel()
	const hour = time.Hour
	each := cpuMem(3, 2)
	scheduled := func(e *managertest.Env, size int, mode domain.ClusterMode) uuid.UUID {
		id := e.Request(spec("AK1", size, mode, each)).SessionID
		e.AwaitStatus(id, domain.StatusScheduled)
		want := domain.Slots{}
		for range size {
			want = want.Add(each)
		}
		if o := occupancy(e, "AK1"); o.Concurrent != 1 || !o.Occupied.FitsIn(want) || !want.FitsIn(o.Occupied) || o.Pending != 0 {
			e.T.Fatalf("while scheduled: %+v, want %v occupied by one concurrent session", o, want)
		}
		return id
	}
	waiting := func(e *managertest.Env) uuid.UUID {
		id := e.Request(spec("AK1", 1, domain.ClusterSingleNode, cpuMem(64, 1))).SessionID
		e.Await("the big session waits with a reason", func() bool { return e.Session(id).StatusReason() != "" })
		if o := occupancy(e, "AK1"); o.Pending != 1 || o.PendingSlots[domain.SlotCPU] != domain.Units(64) || !o.Occupied.IsZero() {
			e.T.Fatalf("while pending: %+v", o)
		}
		return id
	}
	report := func(e *managertest.Env, id uuid.UUID, phase domain.KernelPhase, reason string) {
		for _, k := range e.Session(id).Kernels() {
			if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
				SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: phase, ContainerID: "c-" + k.ID().String()[:8], Reason: reason,
			}); err != nil {
				e.T.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name         string
		end          func(e *managertest.Env) uuid.UUID
		status       domain.SessionStatus
		reason       string
		cancelledRun bool
	}{
		{
			name: "ERROR: a kernel failed",
			end: func(e *managertest.Env) uuid.UUID {
				id := scheduled(e, 2, domain.ClusterSingleNode)
				k := e.Session(id).Kernels()[1]
				if _, err := e.Handlers.ReportKernelStatus.Handle(bg, e.MD, commands.ReportKernelStatus{
					SessionID: id, KernelID: k.ID(), AgentID: k.AgentID(), Phase: domain.PhaseFailed, Reason: domain.ReasonFailedToStart, Message: "no image",
				}); err != nil {
					e.T.Fatal(err)
				}
				return id
			},
			status: domain.StatusError, reason: domain.ReasonFailedToStart,
		},
		{
			name: "ERROR: the start deadline passed",
			end: func(e *managertest.Env) uuid.UUID {
				id := scheduled(e, 2, domain.ClusterSingleNode)
				e.Clock.Advance(2 * hour)
				return id
			},
			status: domain.StatusError, reason: domain.ReasonFailedToStart,
		},
		{
			name: "ERROR: the agent was lost (a multi-node session, one kernel on each agent)",
			end: func(e *managertest.Env) uuid.UUID {
				id := scheduled(e, 2, domain.ClusterMultiNode)
				if ks := e.Session(id).Kernels(); ks[0].AgentID() == ks[1].AgentID() {
					e.T.Fatalf("both kernels on %s", ks[0].AgentID())
				}
				if _, err := e.Handlers.MarkAgentLost.Handle(bg, e.MD, commands.MarkAgentLost{AgentID: "a2"}); err != nil {
					e.T.Fatal(err)
				}
				return id
			},
			status: domain.StatusError, reason: domain.ReasonAgentLost,
		},
		{
			name: "CANCELLED: the pending deadline passed",
			end: func(e *managertest.Env) uuid.UUID {
				id := waiting(e)
				e.Clock.Advance(2 * hour)
				return id
			},
			status: domain.StatusCancelled, reason: domain.ReasonPendingTimeout,
		},
		{
			name: "CANCELLED: its user ended it while it waited",
			end: func(e *managertest.Env) uuid.UUID {
				id := waiting(e)
				if _, err := e.Handlers.TerminateSession.Handle(bg, e.MD, commands.TerminateSession{SessionID: id}); err != nil {
					e.T.Fatal(err)
				}
				return id
			},
			status: domain.StatusCancelled, reason: domain.ReasonUserRequested,
		},
		{
			name: "TERMINATED: forced after the terminating deadline (the agent never confirmed)",
			end: func(e *managertest.Env) uuid.UUID {
				id := scheduled(e, 2, domain.ClusterSingleNode)
				report(e, id, domain.PhaseRunning, "")
				if _, err := e.Handlers.TerminateSession.Handle(bg, e.MD, commands.TerminateSession{SessionID: id}); err != nil {
					e.T.Fatal(err)
				}
				e.AwaitStatus(id, domain.StatusTerminating)
				if o := occupancy(e, "AK1"); o.Concurrent != 1 || o.Occupied.IsZero() {
					e.T.Fatalf("a TERMINATING session holds its slots: %+v", o)
				}
				e.Clock.Advance(2 * hour)
				return id
			},
			status: domain.StatusTerminated, reason: domain.ReasonForceTerminated,
		},
		{
			name: "TERMINATED: its user ended it and the agent removed the containers",
			end: func(e *managertest.Env) uuid.UUID {
				id := scheduled(e, 2, domain.ClusterSingleNode)
				report(e, id, domain.PhaseRunning, "")
				if _, err := e.Handlers.TerminateSession.Handle(bg, e.MD, commands.TerminateSession{SessionID: id}); err != nil {
					e.T.Fatal(err)
				}
				report(e, id, domain.PhaseRemoved, "")
				return id
			},
			status: domain.StatusTerminated, reason: domain.ReasonUserRequested,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := managertest.New(t)
			for _, id := range []string{"a1", "a2"} {
				e.RegisterAgent(domain.AgentSpec{ID: id, Architecture: "x86_64", Capacity: cpuMem(8, 16)})
			}
			s, err := scheduler.New(scheduler.Config{
				Interval: 20 * time.Millisecond, PendingTimeout: hour, StartTimeout: hour, TerminatingTimeout: hour,
				Clock: e.Clock.Now, Logger: e.Log,
			}, e.Store, scheduler.CommandsOf(e.Handlers))
			if err != nil {
				t.Fatal(err)
			}
			managertest.Go(t, "scheduler", s.Run)

			id := tc.end(e)
			got := e.AwaitStatus(id, tc.status)
			if got.StatusReason() != tc.reason {
				t.Fatalf("ended %s with %s, want %s", got.Status(), got.StatusReason(), tc.reason)
			}
			e.Await("the slots are released", func() bool {
				return occupancy(e, "AK1").IsZero() && e.Agent("a1").Occupied().IsZero() && e.Agent("a2").Occupied().IsZero()
			})
			if n := book(e).Ledger.LiveAllocations(); n != 0 {
				t.Fatalf("%d allocations still live", n)
			}
		})
	}
}
