package commandapi_test

import (
	"fmt"
	"net/http"
	"testing"
)

func TestListAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.registerAgent(t, "node-2")
	e.registerAgent(t, "node-1")
	c := e.create(t, aliceToken, `{"image":"localhost/busybox:latest","resources":{"cpu":2,"mem":"1g","cuda.shares":"0.25"}}`)
	pos := e.schedule(t, c, "node-1", "0.25")

	type agent struct {
		ID       string            `json:"id"`
		Status   string            `json:"status"`
		Capacity map[string]string `json:"capacity"`
		Occupied map[string]string `json:"occupied"`
		Free     map[string]string `json:"free"`
		Devices  []struct {
			ID       string `json:"id"`
			Kind     string `json:"kind"`
			Model    string `json:"model"`
			Occupied string `json:"occupied"`
		} `json:"devices"`
		Allocations      int               `json:"allocations"`
		LargestFreeBlock map[string]string `json:"largest_free_block"`
		Slots            []struct {
			Slot             string `json:"slot"`
			Capacity         string `json:"capacity"`
			Free             string `json:"free"`
			LargestFreeBlock string `json:"largest_free_block"`
		} `json:"slots"`
	}
	list := func(token, query string) []agent {
		t.Helper()
		r := e.do(t, "GET", fmt.Sprintf("/v1/agents?wait_for_position=%d&%s", pos, query), token, "")
		if r.status != http.StatusOK {
			t.Fatalf("agents: %d %s", r.status, r.body)
		}
		var out struct {
			Items []agent `json:"items"`
		}
		r.decode(t, &out)
		return out.Items
	}
	got := list(aliceToken, "")
	if len(got) != 2 || got[0].ID != "node-1" || got[1].ID != "node-2" {
		t.Fatalf("agents %+v", got)
	}
	n1 := got[0]
	if n1.Status != "alive" || n1.Capacity["cpu"] != "8" || n1.Occupied["cpu"] != "2" || n1.Free["cpu"] != "6" || n1.Allocations != 1 {
		t.Fatalf("node-1 %+v", n1)
	}
	if len(n1.Devices) != 2 || n1.Devices[0].ID != "GPU-0" || n1.Devices[0].Occupied != "0.25" || n1.Devices[1].Occupied != "0" {
		t.Fatalf("node-1 devices %+v", n1.Devices)
	}
	// The largest single-kernel request that fits now: 1 whole GPU left
	// (GPU-1), 1 share on one device (GPU-1 again), 6 CPUs.
	if b := n1.LargestFreeBlock; b["cuda.device"] != "1" || b["cuda.shares"] != "1" || b["cpu"] != "6" || b["mem"] != fmt.Sprint(63<<30) {
		t.Fatalf("node-1 largest free block %+v", b)
	}
	if len(n1.Slots) != 4 || n1.Slots[0].Slot != "cpu" || n1.Slots[0].Capacity != "8" || n1.Slots[0].Free != "6" || n1.Slots[0].LargestFreeBlock != "6" ||
		n1.Slots[2].Slot != "cuda.shares" || n1.Slots[2].Free != "1.75" || n1.Slots[2].LargestFreeBlock != "1" {
		t.Fatalf("node-1 slots %+v", n1.Slots)
	}
	if lost := list(adminToken, "status=lost"); len(lost) != 0 {
		t.Fatalf("lost agents %+v", lost)
	}
	r := e.do(t, "GET", "/v1/agents?status=sleeping", adminToken, "")
	if p := r.problem(t); r.status != http.StatusBadRequest || p.Field != "status" {
		t.Fatalf("bad status: %d %s", r.status, r.body)
	}
}

// TestMarkAgentLost: a superadmin gives an agent up at once: its session
// goes to ERROR (agent-lost) and the agent is listed lost. Nobody else
// may; an unknown agent is not found.
func TestMarkAgentLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.registerAgent(t, "node-1")
	c := e.create(t, aliceToken, `{"image":"localhost/busybox:latest","resources":{"cpu":1,"mem":"1g"}}`)
	e.schedule(t, c, "node-1", "")

	for _, token := range []string{aliceToken, monitorToken} {
		if r := e.do(t, "POST", "/v1/agents/node-1/lost", token, ""); r.status != http.StatusForbidden {
			t.Fatalf("%s: %d %s", token, r.status, r.body)
		}
	}
	if r := e.do(t, "POST", "/v1/agents/nobody/lost", adminToken, ""); r.status != http.StatusNotFound {
		t.Fatalf("unknown agent: %d %s", r.status, r.body)
	}
	r := e.do(t, "POST", "/v1/agents/node-1/lost", adminToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("mark lost: %d %s", r.status, r.body)
	}
	var w struct {
		Position uint64 `json:"position"`
	}
	r.decode(t, &w)
	if s := e.get(t, aliceToken, c.ID, w.Position); s.Status != "ERROR" || s.StatusReason != "agent-lost" {
		t.Fatalf("session %+v", s)
	}
	r = e.do(t, "GET", fmt.Sprintf("/v1/agents?status=lost&wait_for_position=%d", w.Position), adminToken, "")
	var out struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	r.decode(t, &out)
	if len(out.Items) != 1 || out.Items[0].ID != "node-1" {
		t.Fatalf("lost agents %s", r.body)
	}
}
