package lease

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/postgres"
)

// The leader process: the test binary run again with leaderEnv set runs
// runLeader instead of the tests.
const (
	leaderEnv       = "CAIRN_LEASE_TEST_LEADER"
	leaderDSNEnv    = "CAIRN_LEASE_TEST_DSN"
	leaderSchemaEnv = "CAIRN_LEASE_TEST_SCHEMA"
	// tickStream is the stream the leaders append to.
	tickStream = "lease-ticks"
	// tickEvery paces the leader's appends.
	tickEvery = 20 * time.Millisecond
)

func TestMain(m *testing.M) {
	if holder := os.Getenv(leaderEnv); holder != "" {
		os.Exit(runLeader(holder))
	}
	os.Exit(m.Run())
}

// report is one line the leader process writes on stdout.
type report struct {
	What     string `json:"what"` // leading, appended, fenced, failed, lost
	Holder   string `json:"holder"`
	Epoch    int64  `json:"epoch"`
	Position uint64 `json:"position,omitempty"`
	Error    string `json:"error,omitempty"`
}

// tick is the data of the events the leaders append.
type tick struct {
	Holder string `json:"holder"`
	Epoch  int64  `json:"epoch"`
	N      int    `json:"n"`
}

// runLeader runs one singleton under the lease "ticker" (default options:
// the production TTL) until SIGTERM: while it leads, it appends a tick
// every tickEvery. It writes each append's outcome with a context that
// outlives the lease (context.WithoutCancel: the values, so the fence,
// stay), and stops only after one append made once it knew the lease was
// lost: a leader slow to notice, whose late write only the fence stops.
func runLeader(holder string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	out := json.NewEncoder(os.Stdout)
	say := func(r report) {
		r.Holder = holder
		_ = out.Encode(r) // the test reads stdout; nothing to do if it is gone
	}
	dsn, schema := os.Getenv(leaderDSNEnv), os.Getenv(leaderSchemaEnv)
	st, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema, Logger: log})
	if err != nil {
		log.Error("open the store", "error", err)
		return 1
	}
	defer st.Close()
	l, err := NewPostgres(dsn, "ticker", PostgresOptions{Schema: schema, Holder: holder, Logger: log})
	if err != nil {
		log.Error("lease", "error", err)
		return 1
	}
	err = Run(ctx, l, "ticker", log, 100*time.Millisecond, func(held context.Context) error {
		fence, _ := eventstore.FenceFrom(held)
		say(report{What: "leading", Epoch: fence.Epoch})
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		for n := 0; ; n++ {
			<-t.C
			lostBefore := held.Err() != nil
			data, _ := json.Marshal(tick{Holder: holder, Epoch: fence.Epoch, N: n})
			res, err := st.Append(context.WithoutCancel(held), tickStream, eventstore.Any,
				eventstore.EventData{ID: eventstore.NewEventID(), Type: "test.tick", Data: data, Metadata: eventstore.Metadata{Actor: holder}})
			switch {
			case err == nil:
				say(report{What: "appended", Epoch: fence.Epoch, Position: res.Position})
			case errors.Is(err, eventstore.ErrFenced):
				say(report{What: "fenced", Epoch: fence.Epoch, Error: err.Error()})
			default:
				say(report{What: "failed", Epoch: fence.Epoch, Error: err.Error()})
			}
			if lostBefore || errors.Is(err, eventstore.ErrFenced) {
				say(report{What: "lost", Epoch: fence.Epoch, Error: fmt.Sprint(context.Cause(held))})
				return nil
			}
		}
	})
	if err != nil {
		log.Error("run", "error", err)
		return 1
	}
	return 0
}

// leaderProc is a running leader process and what it reported.
type leaderProc struct {
	holder  string
	cmd     *exec.Cmd
	reports chan timedReport
}

type timedReport struct {
	report
	at time.Time
}

func startLeader(t *testing.T, dsn, schema, holder string) *leaderProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderEnv+"="+holder, leaderDSNEnv+"="+dsn, leaderSchemaEnv+"="+schema)
	cmd.Stderr = &testLogWriter{t: t, prefix: holder}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &leaderProc{holder: holder, cmd: cmd, reports: make(chan timedReport, 1<<16)}
	go func() {
		defer close(p.reports)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r report
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				continue // not a report (the test framework's own output)
			}
			p.reports <- timedReport{report: r, at: time.Now()}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT) // never leave it stopped
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// await returns the first report of p matching what, passing the others
// to seen (may be nil); it fails the test if none comes in waitTimeout.
func (p *leaderProc) await(t *testing.T, what string, seen func(timedReport)) timedReport {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		select {
		case r, ok := <-p.reports:
			if !ok {
				t.Fatalf("%s exited before reporting %q", p.holder, what)
			}
			if r.What == what {
				return r
			}
			if seen != nil {
				seen(r)
			}
		case <-deadline.C:
			t.Fatalf("%s did not report %q within %s", p.holder, what, waitTimeout)
		}
	}
}

// testLogWriter writes a process's stderr to the test log.
type testLogWriter struct {
	t      *testing.T
	prefix string
}

func (w *testLogWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s: %s", w.prefix, b)
	return len(b), nil
}

var _ io.Writer = (*testLogWriter)(nil)

// TestDeposedLeaderProcessIsFenced is the failover drill of a paused
// leader, with two real processes on one PostgreSQL and the production
// lease options: SIGSTOP the leader; the other process takes over (the
// failover time is measured and logged); SIGCONT the old leader: its late
// append is refused (ErrFenced), it steps down and follows, and the log
// holds no event it appended after the takeover.
func TestDeposedLeaderProcessIsFenced(t *testing.T) {
	t.Parallel()
	st, url := storeSchema(t)
	a := startLeader(t, url, st.Schema(), "a")
	leadA := a.await(t, "leading", nil)
	if leadA.Epoch != 1 {
		t.Fatalf("a leads at epoch %d, want 1", leadA.Epoch)
	}
	for range 3 {
		a.await(t, "appended", nil)
	}
	b := startLeader(t, url, st.Schema(), "b")

	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// What a reported before it stopped.
	var aBefore []timedReport
	leadB := b.await(t, "leading", nil)
	failover := leadB.at.Sub(stopped)
	t.Logf("failover: b leads %s after a was stopped (lease TTL %s, renewed every %s)", failover.Round(time.Millisecond), DefaultTTL, DefaultTTL/3)
	if leadB.Epoch != leadA.Epoch+1 {
		t.Fatalf("b leads at epoch %d, want %d", leadB.Epoch, leadA.Epoch+1)
	}
	firstB := b.await(t, "appended", nil)
	for range 3 {
		b.await(t, "appended", nil)
	}
	drain := func(p *leaderProc, into *[]timedReport) {
		for {
			select {
			case r := <-p.reports:
				*into = append(*into, r)
			default:
				return
			}
		}
	}
	drain(a, &aBefore)

	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	var aAfter []timedReport
	fenced := a.await(t, "fenced", func(r timedReport) { aAfter = append(aAfter, r) })
	lost := a.await(t, "lost", func(r timedReport) { aAfter = append(aAfter, r) })
	var answered []uint64
	for _, r := range aAfter {
		answered = append(answered, r.Position)
	}
	t.Logf("a after SIGCONT: appends answered before the fence at positions %v (b's first: %d), then refused: %s; stepped down: %s",
		answered, firstB.Position, fenced.Error, lost.Error)
	for _, r := range append(aBefore, aAfter...) {
		if r.What == "appended" && r.Position >= firstB.Position {
			t.Errorf("a appended at position %d, after b's first append at %d", r.Position, firstB.Position)
		}
		if r.What == "leading" {
			t.Errorf("a led again while b held the lease: %+v", r)
		}
	}
	// b keeps leading and appending.
	b.await(t, "appended", nil)

	// The log: a's ticks (epoch 1), then b's (epoch 2), none of a's after
	// b's first.
	evs, err := st.ReadStream(t.Context(), tickStream, eventstore.ReadStreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var byA, byB int
	for _, ev := range evs {
		var tk tick
		if err := json.Unmarshal(ev.Data, &tk); err != nil {
			t.Fatal(err)
		}
		if ev.Metadata.Actor != tk.Holder {
			t.Fatalf("event %d: actor %q, data %+v", ev.Revision, ev.Metadata.Actor, tk)
		}
		switch tk.Holder {
		case "a":
			byA++
			if byB > 0 {
				t.Errorf("event %d (a's tick %d at epoch %d) follows b's first tick: a deposed leader's append was stored", ev.Revision, tk.N, tk.Epoch)
			}
			if tk.Epoch != leadA.Epoch {
				t.Errorf("a's event at epoch %d", tk.Epoch)
			}
		case "b":
			byB++
			if tk.Epoch != leadB.Epoch {
				t.Errorf("b's event at epoch %d", tk.Epoch)
			}
		}
	}
	if byA < 3 || byB < 5 {
		t.Fatalf("%d ticks by a and %d by b, want at least 3 and 5", byA, byB)
	}
	t.Logf("the stream: %d ticks by a (epoch %d), then %d by b (epoch %d)", byA, leadA.Epoch, byB, leadB.Epoch)
}
