package domain

import (
	"testing"
)

func TestAgentDisconnect(t *testing.T) {
	halfA := allocated("A", shares(2, "0.5"), share("GPU-0", "0.5"), 1)
	disconnected := AgentDisconnected{Reason: ReasonAgentDisconnected, At: at(4)}
	disconnect := func(a *Agent) ([]Event, error) { return a.Disconnect(ReasonAgentDisconnected, at(4)) }
	runAgentCases(t, []agentCase{
		{
			name:  "a silent agent is disconnected and keeps its allocations",
			given: []Event{registeredEvent(), halfA},
			when:  disconnect,
			then:  []Event{disconnected},
			check: func(t *testing.T, a *Agent) {
				if a.Status() != AgentStatusDisconnected || a.Occupied()[SlotCPU] != Units(2) || !a.DisconnectedAt().Equal(at(4)) {
					t.Fatalf("%s %v %v", a.Status(), a.Occupied(), a.DisconnectedAt())
				}
			},
		},
		{
			name:  "disconnecting again changes nothing",
			given: []Event{registeredEvent(), disconnected},
			when:  disconnect,
		},
		{
			name:  "a lost agent is not disconnected",
			given: []Event{registeredEvent(), AgentLost{Reason: ReasonAgentLost, At: at(2)}},
			when:  disconnect,
		},
		{
			name: "an agent that never registered is not found",
			when: disconnect,
			err:  ErrNotFound,
		},
		{
			name:  "a reason is required",
			given: []Event{registeredEvent()},
			when:  func(a *Agent) ([]Event, error) { return a.Disconnect("", at(4)) },
			err:   ErrInvalid,
		},
		{
			name:  "a disconnected agent takes no new allocation",
			given: []Event{registeredEvent(), disconnected},
			when: func(a *Agent) ([]Event, error) {
				return a.Allocate(kernelB, sessionID, shares(1, "0"), nil, at(5))
			},
			err: ErrConflict,
		},
		{
			name:  "a heartbeat reconnects a disconnected agent, allocations intact",
			given: []Event{registeredEvent(), halfA, disconnected},
			when:  func(a *Agent) ([]Event, error) { return a.Reconnect(at(6)) },
			then:  []Event{AgentReconnected{At: at(6)}},
			check: func(t *testing.T, a *Agent) {
				if a.Status() != AgentStatusAlive || len(a.Allocations()) != 1 {
					t.Fatalf("%s %v", a.Status(), a.Allocations())
				}
			},
		},
		{
			name:  "reconnecting an alive agent changes nothing",
			given: []Event{registeredEvent()},
			when:  func(a *Agent) ([]Event, error) { return a.Reconnect(at(6)) },
		},
		{
			name:  "a lost agent cannot reconnect: it must register",
			given: []Event{registeredEvent(), AgentLost{Reason: ReasonAgentLost, At: at(2)}},
			when:  func(a *Agent) ([]Event, error) { return a.Reconnect(at(6)) },
			err:   ErrConflict,
		},
		{
			name:  "registering reconnects a disconnected agent",
			given: []Event{registeredEvent(), halfA, disconnected},
			when:  func(a *Agent) ([]Event, error) { return a.Register(agentSpec(), at(6)) },
			then:  []Event{AgentReconnected{At: at(6)}},
		},
		{
			name:  "a disconnected agent given up on releases everything",
			given: []Event{registeredEvent(), halfA, disconnected},
			when:  func(a *Agent) ([]Event, error) { return a.MarkLost(ReasonAgentLost, at(9)) },
			then: []Event{
				AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonAgentLost, At: at(9)},
				AgentLost{Reason: ReasonAgentLost, At: at(9)},
			},
		},
	})
}
