package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

func TestRegisterAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stream := domain.AgentStream("a1").String()
	out, err := e.handlers.RegisterAgent.Handle(ctx, e.md, commands.RegisterAgent{Spec: agentSpec("a1", 8)})
	if err != nil || out.Position != e.lastPosition(t, stream) {
		t.Fatalf("%v %d", err, out.Position)
	}

	// The same announcement again: nothing appended, same position.
	again, err := e.handlers.RegisterAgent.Handle(ctx, e.md, commands.RegisterAgent{Spec: agentSpec("a1", 8)})
	if err != nil || again.Position != out.Position || len(e.read(t, stream)) != 1 {
		t.Fatalf("re-registering: %v %d", err, again.Position)
	}

	// A new capacity is recorded, allocations are kept.
	res := e.requestSession(t, sessionSpec(""))
	e.schedule(t, res, "a1", "", "")
	e.registerAgent(t, agentSpec("a1", 16))
	a := e.agent(t, "a1")
	if a.Capacity()[domain.SlotCPU] != domain.Units(16) || len(a.Allocations()) != 1 || a.Free()[domain.SlotCPU] != domain.Units(15) {
		t.Fatalf("capacity %v allocations %d", a.Capacity(), len(a.Allocations()))
	}
	wantTypes(t, e.types(t, stream), domain.TypeAgentRegistered, domain.TypeAgentAllocated, domain.TypeAgentRegistered)
}

func TestRegisterAgentInvalid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := agentSpec("a1", 8)
	spec.Architecture = ""
	delete(spec.Capacity, domain.SlotMem)
	_, err := e.handlers.RegisterAgent.Handle(ctx, e.md, commands.RegisterAgent{Spec: spec})
	wantKind(t, err, domain.KindInvalid)
	if len(e.read(t, domain.AgentStream("a1").String())) != 0 {
		t.Fatal("an invalid registration was written")
	}
}
