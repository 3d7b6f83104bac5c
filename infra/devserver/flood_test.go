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

	"github.com/cairnhq/cairn/infra/bootstrap"
)

// floodChildEnv, set to a data directory, makes the test binary run the
// server there as a child process (floodChild) instead of the tests.
const floodChildEnv = "CAIRN_TEST_FLOOD_CHILD"

// floodHeadroom is how many descriptors the child may open once it
// serves: a flood of more connections makes accept fail with EMFILE.
const floodHeadroom = 48

func TestMain(m *testing.M) {
	if dir := os.Getenv(floodChildEnv); dir != "" {
		os.Exit(floodChild(dir))
	}
	os.Exit(m.Run())
}

// floodChild runs the server in dir with connection limits far above its
// open-files limit, which it lowers, once serving, to what it holds then
// plus floodHeadroom. It prints its endpoints as a JSON line on stdout
// and stops when stdin closes.
func floodChild(dir string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := testConfig(dir)
	cfg.Logger = log
	cfg.HTTPMaxConns, cfg.HTTPMaxConnsPerIP = 100_000, 100_000
	cfg.OnReady = func(e Endpoints) {
		var lim unix.Rlimit
		fds, err := os.ReadDir("/proc/self/fd")
		if err == nil {
			err = unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
		}
		if err == nil {
			lim.Cur = uint64(len(fds) + floodHeadroom)
			err = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
		}
		if err != nil {
			log.Error("lowering the open-files limit", "err", err)
			os.Exit(2)
		}
		_ = json.NewEncoder(os.Stdout).Encode(e)
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

// A flood of connections that takes the process past its open-files
// limit (accept fails with EMFILE) does not stop the server: it serves
// /healthz and writes to its database once the flood ends, counts the
// failed accepts, and stops cleanly when asked.
func TestServerSurvivesRunningOutOfFileDescriptors(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodChildEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := watchLines(nil)
	stderr := watchLines(regexp.MustCompile(`accepting a connection failed.*too many open files`))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("child's log:\n%s", stderr.buf.String())
		}
	})

	var e Endpoints
	select {
	case line := <-stdout.lines:
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("child's first line %q: %v", line, err)
		}
	case err := <-exited:
		t.Fatalf("the child exited before serving: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the child did not serve within 2 minutes")
	}
	host := strings.TrimPrefix(e.APIURL, "http://")

	// Far more connections than descriptors left; they stay open until
	// the child has failed to accept one.
	var flood []net.Conn
	for range 4 * floodHeadroom {
		c, err := net.DialTimeout("tcp", host, 10*time.Second)
		if err != nil {
			break // the listen backlog is full: enough
		}
		flood = append(flood, c)
	}
	select {
	case <-stderr.matched:
	case err := <-exited:
		t.Fatalf("the child exited during the flood: %v", err)
	case <-time.After(time.Minute):
		t.Fatalf("%d connections never made accept fail with EMFILE", len(flood))
	}
	for _, c := range flood {
		c.Close()
	}

	// It serves again: /healthz, a write to the store, the metric.
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(e.APIURL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("the child exited after the flood: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz did not answer 200 within a minute of the flood's end (last: %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := &running{creds: bootstrap.Credentials{APIURL: e.APIURL, Token: e.Token}}
	r.mkfolder(t, "after-the-flood")
	_, metrics := r.get(t, "/metrics", false)
	m := regexp.MustCompile(`(?m)^cairn_http_accept_errors_total\{listener="api",reason="EMFILE"\} (\S+)$`).FindSubmatch(metrics)
	if m == nil {
		t.Fatalf("no cairn_http_accept_errors_total for EMFILE in /metrics")
	}
	if n, err := strconv.ParseFloat(string(m[1]), 64); err != nil || n < 1 {
		t.Fatalf("cairn_http_accept_errors_total{reason=EMFILE} = %s, want at least 1", m[1])
	}

	stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the child did not stop cleanly: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the child did not stop within a minute of being asked")
	}
}
