package domain

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain/audit"
)

const mig = SlotName("cuda.device:1g.10gb-mig")

func agentSpec() AgentSpec {
	return AgentSpec{
		ID: "a1", Architecture: "x86_64",
		Capacity: Slots{SlotCPU: Units(8), SlotMem: gib(32), SlotCUDADevice: Units(2), SlotCUDAShares: Units(2), mig: Units(1)},
		Devices: []Device{
			{ID: "GPU-1", Kind: SlotCUDADevice, Model: "H100", Memory: 80 << 30},
			{ID: "GPU-0", Kind: SlotCUDADevice, Model: "H100", Memory: 80 << 30},
			{ID: "MIG-0", Kind: mig, Memory: 10 << 30},
		},
	}
}

// registeredEvent is what Register records for agentSpec (devices sorted).
func registeredEvent() AgentRegistered {
	s := agentSpec()
	s.Devices[0], s.Devices[1] = s.Devices[1], s.Devices[0]
	return AgentRegistered{AgentID: s.ID, Architecture: s.Architecture, Capacity: s.Capacity, Devices: s.Devices, At: at(0)}
}

func share(device, amount string) []DeviceShare {
	return []DeviceShare{{DeviceID: device, Amount: q(amount)}}
}

func allocated(kernel string, slots Slots, devices []DeviceShare, n int) AgentAllocated {
	return AgentAllocated{KernelID: kernelFor(kernel), SessionID: sessionID, Slots: slots, Devices: devices, At: at(n)}
}

func kernelFor(name string) uuid.UUID {
	switch name {
	case "A":
		return kernelA
	case "B":
		return kernelB
	}
	return otherID
}

func shares(cpu int64, amount string) Slots {
	return Slots{SlotCPU: Units(cpu), SlotMem: gib(1), SlotCUDAShares: q(amount)}
}

func TestAgentRegister(t *testing.T) {
	register := func(spec AgentSpec, n int) func(*Agent) ([]Event, error) {
		return func(a *Agent) ([]Event, error) { return a.Register(spec, at(n)) }
	}
	bigger := agentSpec()
	bigger.Capacity = bigger.Capacity.Clone()
	bigger.Capacity[SlotCPU] = Units(16)
	biggerEvent := registeredEvent()
	biggerEvent.Capacity, biggerEvent.At = bigger.Capacity, at(5)
	lost := AgentLost{Reason: "heartbeat-timeout", At: at(3)}

	runAgentCases(t, []agentCase{
		{
			name: "a new agent registers alive",
			when: register(agentSpec(), 0),
			then: []Event{registeredEvent()},
			check: func(t *testing.T, a *Agent) {
				if !a.Exists() || a.Status() != AgentStatusAlive || a.Free()[SlotCPU] != Units(8) || len(a.Devices()) != 3 || a.DeviceFree("GPU-0") != DeviceShareCapacity {
					t.Fatalf("%+v", a)
				}
			},
		},
		{
			name:  "registering again with the same spec changes nothing",
			given: []Event{registeredEvent()},
			when:  register(agentSpec(), 5),
		},
		{
			name:  "registering again with another capacity updates it",
			given: []Event{registeredEvent()},
			when:  register(bigger, 5),
			then:  []Event{biggerEvent},
			check: func(t *testing.T, a *Agent) {
				if a.Capacity()[SlotCPU] != Units(16) {
					t.Fatalf("capacity %v", a.Capacity())
				}
			},
		},
		{
			name:  "a lost agent rejoins",
			given: []Event{registeredEvent(), lost},
			when:  register(agentSpec(), 5),
			then:  []Event{AgentRejoined{At: at(5)}},
			check: func(t *testing.T, a *Agent) {
				if a.Status() != AgentStatusAlive {
					t.Fatalf("status %s", a.Status())
				}
			},
		},
		{
			name:  "a lost agent rejoins with a new capacity",
			given: []Event{registeredEvent(), lost},
			when:  register(bigger, 5),
			then:  []Event{AgentRejoined{At: at(5)}, biggerEvent},
		},
		{
			name:  "a capacity below what is allocated is recorded; nothing more fits until released",
			given: []Event{registeredEvent(), allocated("A", shares(6, "0.5"), share("GPU-0", "0.5"), 1)},
			when: func(a *Agent) ([]Event, error) {
				small := agentSpec()
				small.Capacity = small.Capacity.Clone()
				small.Capacity[SlotCPU] = Units(4)
				return a.Register(small, at(5))
			},
			then: func() []Event {
				e := registeredEvent()
				e.Capacity = e.Capacity.Clone()
				e.Capacity[SlotCPU], e.At = Units(4), at(5)
				return []Event{e}
			}(),
			check: func(t *testing.T, a *Agent) {
				if a.Free()[SlotCPU] != -Units(2) {
					t.Fatalf("free %v", a.Free())
				}
				if _, err := a.Allocate(kernelB, sessionID, shares(1, "0.5"), share("GPU-1", "0.5"), at(6)); !errors.Is(err, ErrQuotaExceeded) {
					t.Fatalf("allocate on an over-committed agent: %v", err)
				}
			},
		},
	})
}

func TestAgentSpecValidation(t *testing.T) {
	cases := map[string]struct {
		edit  func(*AgentSpec)
		field string
	}{
		"no id":           {func(s *AgentSpec) { s.ID = "" }, "id"},
		"id with space":   {func(s *AgentSpec) { s.ID = "a 1" }, "id"},
		"no architecture": {func(s *AgentSpec) { s.Architecture = "" }, "architecture"},
		"no cpu":          {func(s *AgentSpec) { delete(s.Capacity, SlotCPU) }, "capacity.cpu"},
		"no mem":          {func(s *AgentSpec) { s.Capacity[SlotMem] = 0 }, "capacity.mem"},
		"negative slot":   {func(s *AgentSpec) { s.Capacity[SlotCUDADevice] = -1 }, "capacity.cuda.device"},
		"unknown slot":    {func(s *AgentSpec) { s.Capacity["tpu"] = 1 }, "capacity.tpu"},
		"device twice":    {func(s *AgentSpec) { s.Devices = append(s.Devices, s.Devices[0]) }, "devices.id"},
		"device no id":    {func(s *AgentSpec) { s.Devices[0].ID = "" }, "devices.id"},
		"device kind":     {func(s *AgentSpec) { s.Devices[0].Kind = SlotCUDAShares }, "devices.kind"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			spec := agentSpec()
			spec.Capacity = spec.Capacity.Clone()
			c.edit(&spec)
			_, err := (&Agent{revision: -1}).Register(spec, at(0))
			if KindOf(err) != KindInvalid || !contains(invalidFields(err), c.field) {
				t.Fatalf("err %v, want invalid %s", err, c.field)
			}
		})
	}
}

func TestAgentAllocate(t *testing.T) {
	reg := registeredEvent()
	halfA := allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 1)
	alloc := func(kernel string, slots Slots, devices []DeviceShare) func(*Agent) ([]Event, error) {
		return func(a *Agent) ([]Event, error) {
			return a.Allocate(kernelFor(kernel), sessionID, slots, devices, at(2))
		}
	}
	runAgentCases(t, []agentCase{
		{
			name:  "an allocation that fits is recorded",
			given: []Event{reg},
			when:  alloc("A", shares(2, "0.5"), share("GPU-0", "0.5")),
			then:  []Event{allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 2)},
			check: func(t *testing.T, a *Agent) {
				if a.Occupied()[SlotCPU] != Units(2) || a.Free()[SlotCPU] != Units(6) || a.DeviceFree("GPU-0") != q("0.5") || a.DeviceFree("GPU-1") != Units(1) {
					t.Fatalf("occupied %v free %v", a.Occupied(), a.Free())
				}
				if ids := a.SessionIDs(); len(ids) != 1 || ids[0] != sessionID {
					t.Fatalf("sessions %v", ids)
				}
			},
		},
		{
			name:  "a second fraction fits beside the first on the same GPU",
			given: []Event{reg, halfA},
			when:  alloc("B", shares(1, "0.5"), share("GPU-0", "0.5")),
			then:  []Event{allocated("B", shares(1, "0.5"), share("GPU-0", "0.5"), 2)},
			check: func(t *testing.T, a *Agent) {
				if a.DeviceFree("GPU-0") != 0 {
					t.Fatalf("GPU-0 free %s", a.DeviceFree("GPU-0"))
				}
			},
		},
		{
			name:  "oversubscribing a GPU's shares is refused",
			given: []Event{reg, halfA},
			when:  alloc("B", shares(1, "0.6"), share("GPU-0", "0.6")),
			err:   ErrQuotaExceeded,
		},
		{
			name:  "oversubscribing cpu is refused",
			given: []Event{reg, halfA},
			when:  alloc("B", shares(7, "0.5"), share("GPU-1", "0.5")),
			err:   ErrQuotaExceeded,
		},
		{
			name:  "a slot the agent lacks is refused",
			given: []Event{reg},
			when:  alloc("A", Slots{SlotCPU: Units(1), SlotMem: gib(1), SlotCUDAMem: gib(1)}, nil),
			err:   ErrQuotaExceeded,
		},
		{
			name:  "a whole GPU takes the device's full share",
			given: []Event{reg, halfA},
			when:  alloc("B", Slots{SlotCPU: Units(1), SlotMem: gib(1), SlotCUDADevice: Units(1)}, share("GPU-0", "1")),
			err:   ErrQuotaExceeded,
		},
		{
			name:  "a MIG device serves its profile",
			given: []Event{reg},
			when:  alloc("A", Slots{SlotCPU: Units(1), SlotMem: gib(1), mig: Units(1)}, share("MIG-0", "1")),
			then:  []Event{allocated("A", Slots{SlotCPU: Units(1), SlotMem: gib(1), mig: Units(1)}, share("MIG-0", "1"), 2)},
		},
		{
			name:  "a MIG device does not serve shares",
			given: []Event{reg},
			when:  alloc("A", shares(1, "0.5"), share("MIG-0", "0.5")),
			err:   ErrInvalid,
		},
		{
			name:  "an unknown device is invalid",
			given: []Event{reg},
			when:  alloc("A", shares(1, "0.5"), share("GPU-9", "0.5")),
			err:   ErrInvalid,
		},
		{
			name:  "an identical re-allocation is idempotent",
			given: []Event{reg, halfA},
			when:  alloc("A", shares(2, "0.5"), share("GPU-0", "0.5")),
		},
		{
			name:  "a different allocation for an allocated kernel is a conflict",
			given: []Event{reg, halfA},
			when:  alloc("A", shares(2, "0.5"), share("GPU-1", "0.5")),
			err:   ErrConflict,
		},
		{
			name:  "a lost agent allocates nothing",
			given: []Event{reg, AgentLost{Reason: "heartbeat-timeout", At: at(1)}},
			when:  alloc("A", shares(1, "0.5"), share("GPU-0", "0.5")),
			err:   ErrConflict,
		},
		{
			name: "an agent that never registered is not found",
			when: alloc("A", shares(1, "0.5"), share("GPU-0", "0.5")),
			err:  ErrNotFound,
		},
		{
			name:  "kernels allocated together count against each other",
			given: []Event{reg},
			when: func(a *Agent) ([]Event, error) {
				return a.AllocateKernels([]AllocationRequest{
					{KernelID: kernelA, SessionID: sessionID, Slots: shares(1, "0.6"), Devices: share("GPU-0", "0.6")},
					{KernelID: kernelB, SessionID: sessionID, Slots: shares(1, "0.6"), Devices: share("GPU-0", "0.6")},
				}, at(2))
			},
			err: ErrQuotaExceeded,
		},
		{
			name:  "a released allocation frees its capacity",
			given: []Event{reg, halfA, AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonTaskFinished, At: at(2)}},
			when:  alloc("B", shares(8, "1"), share("GPU-0", "1")),
			then:  []Event{allocated("B", shares(8, "1"), share("GPU-0", "1"), 2)},
		},
	})
}

func TestAgentAllocateNamesWhatIsShort(t *testing.T) {
	a := mustAgent(t, []Event{registeredEvent(), allocated("A", shares(6, "0.5"), share("GPU-0", "0.5"), 1)})
	_, err := a.Allocate(kernelB, sessionID, shares(4, "0.75"), share("GPU-0", "0.75"), at(2))
	var short *InsufficientCapacityError
	if !errors.Is(err, ErrQuotaExceeded) || !errors.As(err, &short) {
		t.Fatalf("err %v", err)
	}
	if len(short.Slots) != 1 || short.Slots[0] != (SlotShortfall{Slot: SlotCPU, Requested: Units(4), Free: Units(2)}) {
		t.Fatalf("slots %+v", short.Slots)
	}
	if len(short.Devices) != 1 || short.Devices[0] != (DeviceShortfall{DeviceID: "GPU-0", Requested: q("0.75"), Free: q("0.5")}) {
		t.Fatalf("devices %+v", short.Devices)
	}
	t.Log(err)
}

func TestAgentRelease(t *testing.T) {
	halfA := allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 1)
	release := func(a *Agent) ([]Event, error) { return a.Release(kernelA, ReasonTaskFinished, at(3)) }
	runAgentCases(t, []agentCase{
		{
			name:  "releasing gives the capacity back",
			given: []Event{registeredEvent(), halfA},
			when:  release,
			then:  []Event{AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonTaskFinished, At: at(3)}},
			check: func(t *testing.T, a *Agent) {
				if !a.Occupied().IsZero() || a.DeviceFree("GPU-0") != DeviceShareCapacity || len(a.Allocations()) != 0 {
					t.Fatalf("occupied %v", a.Occupied())
				}
			},
		},
		{
			name:  "releasing twice is idempotent",
			given: []Event{registeredEvent(), halfA, AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonTaskFinished, At: at(2)}},
			when:  release,
		},
		{
			name:  "releasing what was never allocated is idempotent",
			given: []Event{registeredEvent()},
			when:  release,
		},
		{
			name: "an agent that never registered is not found",
			when: release,
			err:  ErrNotFound,
		},
	})
}

func TestAgentMarkLost(t *testing.T) {
	halfA := allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 1)
	markLost := func(a *Agent) ([]Event, error) { return a.MarkLost(ReasonAgentLost, at(4)) }
	runAgentCases(t, []agentCase{
		{
			name:  "a lost agent releases what it still holds",
			given: []Event{registeredEvent(), halfA},
			when:  markLost,
			then: []Event{
				AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonAgentLost, At: at(4)},
				AgentLost{Reason: ReasonAgentLost, At: at(4)},
			},
			check: func(t *testing.T, a *Agent) {
				if a.Status() != AgentStatusLost || !a.Occupied().IsZero() || !a.LostAt().Equal(at(4)) {
					t.Fatalf("%s %v", a.Status(), a.Occupied())
				}
			},
		},
		{
			name:  "marking a lost agent lost again changes nothing",
			given: []Event{registeredEvent(), AgentLost{Reason: ReasonAgentLost, At: at(2)}},
			when:  markLost,
		},
	})
}

func TestRehydrateAgentRefusesBrokenStreams(t *testing.T) {
	halfA := allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 1)
	for name, events := range map[string][]Event{
		"event before registered": {halfA},
		"allocated twice":         {registeredEvent(), halfA, halfA},
		"released without":        {registeredEvent(), AgentReleased{KernelID: kernelA, Reason: "x", At: at(1)}},
		"session event":           {registeredEvent(), batch()},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := RehydrateAgent(recorded(events)); err == nil || KindOf(err) != KindInternal {
				t.Fatalf("err = %v, want an internal error", err)
			}
		})
	}
}

// TestAgentWithManyMIGDevicesRoundTrips: a GPU split into seven MIG
// devices of one profile registers a capacity of 7 in that unique slot,
// and the event decodes back (it once did not, and the scheduler stopped).
func TestAgentWithManyMIGDevicesRoundTrips(t *testing.T) {
	slot := SlotName("cuda.device:1g.10gb-mig")
	spec := AgentSpec{ID: "a1", Architecture: "x86_64", Capacity: Slots{SlotCPU: Units(8), SlotMem: gib(64), slot: Units(7)}}
	for i := range 7 {
		spec.Devices = append(spec.Devices, Device{ID: fmt.Sprintf("MIG-%d", i), Kind: slot})
	}
	evs, err := (&Agent{revision: -1}).Register(spec, at(0))
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, evs)
}

// TestAgentFoldFollowsRehydrate: folding a stream one event at a time
// gives the agent RehydrateAgent gives, at the stream's revision (an
// annotation included); an event the agent cannot take, or one out of
// revision order, is refused and changes nothing.
func TestAgentFoldFollowsRehydrate(t *testing.T) {
	halfA := allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 1)
	note := AccessLogged{Record: audit.Record{Time: at(2), Action: "GET /v1/agents", Outcome: audit.Success, Status: 200}}
	stream := []Event{registeredEvent(), halfA, note, allocated("B", shares(1, "0.25"), share("GPU-1", "0.25"), 3),
		AgentReleased{KernelID: kernelA, Reason: "x", At: at(4)}, AgentLost{Reason: ReasonAgentLost, At: at(5)}}
	want, err := RehydrateAgent(recorded(stream))
	if err != nil {
		t.Fatal(err)
	}
	a := NewAgent()
	for _, re := range recorded(stream) {
		if err := a.Fold(re); err != nil {
			t.Fatalf("fold revision %d: %v", re.Revision, err)
		}
	}
	if a.Revision() != int64(len(stream)-1) {
		t.Errorf("revision = %d, want %d", a.Revision(), len(stream)-1)
	}
	if a.Status() != want.Status() || !reflect.DeepEqual(a.Capacity(), want.Capacity()) || !reflect.DeepEqual(a.Allocations(), want.Allocations()) ||
		!reflect.DeepEqual(a.Devices(), want.Devices()) || !a.LostAt().Equal(want.LostAt()) || !a.RegisteredAt().Equal(want.RegisteredAt()) {
		t.Errorf("folded %+v, rehydrated %+v", a, want)
	}

	for name, tc := range map[string]struct {
		given []Event
		next  RecordedEvent
	}{
		"event before registered": {nil, RecordedEvent{Revision: 0, Event: halfA}},
		"allocated twice":         {[]Event{registeredEvent(), halfA}, RecordedEvent{Revision: 2, Event: halfA}},
		"session event":           {[]Event{registeredEvent()}, RecordedEvent{Revision: 1, Event: batch()}},
		"revision gap":            {[]Event{registeredEvent()}, RecordedEvent{Revision: 2, Event: halfA}},
		"no payload":              {[]Event{registeredEvent()}, RecordedEvent{Revision: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			a := NewAgent()
			for _, re := range recorded(tc.given) {
				if err := a.Fold(re); err != nil {
					t.Fatal(err)
				}
			}
			before := a.clone()
			if err := a.Fold(tc.next); err == nil || KindOf(err) != KindInternal {
				t.Fatalf("err = %v, want an internal error", err)
			}
			if !reflect.DeepEqual(a, before) {
				t.Errorf("the refused event changed the agent: %+v, was %+v", a, before)
			}
		})
	}
}

// TestAgentSealKey: the key messages are sealed to is kept, a new one is
// recorded (the agent made a new one: its messages must go to it), and a
// malformed one is refused.
func TestAgentSealKey(t *testing.T) {
	const k1 = "XAL54S5FE6SRPONXRNVE4ZDAOHOT44GFIY2ZW33DHLR2U3H2HJSXXRKY"
	const k2 = "XBL54S5FE6SRPONXRNVE4ZDAOHOT44GFIY2ZW33DHLR2U3H2HJSXXRKY"
	a := mustRehydrateAgent(t)
	spec := agentSpec()
	spec.SealKey = k1
	evs, err := a.Register(spec, at(0))
	if err != nil || len(evs) != 1 || evs[0].(AgentRegistered).SealKey != k1 {
		t.Fatalf("first registration: %v %v", evs, err)
	}
	a = mustRehydrateAgent(t, evs...)
	if a.SealKey() != k1 {
		t.Fatalf("seal key %q", a.SealKey())
	}
	if evs, err := a.Register(spec, at(1)); err != nil || len(evs) != 0 {
		t.Fatalf("same key again: %v %v", evs, err)
	}
	spec.SealKey = k2
	if evs, err := a.Register(spec, at(1)); err != nil || len(evs) != 1 || evs[0].(AgentRegistered).SealKey != k2 {
		t.Fatalf("new key: %v %v", evs, err)
	}
	for _, bad := range []string{"x", "U" + k1[1:], k1[:55], k1[:55] + "1"} {
		spec.SealKey = bad
		if _, err := a.Register(spec, at(2)); !errors.Is(err, ErrInvalid) {
			t.Errorf("seal key %q: %v, want invalid", bad, err)
		}
	}
}

func mustRehydrateAgent(t *testing.T, evs ...Event) *Agent {
	t.Helper()
	recs := make([]RecordedEvent, len(evs))
	for i, ev := range evs {
		recs[i] = RecordedEvent{Event: ev, Revision: int64(i)}
	}
	a, err := RehydrateAgent(recs)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
