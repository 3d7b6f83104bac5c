package agentlogs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bus"
	"github.com/cairnhq/cairn/infra/bus/bustest"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestAddressBookKeepsTheLatestAnnouncement(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "addresses.json")
	b, err := OpenAddressBook(path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Address("a"); ok {
		t.Fatal("an empty book knows an address")
	}
	steps := []struct {
		addr string
		at   time.Time
		want string
	}{
		{"http://node-1:6001", t0, "http://node-1:6001"},
		{"http://node-1:6002", t0.Add(time.Minute), "http://node-1:6002"},
		{"http://stale:1", t0.Add(30 * time.Second), "http://node-1:6002"}, // an older register redelivered
		{"", t0.Add(2 * time.Minute), ""},                                  // restarted without --listen
	}
	for i, s := range steps {
		if err := b.Learn("a", s.addr, s.at); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, ok := b.Address("a")
		if got != s.want || ok != (s.want != "") {
			t.Errorf("step %d: Address = %q, %v; want %q", i, got, ok, s.want)
		}
	}
	if err := b.Learn("b", "http://node-2:6001", t0); err != nil {
		t.Fatal(err)
	}

	// A restarted manager reads the file.
	again, err := OpenAddressBook(path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := again.Address("b"); got != "http://node-2:6001" || !ok {
		t.Errorf("after reopening: %q %v", got, ok)
	}
	if _, ok := again.Address("a"); ok {
		t.Error("after reopening: agent a has an address it withdrew")
	}
}

func TestAddressBookRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := OpenAddressBook(filepath.Join(dir, "a.json"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Learn("a", "ftp://x", t0); !errors.Is(err, bus.ErrPermanent) {
		t.Errorf("a non-HTTP address: %v, want a permanent error", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("[1,2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenAddressBook(bad, quiet); err == nil {
		t.Error("a damaged file was accepted")
	}
}

// testSealKey is a public curve key (nkeys.CreateCurveKeys).
const testSealKey = "XAL54S5FE6SRPONXRNVE4ZDAOHOT44GFIY2ZW33DHLR2U3H2HJSXXRKY"

// TestAddressBookLearnsFromTheBus publishes agents' reports on a real
// embedded NATS server and waits for the book to learn the address.
func TestAddressBookLearnsFromTheBus(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := bustest.Start(t, quiet)
	b, err := bus.Connect(ctx, bus.Config{URL: srv.ClientURL(), CredentialsFile: srv.ManagerCredentials(t)}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	publishAs := func(sender string, m protocol.Message) {
		t.Helper()
		msg, err := protocol.NewMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		topic, err := bus.ReportTopic(sender)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Publish(ctx, topic, msg); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(m protocol.Message) { t.Helper(); publishAs(m.Agent(), m) }
	publish(protocol.AgentHeartbeat{AgentID: "n1", IntervalMillis: 10000, StartedAt: t0, At: t0})
	// Another agent claims to be n1, later: the book must not believe it.
	publishAs("evil", protocol.AgentRegister{
		AgentID: "n1", Architecture: "x86_64", Address: "http://evil:6001", SealKey: testSealKey,
		Capacity:  domain.Slots{domain.SlotCPU: domain.Units(2), domain.SlotMem: domain.Units(1 << 30)},
		StartedAt: t0, At: t0.Add(time.Hour),
	})
	publish(protocol.AgentRegister{
		SealKey: testSealKey,
		AgentID: "n1", Architecture: "x86_64", Address: "http://n1:6001",
		Capacity:  domain.Slots{domain.SlotCPU: domain.Units(2), domain.SlotMem: domain.Units(1 << 30)},
		StartedAt: t0, At: t0,
	})

	book, err := OpenAddressBook(filepath.Join(t.TempDir(), "a.json"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- book.Run(runCtx, b, "") }()
	// The book learns addresses from the bus: poll it.
	await.Until(t, 30*time.Second, "the book to learn the address", func() bool {
		addr, ok := book.Address("n1")
		if ok && addr != "http://n1:6001" {
			t.Errorf("address %q", addr)
		}
		return ok
	})
	stop()
	if err := <-done; err != nil {
		t.Errorf("Run after stop: %v", err)
	}
}
