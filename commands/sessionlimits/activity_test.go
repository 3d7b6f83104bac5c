package sessionlimits_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/dispatch/reports"
	"github.com/cairnhq/cairn/infra/managertest"
)

// TestEachAgentSignalKeepsASessionAlive: an agent's kernel.activity, of
// any one signal, keeps an interactive session from idling out, through
// the real chain (the bus, the reports consumer, the access log's Writer,
// the log the manager folds); a session whose agent reports nothing ends
// at its idle timeout, and so do the others once their agent falls silent.
func TestEachAgentSignalKeepsASessionAlive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, managertest.TenantSpec{MainPolicy: unlimited(func(p *domain.KeypairPolicySpec) { p.IdleTimeout = 600 }), OtherPolicy: unlimited(nil)})
	w, err := accesslog.NewWriter(accesslog.Config{Logger: e.Log}, e.Store)
	if err != nil {
		t.Fatal(err)
	}
	managertest.Go(t, "access log", w.Run)
	b := e.Bus()
	c, err := reports.New(reports.Config{Clock: e.Clock.Now, Logger: e.Log, Record: w.Write}, b, e.Store, e.Handlers)
	if err != nil {
		t.Fatal(err)
	}
	managertest.Go(t, "reports", c.Run)
	e.start()

	signals := []string{protocol.SignalNotebook, protocol.SignalTerminal, protocol.SignalGPU}
	used := map[string]uuid.UUID{}
	for _, s := range signals {
		used[s] = e.running(e.tenant.Main, domain.SessionInteractive)
	}
	idle := e.running(e.tenant.Main, domain.SessionInteractive)

	report := func() {
		t.Helper()
		for _, s := range signals {
			k := e.Session(used[s]).Kernels()[0]
			e.Report(b, protocol.KernelActivity{SessionID: used[s], KernelID: k.ID(), AgentID: k.AgentID(), Signals: []string{s}, ObservedAt: managertest.T0})
		}
		// Once the three records are in the log, the manager's next check
		// knows them.
		var head uint64
		e.Await("the activity is recorded", func() bool {
			n := 0
			head = 0
			recs, err := e.Store.ReadStream(bg, domain.AccessLogStream, eventstore.ReadStreamOptions{})
			if errors.Is(err, eventstore.ErrStreamNotFound) {
				return false // nothing written yet
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, rec := range recs {
				ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
				if err != nil {
					t.Fatal(err)
				}
				records, _ := domain.AccessRecords(ev)
				for _, r := range records {
					if r.Time.Equal(e.Clock.Now()) && strings.HasPrefix(r.Action, reports.ActivityAction+" ") {
						n++
					}
				}
				head = rec.Position
			}
			return n == len(signals)
		})
		e.checkedAfter(head)
	}

	e.Clock.Advance(9 * minute)
	report()
	e.Clock.Advance(2 * minute) // 11 minutes since running, 2 since the activity
	e.endedBy(idle, domain.ReasonIdleTimeout)
	for _, s := range signals {
		e.still(used[s], domain.StatusRunning)
	}
	e.Clock.Advance(9 * minute) // 11 minutes since the activity: the agent fell silent
	for _, s := range signals {
		e.endedBy(used[s], domain.ReasonIdleTimeout)
	}
}
