package commands_test

import (
	"sync"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// scheduleConcurrently requests n sessions of spec, then schedules them
// all at once from n goroutines, each on the same agent (and device, if
// any). It returns how many succeeded and the errors of the others.
func scheduleConcurrently(t *testing.T, e *env, n int, spec domain.SessionSpec, device, amount string) (int, []error) {
	t.Helper()
	sessions := make([]commands.RequestSessionResult, n)
	for i := range sessions {
		sessions[i] = e.requestSession(t, spec)
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, n)
	)
	for i, res := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = e.handlers.ScheduleSession.Handle(ctx, e.md, commands.ScheduleSession{
				SessionID: res.SessionID, Kernels: placeOn("a1", res.KernelIDs, device, amount),
			})
		}()
	}
	close(start)
	wg.Wait()

	ok := 0
	var failed []error
	for i, err := range errs {
		s := e.session(t, sessions[i].SessionID)
		if err == nil {
			ok++
			if s.Status() != domain.StatusScheduled {
				t.Errorf("session %d succeeded but is %s", i, s.Status())
			}
			continue
		}
		failed = append(failed, err)
		if s.Status() != domain.StatusPending {
			t.Errorf("session %d failed (%v) but is %s", i, err, s.Status())
		}
		if _, held := e.agent(t, "a1").Allocation(sessions[i].KernelIDs[0]); held {
			t.Errorf("session %d failed but holds an allocation", i)
		}
	}
	return ok, failed
}

// TestConcurrentAllocationsNeverExceedCapacity: 16 schedulers race for an
// agent with room for 8. The agent stream's expected revision serialises
// them; losers retry on fresh state; exactly 8 get in and the rest are
// refused for capacity — never more than the agent has.
func TestConcurrentAllocationsNeverExceedCapacity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 8))
	ok, failed := scheduleConcurrently(t, e, 16, sessionSpec(""), "", "")

	a := e.agent(t, "a1")
	if occupied := a.Occupied()[domain.SlotCPU]; occupied > domain.Units(8) || occupied != domain.Units(int64(ok)) {
		t.Fatalf("occupied %s cpu with %d successes: over capacity or drifted", occupied, ok)
	}
	if ok != 8 {
		t.Fatalf("%d of 16 placed on room for 8: retries on conflict did not work (%v)", ok, failed)
	}
	for _, err := range failed {
		wantKind(t, err, domain.KindQuotaExceeded)
	}
}

// TestConcurrentAllocationsNeverOversubscribeAGPU: 16 schedulers race for
// 0.3 of the same GPU; at most 3 fit in its share capacity of 1.0.
func TestConcurrentAllocationsNeverOversubscribeAGPU(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.registerAgent(t, agentSpec("a1", 64))
	ok, failed := scheduleConcurrently(t, e, 16, sessionSpec("0.3"), "GPU-0", "0.3")

	a := e.agent(t, "a1")
	if used := a.DeviceOccupied("GPU-0"); used > domain.DeviceShareCapacity || used != q("0.3")*domain.Quantity(ok) {
		t.Fatalf("GPU-0 holds %s with %d successes", used, ok)
	}
	if ok != 3 {
		t.Fatalf("%d placed, want 3 (%v)", ok, failed)
	}
	for _, err := range failed {
		wantKind(t, err, domain.KindQuotaExceeded)
	}
}
