package auditheads

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/await"
)

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	key, err := WriteKey(filepath.Join(t.TempDir(), "head.key"))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "head.key")
	key, err := WriteKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	back, err := LoadKey(path)
	if err != nil || !back.Equal(key) {
		t.Fatalf("loaded back: %v", err)
	}
	if _, err := WriteKey(path); err == nil {
		t.Fatal("WriteKey overwrote an existing key")
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %04o: %v, want a refusal", mode, err)
		}
	}
	os.Chmod(path, 0o400)
	if _, err := LoadKey(path); err != nil {
		t.Fatalf("mode 0400: %v", err)
	}
	link := filepath.Join(t.TempDir(), "link.key")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(link); err == nil {
		t.Fatal("a symbolic link was followed")
	}
	for _, bad := range []string{"", "ed25519-private", "ed25519-private AAAA", "ed25519 " + strings.Repeat("A", 43) + "=", "ed25519-private a b"} {
		if _, err := ParseKey([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseSink(t *testing.T) {
	t.Parallel()
	for spec, name := range map[string]string{
		"file:/var/log/cairn/heads.ndjson":           "file:/var/log/cairn/heads.ndjson",
		"syslog:":                                    "syslog:",
		"syslog://logs.example:514":                  "syslog://logs.example:514",
		"syslog+tcp://logs.example:601":              "syslog+tcp://logs.example:601",
		"https://user:pw@heads.example/in?token=abc": "https://heads.example/in",
	} {
		s, err := ParseSink(spec)
		if err != nil || s.Name() != name {
			t.Errorf("%s: %v, name %q want %q", spec, err, s.Name(), name)
		}
	}
	for _, bad := range []string{"file:relative", "syslog://nohostport", "syslog://h:1/path", "ftp://x", "", "https://"} {
		if _, err := ParseSink(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// heads reads and verifies the heads of an NDJSON file.
func heads(t *testing.T, path string, key ed25519.PrivateKey) []audit.Head {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	got, err := audit.VerifyHeads(bytes.NewReader(data), audit.Keyring{audit.KeyID(pub): pub})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func head(seq uint64) audit.Head { return audit.Head{Seq: seq, Hash: audit.Hash{byte(seq), 0xab}} }

// start runs a signer with a file sink and returns it, the file and a stop
// function that waits for Run to return.
func start(t *testing.T, cfg Config, extra ...Sink) (*Signer, string, func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "heads.ndjson")
	sink, err := ParseSink("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sinks = append([]Sink{sink}, extra...)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return s, path, stop
}

func TestSignerEveryNRecords(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	s, path, _ := start(t, Config{Key: key, Every: 10, Interval: time.Hour})
	s.Observe(head(5))
	s.Observe(head(12))
	await.Until(t, 10*time.Second, "the head at 12 signed", func() bool { return len(heads(t, path, key)) == 1 })
	if got := heads(t, path, key); got[0] != head(12) {
		t.Fatalf("heads %v", got)
	}
	s.Observe(head(20)) // 8 more: not yet
	s.Observe(head(22))
	await.Until(t, 10*time.Second, "the head at 22 signed", func() bool { return len(heads(t, path, key)) == 2 })
	if got := heads(t, path, key); got[1] != head(22) {
		t.Fatalf("heads %v", got)
	}
	latest, ok := s.Latest()
	if !ok || latest.Head() != head(22) || latest.KeyID != s.KeyID() {
		t.Fatalf("latest %+v", latest)
	}
}

func TestSignerIntervalSignsAMovedHead(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	s, path, _ := start(t, Config{Key: key, Every: 1000, Interval: 10 * time.Millisecond})
	s.Observe(head(3))
	await.Until(t, 10*time.Second, "the head at 3 signed on a tick", func() bool { return len(heads(t, path, key)) == 1 })
	s.Observe(head(4))
	await.Until(t, 10*time.Second, "the head at 4 signed on a tick", func() bool { return len(heads(t, path, key)) == 2 })
	if got := heads(t, path, key); got[0] != head(3) || got[1] != head(4) {
		t.Fatalf("heads %v: an unmoved head was signed again, or a head was missed", got)
	}
}

func TestSignerSignsTheLastHeadAtShutdownAndRecallsIt(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	s, path, stop := start(t, Config{Key: key, Every: 1000, Interval: time.Hour})
	s.Observe(head(7))
	stop()
	if got := heads(t, path, key); len(got) != 1 || got[0] != head(7) {
		t.Fatalf("heads %v", got)
	}
	sink, _ := ParseSink("file:" + path)
	again, err := New(Config{Key: key, Sinks: []Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	if latest, ok := again.Latest(); !ok || latest.Head() != head(7) {
		t.Fatalf("a restarted signer's latest: %+v %v", latest, ok)
	}
	if _, ok := again.due(true); ok {
		t.Fatal("a restarted signer would sign the recalled head again")
	}
	// Another key's signer does not take the file's head as its own.
	other, err := New(Config{Key: newKey(t), Sinks: []Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Latest(); ok {
		t.Fatal("a head signed by another key was taken as the latest")
	}
}

// TestSignerSinks publishes to a real HTTP endpoint that fails first, and
// to syslog over UDP; a sink on a full disk (/dev/full) fails and is
// counted without holding the others up.
func TestSignerSinks(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "not now", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		posted = append(posted, string(body))
		mu.Unlock()
	}))
	defer srv.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()

	var sinks []Sink
	for _, spec := range []string{srv.URL + "/heads", "syslog://" + udp.LocalAddr().String(), "file:/dev/full"} {
		sink, err := ParseSink(spec)
		if err != nil {
			t.Fatal(err)
		}
		sinks = append(sinks, sink)
	}
	key := newKey(t)
	reg := prometheus.NewRegistry()
	s, path, stop := start(t, Config{Key: key, Every: 1, Interval: time.Hour, RetryFor: 300 * time.Millisecond, Registerer: reg}, sinks...)
	s.Observe(head(1))
	await.Until(t, 10*time.Second, "the head reached the file", func() bool { return len(heads(t, path, key)) == 1 })

	buf := make([]byte, 2048)
	udp.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := udp.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := s.Latest()
	want := string(line.AppendJSON(nil))
	if msg := string(buf[:n]); !strings.Contains(msg, "cairn-audit-head") || !strings.HasSuffix(strings.TrimSpace(msg), want) {
		t.Fatalf("syslog message %q, want the line %s", msg, want)
	}
	await.Until(t, 10*time.Second, "the head POSTed after a 503", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(posted) == 1 && posted[0] == want
	})
	full := sinks[2].Name()
	await.Until(t, 10*time.Second, "the full disk's head given up", func() bool {
		return testutil.ToFloat64(s.errors.WithLabelValues(full)) >= 2 && testutil.ToFloat64(s.published.WithLabelValues(srv.URL+"/heads")) == 1
	})
	// The signer goes on: the next head reaches the working sinks.
	s.Observe(head(2))
	await.Until(t, 10*time.Second, "the next head reached the file", func() bool { return len(heads(t, path, key)) == 2 })
	stop()
	if got := testutil.ToFloat64(s.published.WithLabelValues(full)); got != 0 {
		t.Fatalf("%v heads counted as published to /dev/full", got)
	}
	if got := testutil.ToFloat64(s.signedSeq); got != 2 {
		t.Fatalf("signed seq gauge %v", got)
	}
}

// TestHTTPSinkErrorsKeepTheURLsSecrets: an error names the sink without
// the user info and query of its URL (logged as they are).
func TestHTTPSinkErrorsKeepTheURLsSecrets(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	sink, err := ParseSink("http://user:hunter2@" + addr + "/heads?token=s3cret")
	if err != nil {
		t.Fatal(err)
	}
	err = sink.Publish(context.Background(), []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("error %v: want one naming %s without the secrets", err, addr)
	}
}
