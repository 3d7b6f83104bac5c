package domain

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The "given events, when command, then events" harness shared by the
// session and agent tests.

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus n seconds.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

func recorded(events []Event) []RecordedEvent {
	out := make([]RecordedEvent, len(events))
	for i, e := range events {
		out[i] = RecordedEvent{Revision: int64(i), Event: e}
	}
	return out
}

// wire renders events as "type json" lines: the comparison is on what
// would be stored, and a failure shows a readable diff.
func wire(t *testing.T, events []Event) []string {
	t.Helper()
	out := make([]string, len(events))
	for i, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %s: %v", e.EventType(), err)
		}
		out[i] = e.EventType() + " " + string(b)
	}
	return out
}

// checkRoundTrip decodes every event from its JSON through the registry
// and checks it encodes the same again.
func checkRoundTrip(t *testing.T, events []Event) {
	t.Helper()
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %s: %v", e.EventType(), err)
		}
		back, err := DecodeEvent(e.EventType(), SchemaVersion, b)
		if err != nil {
			t.Fatalf("decode %s: %v", e.EventType(), err)
		}
		if got, want := wire(t, []Event{back}), wire(t, []Event{e}); got[0] != want[0] {
			t.Fatalf("round trip of %s:\n got %s\nwant %s", e.EventType(), got[0], want[0])
		}
	}
}

func checkEvents(t *testing.T, got, want []Event) {
	t.Helper()
	g, w := wire(t, got), wire(t, want)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("events:\n got:\n  %s\nwant:\n  %s", strings.Join(g, "\n  "), strings.Join(w, "\n  "))
	}
	checkRoundTrip(t, got)
}

// checkErr: want nil means success; otherwise a sentinel such as ErrConflict.
func checkErr(t *testing.T, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != nil && !errors.Is(err, want):
		t.Fatalf("error = %v, want kind %v", err, want)
	}
}

type sessionCase struct {
	name  string
	given []Event
	when  func(*Session) ([]Event, error)
	then  []Event
	err   error
	// check, if set, inspects the session folded from given + then.
	check func(t *testing.T, s *Session)
}

func runSessionCases(t *testing.T, cases []sessionCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := mustSession(t, c.given)
			got, err := c.when(s)
			checkErr(t, err, c.err)
			checkEvents(t, got, c.then)
			if !reflect.DeepEqual(s, mustSession(t, c.given)) {
				t.Fatal("the decision changed the session it was called on")
			}
			after := mustSession(t, append(append([]Event(nil), c.given...), got...))
			if want := int64(len(c.given) + len(got) - 1); after.Revision() != want {
				t.Fatalf("revision %d, want %d", after.Revision(), want)
			}
			if c.check != nil {
				c.check(t, after)
			}
		})
	}
}

func mustSession(t *testing.T, events []Event) *Session {
	t.Helper()
	s, err := RehydrateSession(recorded(events))
	if err != nil {
		t.Fatalf("RehydrateSession: %v", err)
	}
	return s
}

type agentCase struct {
	name  string
	given []Event
	when  func(*Agent) ([]Event, error)
	then  []Event
	err   error
	check func(t *testing.T, a *Agent)
}

func runAgentCases(t *testing.T, cases []agentCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := mustAgent(t, c.given)
			got, err := c.when(a)
			checkErr(t, err, c.err)
			checkEvents(t, got, c.then)
			if !reflect.DeepEqual(a, mustAgent(t, c.given)) {
				t.Fatal("the decision changed the agent it was called on")
			}
			after := mustAgent(t, append(append([]Event(nil), c.given...), got...))
			if c.check != nil {
				c.check(t, after)
			}
		})
	}
}

func mustAgent(t *testing.T, events []Event) *Agent {
	t.Helper()
	a, err := RehydrateAgent(recorded(events))
	if err != nil {
		t.Fatalf("RehydrateAgent: %v", err)
	}
	return a
}

// Fixtures.

var (
	sessionID = uuid.MustParse("0195a0c0-0000-7000-8000-000000000001")
	kernelA   = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000a1")
	kernelB   = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000b2")
	otherID   = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000ff")
)

func q(s string) Quantity {
	v, err := ParseQuantity(s, SlotCount)
	if err != nil {
		panic(err)
	}
	return v
}

func gib(n int64) Quantity { return Units(n << 30) }

// perKernel is what every fixture kernel asks for: 1 cpu, 1 GiB, half a GPU.
func perKernel() Slots {
	return Slots{SlotCPU: Units(1), SlotMem: gib(1), SlotCUDAShares: q("0.5")}
}

// requestedEvent is a batch session with the given kernels (the first is
// main), as RequestSession would record it.
func requestedEvent(typ SessionType, mode ClusterMode, kernels ...uuid.UUID) SessionRequested {
	specs := make([]KernelSpec, len(kernels))
	for i, k := range kernels {
		role := KernelSub
		if i == 0 {
			role = KernelMain
		}
		specs[i] = KernelSpec{KernelID: k, Role: role, Slots: perKernel()}
	}
	return SessionRequested{
		SessionID: sessionID, Name: "train-1", Owner: Owner{UserID: "u1", AccessKey: "AKIA1"},
		Domain: "default", Project: "ml", ResourceGroup: "gpu", Type: typ, Image: "cr.io/pytorch:2.4",
		Command: "python train.py", Priority: DefaultPriority, ClusterMode: mode, Kernels: specs, At: at(0),
	}
}

func batch() SessionRequested { return requestedEvent(SessionBatch, ClusterSingleNode, kernelA) }

func place(kernel uuid.UUID, agent, device string) KernelPlacement {
	return KernelPlacement{KernelID: kernel, AgentID: agent, Devices: []DeviceShare{{DeviceID: device, Amount: q("0.5")}}}
}

func scheduled(placements ...KernelPlacement) SessionScheduled {
	return SessionScheduled{Kernels: placements, Reason: ReasonScheduled, At: at(1)}
}

func running(kernel uuid.UUID, n int) KernelRunning {
	return KernelRunning{KernelID: kernel, ContainerID: "c-" + kernel.String()[len(kernel.String())-2:], At: at(n)}
}

func intp(n int) *int { return &n }
