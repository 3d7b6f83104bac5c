package domain

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// TestEventWireNames pins the wire names: they are stored forever, so a
// rename is a breaking change this test makes visible.
func TestEventWireNames(t *testing.T) {
	want := []string{
		"agent.allocated", "agent.lost", "agent.registered", "agent.rejoined", "agent.released",
		"kernel.creating", "kernel.errored", "kernel.exited", "kernel.prepared", "kernel.preparing",
		"kernel.pulling", "kernel.running", "kernel.terminated",
		"session.cancelled", "session.errored", "session.pending-updated", "session.requested",
		"session.scheduled", "session.status-changed", "session.terminated", "session.terminating",
		"domain.activated", "domain.created", "domain.deactivated", "domain.modified",
		"project.activated", "project.created", "project.deactivated", "project.member-added",
		"project.member-removed", "project.modified",
		"user.created", "user.creation-abandoned", "user.email-reserved", "user.main-keypair-set",
		"user.modified", "user.password-changed",
		"keypair.activated", "keypair.deactivated", "keypair.issued", "keypair.modified", "keypair.secret-rotated",
		"keypair-policy.created", "keypair-policy.modified", "user-policy.created", "user-policy.modified",
		"project-policy.created", "project-policy.modified",
		"resource-group.access-granted", "resource-group.access-revoked", "resource-group.created", "resource-group.modified",
		"image.forgotten", "image.modified", "image.registered",
	}
	slices.Sort(want)
	if got := EventTypes(); !slices.Equal(got, want) {
		t.Fatalf("event types:\n got %v\nwant %v", got, want)
	}
}

// TestEventRegistryRoundTrip decodes one populated payload of every type
// from JSON and back.
func TestEventRegistryRoundTrip(t *testing.T) {
	events := []Event{
		batch(),
		SessionPendingUpdated{Reason: ReasonNoAvailableInstances, Details: []string{"x"}, Tries: 2, At: at(1)},
		scheduled(place(kernelA, "a1", "GPU-0")),
		SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(2)},
		SessionTerminating{Reason: ReasonUserRequested, At: at(3)},
		SessionTerminated{Reason: ReasonTaskFailed, Result: ResultFailure, ExitCode: intp(3), At: at(4)},
		SessionCancelled{Reason: ReasonPendingTimeout, At: at(5)},
		SessionErrored{Reason: ReasonAgentLost, Message: "m", At: at(6)},
		KernelPreparing{KernelID: kernelA, At: at(1)},
		KernelPulling{KernelID: kernelA, At: at(1)},
		KernelPrepared{KernelID: kernelA, At: at(1)},
		KernelCreating{KernelID: kernelA, At: at(1)},
		running(kernelA, 1),
		KernelExited{KernelID: kernelA, ExitCode: 1, Reason: ReasonTaskFailed, At: at(1)},
		KernelTerminated{KernelID: kernelA, Reason: ReasonForceTerminated, At: at(1)},
		KernelErrored{KernelID: kernelA, Reason: ReasonFailedToStart, Message: "m", At: at(1)},
		registeredEvent(),
		allocated("A", shares(1, "0.25"), share("GPU-0", "0.25"), 1),
		AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonTaskFinished, At: at(1)},
		AgentLost{Reason: ReasonAgentLost, At: at(1)},
		AgentRejoined{At: at(1)},
	}
	events = append(events, tenancyEvents()...)
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.EventType()] = true
	}
	for _, name := range EventTypes() {
		if !seen[name] {
			t.Errorf("no round-trip case for %s", name)
		}
	}
	checkRoundTrip(t, events)
}

func TestDecodeEventWireFormat(t *testing.T) {
	data := `{"kernel_id":"0195a0c0-0000-7000-8000-0000000000a1","session_id":"0195a0c0-0000-7000-8000-000000000001",` +
		`"slots":{"cpu":"1.5","mem":"1073741824","cuda.shares":"0.25"},"devices":[{"device_id":"GPU-0","amount":"0.25"}],` +
		`"at":"2025-03-01T12:00:01Z","added_by_a_newer_writer":true}`
	e, err := DecodeEvent(TypeAgentAllocated, 1, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	got := e.(AgentAllocated)
	if got.KernelID != kernelA || got.Slots[SlotCPU] != q("1.5") || got.Slots[SlotMem] != gib(1) ||
		len(got.Devices) != 1 || got.Devices[0].Amount != q("0.25") || !got.At.Equal(at(1)) {
		t.Fatalf("%+v", got)
	}
	b, _ := json.Marshal(got.Devices[0])
	if string(b) != `{"device_id":"GPU-0","amount":"0.25"}` {
		t.Fatalf("device share JSON %s", b)
	}
}

func TestDecodeEventErrors(t *testing.T) {
	cases := map[string]struct {
		typ     string
		version int
		data    string
	}{
		"unknown type":   {"session.exploded", 1, `{}`},
		"future version": {TypeSessionCancelled, 2, `{}`},
		"not JSON":       {TypeSessionCancelled, 1, `{`},
		"wrong shape":    {TypeSessionCancelled, 1, `{"reason":7}`},
		"bad slots":      {TypeAgentAllocated, 1, `{"slots":{"cpu":"-1"}}`},
		"bad amount":     {TypeAgentAllocated, 1, `{"devices":[{"device_id":"x","amount":"lots"}]}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeEvent(c.typ, c.version, []byte(c.data)); err == nil || KindOf(err) != KindInternal {
				t.Fatalf("err = %v, want an internal error", err)
			}
		})
	}
	if e, err := DecodeEvent(TypeSessionCancelled, 0, []byte(`{"reason":"x","at":"2025-03-01T12:00:00Z"}`)); err != nil ||
		!e.(SessionCancelled).At.Equal(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("version 0 reads as 1: %v %v", e, err)
	}
}
