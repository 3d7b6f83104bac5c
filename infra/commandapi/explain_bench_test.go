package commandapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// BenchmarkExplain measures the explanations over a queue of 2,000
// PENDING sessions of four owners and 100 agents with two GPUs each
// (every GPU half taken): one op is one GET of the queue's first page
// (50 items) and one GET of a session's explanation, through the app.
func BenchmarkExplain(b *testing.B) {
	e := newEnv(b, envOptions{})
	ctx := context.Background()
	for i := range 100 {
		agent := fmt.Sprintf("node-%03d", i)
		_, err := e.handlers.RegisterAgent.Handle(ctx, testMD, commands.RegisterAgent{Spec: domain.AgentSpec{
			ID: agent, Architecture: "x86_64",
			Capacity: domain.Slots{domain.SlotCPU: domain.Units(64), domain.SlotMem: domain.Units(256 << 30),
				domain.SlotCUDADevice: domain.Units(2), domain.SlotCUDAShares: domain.Units(2)},
			Devices: []domain.Device{{ID: agent + "-GPU-0", Kind: domain.SlotCUDADevice}, {ID: agent + "-GPU-1", Kind: domain.SlotCUDADevice}},
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	owners := []string{aliceToken, bobToken, "dadmin", "carol"}
	var last uint64
	var first string
	for i := range 2000 {
		u := e.users[owners[i%len(owners)]]
		dom, project := "default", "default"
		if owners[i%len(owners)] == "carol" {
			dom, project = "other", "ml"
		}
		res, err := e.handlers.RequestSession.Handle(ctx, testMD, commands.RequestSession{Spec: domain.SessionSpec{
			Name: "bench", Owner: domain.Owner{UserID: u.ID.String(), AccessKey: u.AccessKey}, Domain: dom, Project: project,
			ResourceGroup: "default", Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "true", ClusterSize: 1,
			Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30), domain.SlotCUDAShares: domain.Units(1)},
		}})
		if err != nil {
			b.Fatal(err)
		}
		last = res.Position
		if first == "" {
			first = res.SessionID.String()
		}
	}
	e.wait(b, last)
	b.ResetTimer()
	for range b.N {
		if r := e.do(b, "GET", "/v1/scheduler/queue?limit=50", adminToken, ""); r.status != http.StatusOK {
			b.Fatalf("queue: %d %s", r.status, r.body)
		}
		if r := e.do(b, "GET", "/v1/sessions/"+first+"/pending", aliceToken, ""); r.status != http.StatusOK {
			b.Fatalf("pending: %d %s", r.status, r.body)
		}
	}
}
