package devserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands/auditseq"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/auth/signing"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/tmpfstest"
)

// A full data disk degrades the server and never ends it: writes answer
// 503 (the data disk is full) while reads answer 200 and the process
// stays up; once room is made, writes succeed again without a restart. A
// restart on the full disk starts read-only and resumes the same way. In
// the end the audit chain verifies, and every request answered with a
// status below 500 has its record in it.
func TestFullDiskDegradesTheServerAndNeverEndsIt(t *testing.T) {
	mnt := tmpfstest.Mount(t, "32m")
	dir := filepath.Join(mnt, "data")
	cfg := testConfig(dir)
	cfg.Listen = freeAddr(t)                        // the same URL across the restart: a full disk keeps the credentials file as it is
	cfg.NATSRecoverInterval = 50 * time.Millisecond // JetStream restarts soon after room is made
	c := &diskClient{t: t, answered: map[string]int{}}

	// 1. Full while running.
	r := start(t, cfg)
	c.use(r)
	for i := 0; i < 3; i++ {
		c.mustWrite(http.StatusCreated)
		c.mustRead()
	}
	ballast := tmpfstest.Fill(t, mnt)
	c.writeUntilRefused()
	c.degradedPhase(r)

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	c.recoveredPhase(r)
	r.stop(t)

	// 2. Restart on a full disk: read-only, then writable once there is room.
	ballast = tmpfstest.Fill(t, mnt)
	r = start(t, cfg)
	c.use(r)
	c.mustRead()
	c.writeUntilRefused()
	c.degradedPhase(r)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	c.recoveredPhase(r)
	r.stop(t)

	// 3. Nothing answered is missing from the audit chain.
	sealed := sealAndVerify(t, filepath.Join(dir, "cairn.db"))
	var missing []string
	for id, status := range c.answered {
		if status >= 500 {
			continue
		}
		got, ok := sealed[id]
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (%d)", id, status))
		} else if got != status {
			t.Errorf("request %s was answered %d, its record says %d", id, status, got)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d answered requests have no audit record: %v", len(missing), len(c.answered), missing)
	}
	t.Logf("%d requests answered, %d records sealed", len(c.answered), len(sealed))
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// checkFullDisk checks a refused write's answer: 503, problem+json that
// says the disk is full, and when to try again.
func checkFullDisk(t *testing.T, p httpapi.Problem, hdr http.Header) {
	t.Helper()
	if p.Kind != "unavailable" || p.Detail != httpapi.StorageFullDetail || hdr.Get("Retry-After") == "" ||
		hdr.Get("Content-Type") != httpapi.ProblemContentType {
		t.Errorf("a write refused on a full disk: %+v, headers %v", p, hdr)
	}
}

// diskClient drives the API with signed requests and remembers every
// answer by request id.
type diskClient struct {
	t        *testing.T
	r        *running
	n        int
	answered map[string]int
}

func (c *diskClient) use(r *running) { c.r = r }

// do sends a signed request and returns the status, the problem of an
// error answer, and the headers.
func (c *diskClient) do(method, path, body string) (int, httpapi.Problem, http.Header) {
	c.t.Helper()
	c.n++
	id := fmt.Sprintf("disk-%05d", c.n)
	req, err := http.NewRequest(method, c.r.endpoints.APIURL+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set(httpapi.HeaderRequestID, id)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := signing.SignHTTP(req, c.r.creds.AccessKey, c.r.creds.SecretKey, "v8.20240915", time.Now()); err != nil {
		c.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v (did the server stop?)", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	c.answered[id] = resp.StatusCode
	var p httpapi.Problem
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(raw, &p); err != nil {
			c.t.Fatalf("%s %s: %d without a problem body: %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, p, resp.Header
}

func (c *diskClient) write() (int, httpapi.Problem, http.Header) {
	return c.do(http.MethodPost, "/v1/domains", fmt.Sprintf(`{"name":"disk-%d"}`, c.n))
}

func (c *diskClient) mustWrite(want int) {
	c.t.Helper()
	if status, p, _ := c.write(); status != want {
		c.t.Fatalf("write: %d %+v, want %d", status, p, want)
	}
}

// writeUntilRefused writes, reading in between, until a write is refused
// because the disk is full: SQLite may still find room for a few commits
// in its WAL file.
func (c *diskClient) writeUntilRefused() {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		status, p, hdr := c.write()
		if status == http.StatusServiceUnavailable {
			checkFullDisk(c.t, p, hdr)
			return
		}
		if status != http.StatusCreated {
			c.t.Fatalf("write on a full disk: %d %+v", status, p)
		}
		if time.Now().After(deadline) {
			c.t.Fatal("writes still succeed a minute after the disk filled up")
		}
		c.mustRead()
	}
}

func (c *diskClient) mustRead() {
	c.t.Helper()
	if status, p, _ := c.do(http.MethodGet, "/v1/domains", ""); status != http.StatusOK {
		c.t.Fatalf("read: %d %+v, want 200", status, p)
	}
}

// degradedPhase checks the server while the disk is full: reads work,
// writes are refused, /healthz says degraded, and the process stays up
// while the access log's appends fail and are retried.
func (c *diskClient) degradedPhase(r *running) {
	c.t.Helper()
	var h healthAnswer
	defer func() {
		if c.t.Failed() {
			c.t.Logf("last /healthz on a full disk: %+v", h)
		}
	}()
	await.Until(c.t, time.Minute, "/healthz to report the store, the access log and NATS degraded on a full disk", func() bool {
		c.mustRead()
		if status, p, hdr := c.write(); status != http.StatusServiceUnavailable {
			c.t.Fatalf("write on a full disk: %d %+v", status, p)
		} else {
			checkFullDisk(c.t, p, hdr)
		}
		h = health(c.t, r)
		return h.Status == "degraded" && h.has("event store") && h.has("access log") && h.has("embedded NATS") &&
			c.metric(r, "cairn_access_record_append_failures_total") >= 5
	})
	if v := c.metric(r, `cairn_degraded{part="access log"}`); v != 1 {
		c.t.Errorf("cairn_degraded{part=\"access log\"} = %v on a full disk", v)
	}
	select {
	case err := <-r.done:
		r.done <- err
		c.t.Fatalf("the server stopped on a full disk: %v", err)
	default:
	}
}

// recoveredPhase waits, after room was made, until writes succeed again
// and /healthz says ok (JetStream restarted too, with the bus's
// consumers still running: a part that stopped would stop the server).
func (c *diskClient) recoveredPhase(r *running) {
	c.t.Helper()
	await.Until(c.t, time.Minute, "a write to succeed after room was made", func() bool {
		status, p, _ := c.write()
		if status != http.StatusCreated && status != http.StatusServiceUnavailable {
			c.t.Fatalf("write after room was made: %d %+v", status, p)
		}
		return status == http.StatusCreated
	})
	for i := 0; i < 3; i++ {
		c.mustWrite(http.StatusCreated)
		c.mustRead()
	}
	var h healthAnswer
	defer func() {
		if c.t.Failed() {
			c.t.Logf("last /healthz after room was made: %+v", h)
		}
	}()
	await.Until(c.t, time.Minute, "/healthz to say ok after room was made", func() bool {
		h = health(c.t, r)
		return h.Status == "ok"
	})
}

type healthAnswer struct {
	Status   string        `json:"status"`
	Degraded []Degradation `json:"degraded"`
	Free     int64         `json:"data_dir_free_bytes"`
}

func (h healthAnswer) has(part string) bool {
	for _, d := range h.Degraded {
		if d.Part == part {
			return true
		}
	}
	return false
}

func health(t *testing.T, r *running) healthAnswer {
	t.Helper()
	code, body := r.get(t, "/healthz", false)
	var h healthAnswer
	if err := json.Unmarshal(body, &h); code != http.StatusOK || err != nil {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	return h
}

// metric is the value of the sample named name (with its labels, as
// /metrics writes them), 0 when absent.
func (c *diskClient) metric(r *running, name string) float64 {
	c.t.Helper()
	_, body := r.get(c.t, "/metrics", false)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				c.t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// sealAndVerify runs the audit sequencer on the stopped server's store
// until every access record in the log is sealed, then verifies the chain
// as `cairn replay audit --verify` does, and returns the sealed records'
// statuses by request id.
func sealAndVerify(t *testing.T, path string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := sqlite.Open(ctx, path, sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	var last uint64 // the log's last access record
	for from := uint64(0); ; {
		evs, err := store.ReadAll(ctx, from, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == domain.TypeAccessLogged || e.Type == domain.TypeAccessBatchLogged {
				last = e.Position
			}
		}
		if len(evs) < 1000 {
			break
		}
		from = evs[len(evs)-1].Position
	}
	seq, err := auditseq.New(auditseq.Config{Logger: slog.New(slog.DiscardHandler)}, store)
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- seq.Run(sctx) }()
	await.Until(t, time.Minute, fmt.Sprintf("the chain sealed up to the log's last access record (position %d)", last), func() bool {
		tip, err := auditseq.Resume(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the sequencer stopped: %v", err)
		default:
		}
		return tip.After >= last
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	v := audit.NewVerifier(audit.Genesis)
	statuses := map[string]int{}
	for from := int64(0); ; {
		evs, err := store.ReadStream(ctx, domain.AuditStream, eventstore.ReadStreamOptions{From: from, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			var run domain.AuditSealed
			if ev.Type != domain.TypeAuditSealed {
				t.Fatalf("audit stream revision %d: a %s event", ev.Revision, ev.Type)
			}
			if err := json.Unmarshal(ev.Data, &run); err != nil {
				t.Fatal(err)
			}
			for _, rec := range run.Records {
				if err := v.Add(rec.Record); err != nil {
					t.Fatalf("the audit chain does not verify: %v", err)
				}
				statuses[rec.Record.RequestID] = rec.Record.Status
			}
		}
		if len(evs) < 500 {
			break
		}
		from = evs[len(evs)-1].Revision + 1
	}
	if _, err := v.Finish(); err != nil {
		t.Fatalf("the audit chain does not verify: %v", err)
	}
	return statuses
}
