package commands_test

import (
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

func TestRequestSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.requestSession(t, sessionSpec("0.5"))
	stream := domain.SessionStream(res.SessionID).String()

	evs := e.read(t, stream)
	if len(evs) != 1 || evs[0].Type != domain.TypeSessionRequested || evs[0].Version != 1 || evs[0].Revision != 0 {
		t.Fatalf("stream %+v", evs)
	}
	if res.Position != evs[0].Position || res.Position == 0 {
		t.Fatalf("position %d, event at %d", res.Position, evs[0].Position)
	}
	if evs[0].Metadata != e.md.Stored() {
		t.Fatalf("metadata %+v, want %+v", evs[0].Metadata, e.md)
	}
	if evs[0].ID.Version() != 7 {
		t.Fatalf("event id %s is not a UUIDv7", evs[0].ID)
	}
	s := e.session(t, res.SessionID)
	if s.Status() != domain.StatusPending || len(res.KernelIDs) != 1 || s.Kernels()[0].ID() != res.KernelIDs[0] || !s.RequestedAt().Equal(t0) {
		t.Fatalf("session %s kernels %v requested %v", s.Status(), res.KernelIDs, s.RequestedAt())
	}
}

func TestRequestSessionCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := sessionSpec("")
	spec.ClusterSize, spec.ClusterMode = 3, domain.ClusterMultiNode
	res := e.requestSession(t, spec)
	if len(res.KernelIDs) != 3 || res.KernelIDs[0] == res.KernelIDs[1] {
		t.Fatalf("kernels %v", res.KernelIDs)
	}
	if k := e.session(t, res.SessionID).Kernels(); k[0].Role() != domain.KernelMain || k[2].Role() != domain.KernelSub {
		t.Fatalf("roles %s %s", k[0].Role(), k[2].Role())
	}
}

func TestRequestSessionInvalidWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := sessionSpec("0.5")
	spec.Resources[domain.SlotCUDADevice] = domain.Units(1)
	spec.ClusterSize = domain.MaxClusterSize + 1
	_, err := e.handlers.RequestSession.Handle(ctx, e.md, commands.RequestSession{Spec: spec})
	wantKind(t, err, domain.KindInvalid)
	if all, rerr := e.store.ReadAll(ctx, 0, 10); rerr != nil || len(all) != 0 {
		t.Fatalf("something was written: %v %v", all, rerr)
	}
}
