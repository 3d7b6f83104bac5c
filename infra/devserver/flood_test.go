package devserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bootstrap"
)

// floodChildEnv, set to a data directory, makes the test binary run the
// server there as a child process (floodChild) instead of the tests;
// floodModeEnv says how.
const (
	floodChildEnv = "CAIRN_TEST_FLOOD_CHILD"
	floodModeEnv  = "CAIRN_TEST_FLOOD_MODE"
)

const (
	// floodHeadroom is how many descriptors the "emfile" child may open
	// once it serves: a flood of more connections makes accept fail.
	floodHeadroom = 48
	// floodNofile is the "defaults" child's open-files limit, from which
	// its connection limits are derived (512 - 256 kept = 256).
	floodNofile = 512
)

// floodChild runs the server in dir until stdin closes, printing its
// endpoints as a JSON line on stdout once it serves. In mode "emfile" its
// connection limits are far above its open-files limit, which it lowers,
// once serving, to what it holds then plus floodHeadroom; in mode
// "defaults" its open-files limit is floodNofile from the start, and its
// connection limits the defaults derived from it.
func floodChild(dir, mode string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := testConfig(dir)
	cfg.Logger = log
	ready := func(e Endpoints) { _ = json.NewEncoder(os.Stdout).Encode(e) }
	switch mode {
	case "emfile":
		cfg.HTTPMaxConns, cfg.HTTPMaxConnsPerIP = 100_000, 100_000
		cfg.OnReady = func(e Endpoints) {
			fds, err := os.ReadDir("/proc/self/fd")
			if err == nil {
				err = setNofile(uint64(len(fds) + floodHeadroom))
			}
			if err != nil {
				log.Error("lowering the open-files limit", "err", err)
				os.Exit(2)
			}
			ready(e)
		}
	case "defaults":
		if err := setNofile(floodNofile); err != nil {
			log.Error("lowering the open-files limit", "err", err)
			return 2
		}
		cfg.OnReady = ready
	default:
		log.Error("unknown flood mode", "mode", mode)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "Run:", err)
		return 1
	}
	return 0
}

// setNofile sets the soft open-files limit of this process.
func setNofile(n uint64) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	lim.Cur = n
	return unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
}

// lineWatcher keeps what a child writes and tells when a line matches.
type lineWatcher struct {
	buf     syncBuffer
	pw      *io.PipeWriter
	lines   chan string
	matched chan struct{}
}

func watchLines(match *regexp.Regexp) *lineWatcher {
	pr, pw := io.Pipe()
	w := &lineWatcher{pw: pw, lines: make(chan string, 16), matched: make(chan struct{})}
	go func() {
		s := bufio.NewScanner(pr)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		seen := false
		for s.Scan() {
			line := s.Text()
			w.buf.Write([]byte(line + "\n"))
			if !seen && match != nil && match.MatchString(line) {
				seen = true
				close(w.matched)
			}
			select {
			case w.lines <- line:
			default:
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return w
}

func (w *lineWatcher) Write(p []byte) (int, error) { return w.pw.Write(p) }

// floodChildProc is a running floodChild.
type floodChildProc struct {
	e      Endpoints
	host   string
	stdin  io.WriteCloser
	stderr *lineWatcher
	exited chan error
}

// startFloodChild starts floodChild in mode and waits until it serves;
// stderrMatch is the log line its stderr watcher waits for.
func startFloodChild(t *testing.T, mode string, stderrMatch *regexp.Regexp) *floodChildProc {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodChildEnv+"="+dir, floodModeEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := watchLines(nil)
	p := &floodChildProc{stdin: stdin, stderr: watchLines(stderrMatch), exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("child's log:\n%s", p.stderr.buf.String())
		}
	})
	select {
	case line := <-stdout.lines:
		if err := json.Unmarshal([]byte(line), &p.e); err != nil {
			t.Fatalf("child's first line %q: %v", line, err)
		}
	case err := <-p.exited:
		t.Fatalf("the child exited before serving: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the child did not serve within 2 minutes")
	}
	p.host = strings.TrimPrefix(p.e.APIURL, "http://")
	return p
}

// awaitServing polls /healthz until it answers 200, then writes to the
// store (a new folder) and returns the /metrics text.
func (p *floodChildProc) awaitServing(t *testing.T) []byte {
	t.Helper()
	await.Until(t, time.Minute, "/healthz to answer 200 after the flood's end", func() bool {
		resp, err := http.Get(p.e.APIURL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case err := <-p.exited:
			t.Fatalf("the child exited after the flood: %v", err)
		default:
		}
		return false
	})
	r := &running{creds: bootstrap.Credentials{APIURL: p.e.APIURL, Token: p.e.Token}}
	r.mkfolder(t, "after-the-flood")
	_, metrics := r.get(t, "/metrics", false)
	return metrics
}

// stop closes the child's stdin and checks that it stops cleanly.
func (p *floodChildProc) stop(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("the child did not stop cleanly: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the child did not stop within a minute of being asked")
	}
}

// metricValue is the value of the sample series (name{labels}) in the
// /metrics text, 0 if absent.
func metricValue(t *testing.T, metrics []byte, series string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(metrics)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return v
}

// A flood of connections that takes the process past its open-files
// limit (accept fails with EMFILE) does not stop the server: it serves
// /healthz and writes to its database once the flood ends, counts the
// failed accepts, and stops cleanly when asked.
func TestServerSurvivesRunningOutOfFileDescriptors(t *testing.T) {
	t.Parallel()
	p := startFloodChild(t, "emfile", regexp.MustCompile(`accepting a connection failed.*too many open files`))

	// Far more connections than descriptors left; they stay open until
	// the child has failed to accept one.
	var flood []net.Conn
	for range 4 * floodHeadroom {
		c, err := net.DialTimeout("tcp", p.host, 10*time.Second)
		if err != nil {
			break // the listen backlog is full: enough
		}
		flood = append(flood, c)
	}
	select {
	case <-p.stderr.matched:
	case err := <-p.exited:
		t.Fatalf("the child exited during the flood: %v", err)
	case <-time.After(time.Minute):
		t.Fatalf("%d connections never made accept fail with EMFILE", len(flood))
	}
	for _, c := range flood {
		c.Close()
	}

	metrics := p.awaitServing(t)
	if n := metricValue(t, metrics, `cairn_http_accept_errors_total{listener="api",reason="EMFILE"}`); n < 1 {
		t.Fatalf("cairn_http_accept_errors_total{reason=EMFILE} = %v, want at least 1", n)
	}
	p.stop(t)
}

// With the connection limits derived from its open-files limit, a flood
// from many clients is refused (503) before the process runs out of
// descriptors: no accept fails, and it serves and writes afterwards.
func TestDefaultConnectionLimitsKeepDescriptorsForTheRest(t *testing.T) {
	t.Parallel()
	p := startFloodChild(t, "defaults", regexp.MustCompile(`accepting a connection failed`))

	// 16 connections from each of 25 loopback addresses: more than the
	// global limit (256), under the per-client one (32).
	var flood []net.Conn
	for i := range 400 {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i/16))}, Timeout: 10 * time.Second}
		c, err := d.Dial("tcp", p.host)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
	}
	// Those over the limit are answered 503 at once; those within it are
	// left waiting for their request.
	refused := make(chan bool, len(flood))
	for _, c := range flood {
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			refused <- strings.HasPrefix(line, "HTTP/1.1 503")
		}()
	}
	n503 := 0
	for range flood {
		if <-refused {
			n503++
		}
	}
	for _, c := range flood {
		c.Close()
	}
	if n503 == 0 {
		t.Fatalf("none of %d connections was refused with 503", len(flood))
	}
	select {
	case <-p.stderr.matched:
		t.Fatal("an accept failed: the default limits left too few descriptors")
	default:
	}

	metrics := p.awaitServing(t)
	if n := metricValue(t, metrics, `cairn_http_connections_refused_total{limit="global",listener="api"}`); n != float64(n503) {
		t.Errorf("cairn_http_connections_refused_total{limit=global} = %v, want the %d answered 503", n, n503)
	}
	for _, reason := range []string{"EMFILE", "ENFILE", "other"} {
		if n := metricValue(t, metrics, `cairn_http_accept_errors_total{listener="api",reason="`+reason+`"}`); n != 0 {
			t.Errorf("cairn_http_accept_errors_total{reason=%s} = %v, want 0", reason, n)
		}
	}
	p.stop(t)
}
