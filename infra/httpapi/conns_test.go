package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cairnhq/cairn/infra/await"
)

// served is an app serving on a loopback port through NewListener.
type served struct {
	addr string
	done chan error // Serve's result, once it returns
}

func serveApp(t *testing.T, cfg Config, lcfg ListenerConfig, routes func(*fiber.App)) *served {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })
	if routes != nil {
		routes(app)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lcfg.Logger = cfg.Logger
	lln, err := NewListener(ln, lcfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &served{addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { s.done <- app.Listener(lln) }()
	t.Cleanup(func() {
		if err := app.ShutdownWithTimeout(5 * time.Second); err != nil {
			t.Error(err)
		}
	})
	return s
}

// dialFrom opens a TCP connection to addr from the loopback address ip
// (127.0.0.0/8 is all this machine's: several "clients" on one host).
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// healthz is the status of GET /healthz from ip on a fresh connection.
func (s *served) healthz(ip string) (int, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	client := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	resp, err := client.Get("http://" + s.addr + "/healthz")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// awaitHealthy polls /healthz from ip until it answers 200.
func (s *served) awaitHealthy(t *testing.T, ip string) {
	t.Helper()
	var status int
	var err error
	defer func() {
		if t.Failed() {
			t.Logf("/healthz from %s: last %d, %v", ip, status, err)
		}
	}()
	await.Until(t, 30*time.Second, "/healthz from "+ip+" to answer 200 again", func() bool {
		status, err = s.healthz(ip)
		return err == nil && status == http.StatusOK
	})
}

func (s *served) stillServing(t *testing.T) {
	t.Helper()
	select {
	case err := <-s.done:
		t.Fatalf("the server stopped serving: %v", err)
	default:
	}
}

// refused checks that the server answers c with status (or closes it
// without an answer) at once, rather than keeping it waiting.
func refused(c net.Conn, status string) error {
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return errors.New("a connection over the limit was kept waiting, not refused")
	case err != nil && line == "":
		return nil // closed (or reset) without an answer: refused too
	case !strings.HasPrefix(line, "HTTP/1.1 "+status):
		return fmt.Errorf("a connection over the limit was answered %q, want %s", line, status)
	}
	return nil
}

// flood opens n connections from ip at once and checks each is refused.
func flood(t *testing.T, ip, addr string, n int, status string) {
	t.Helper()
	var wg sync.WaitGroup
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dialFrom(t, ip, addr)
	}
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := refused(c, status); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestConnectionsOverThePerIPLimitAreRefused(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := serveApp(t, Config{ReadTimeout: time.Minute}, ListenerConfig{Name: "test", MaxConns: 64, MaxConnsPerIP: 3, Registerer: reg}, nil)
	// Three idle connections from 127.0.0.1 take its share...
	held := []net.Conn{dialFrom(t, "127.0.0.1", s.addr), dialFrom(t, "127.0.0.1", s.addr), dialFrom(t, "127.0.0.1", s.addr)}
	// ...and more from it are answered 429 and closed at once,
	flood(t, "127.0.0.1", s.addr, 40, "429")
	if got := testutil.ToFloat64(listenerMetricsFor(reg).refused.WithLabelValues("test", "per_ip")); got != 40 {
		t.Errorf("cairn_http_connections_refused_total{limit=per_ip} = %v, want 40", got)
	}
	// while another client is served.
	if status, err := s.healthz("127.0.0.2"); err != nil || status != http.StatusOK {
		t.Fatalf("/healthz from another IP during the flood: %d, %v", status, err)
	}
	for _, c := range held {
		c.Close()
	}
	s.awaitHealthy(t, "127.0.0.1")
	s.stillServing(t)
}

func TestConnectionsOverTheGlobalLimitAreRefused(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := serveApp(t, Config{ReadTimeout: time.Minute}, ListenerConfig{Name: "test", MaxConns: 4, MaxConnsPerIP: 100, Registerer: reg}, nil)
	var held []net.Conn
	for i := range 4 {
		held = append(held, dialFrom(t, "127.0.0."+string(rune('2'+i)), s.addr))
	}
	flood(t, "127.0.0.10", s.addr, 40, "503")
	if got := testutil.ToFloat64(listenerMetricsFor(reg).refused.WithLabelValues("test", "global")); got != 40 {
		t.Errorf("cairn_http_connections_refused_total{limit=global} = %v, want 40", got)
	}
	for _, c := range held {
		c.Close()
	}
	s.awaitHealthy(t, "127.0.0.1")
	s.stillServing(t)
}

// A client that sends a header byte by byte is cut at the read timeout:
// it cannot hold a connection (slowloris).
func TestSlowHeaderIsCutAtTheReadTimeout(t *testing.T) {
	t.Parallel()
	s := serveApp(t, Config{ReadTimeout: 500 * time.Millisecond}, ListenerConfig{}, nil)
	c := dialFrom(t, "127.0.0.1", s.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_, _ = io.Copy(io.Discard, c) // until the server closes it
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			s.stillServing(t)
			return
		case <-ctx.Done():
			t.Fatal("a header trickling for 15s was never cut")
		case <-tick.C:
			_, _ = c.Write([]byte("X-Slow: a\r\n")) // never ends the header
		}
	}
}
