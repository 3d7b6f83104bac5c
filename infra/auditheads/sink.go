package auditheads

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/syslog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Sink is a place signed heads are published to, one JSON line each.
type Sink interface {
	// Name is the sink's spec with anything secret left out (metrics and
	// logs name sinks by it).
	Name() string
	// Publish writes one signed head's line (no newline).
	Publish(ctx context.Context, line []byte) error
	Close() error
}

// ParseSink builds the sink a spec names:
//   - file:/abs/path: an append-only NDJSON file (created 0640, fsynced per head);
//   - syslog: (the local syslog), syslog://host:port (UDP), syslog+tcp://host:port;
//   - http://... or https://...: a POST of the line as application/json.
func ParseSink(spec string) (Sink, error) {
	switch {
	case strings.HasPrefix(spec, "file:"):
		path := strings.TrimPrefix(spec, "file:")
		if !filepath.IsAbs(path) {
			return nil, fmt.Errorf("audit head sink %q: want file:/absolute/path", spec)
		}
		return &fileSink{path: filepath.Clean(path)}, nil
	case spec == "syslog:":
		return &syslogSink{name: "syslog:"}, nil
	case strings.HasPrefix(spec, "syslog://"), strings.HasPrefix(spec, "syslog+tcp://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
			return nil, fmt.Errorf("audit head sink %q: want syslog://host:port or syslog+tcp://host:port", spec)
		}
		network := "udp"
		if u.Scheme == "syslog+tcp" {
			network = "tcp"
		}
		return &syslogSink{name: u.Scheme + "://" + u.Host, network: network, addr: u.Host}, nil
	case strings.HasPrefix(spec, "http://"), strings.HasPrefix(spec, "https://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("audit head sink %q: not a URL", redactURL(spec))
		}
		return &httpSink{url: spec, name: redactURL(spec), client: &http.Client{Timeout: 10 * time.Second}}, nil
	}
	return nil, fmt.Errorf("audit head sink %q: want file:/path, syslog:, syslog://host:port, syslog+tcp://host:port, http://URL or https://URL", spec)
}

// redactURL leaves out a URL's user info and query (they may hold tokens).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// fileSink appends to a file. A write that fails (a full disk) is undone
// (the file is cut back to its size before it), so that the next head
// starts a line of its own.
type fileSink struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func (s *fileSink) Name() string { return "file:" + s.path }

func (s *fileSink) Publish(_ context.Context, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return err
		}
		s.f = f
	}
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	buf := append(append(make([]byte, 0, len(line)+1), line...), '\n')
	if _, err := s.f.Write(buf); err != nil {
		if terr := s.f.Truncate(fi.Size()); terr != nil {
			err = errors.Join(err, fmt.Errorf("cut back the partial line: %w", terr))
		}
		return err
	}
	return s.f.Sync()
}

func (s *fileSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// syslogSink sends each line as one syslog message (facility auth, level
// info, tag cairn-audit-head). It dials on first use and again after a
// failure.
type syslogSink struct {
	name, network, addr string
	mu                  sync.Mutex
	w                   *syslog.Writer
}

func (s *syslogSink) Name() string { return s.name }

func (s *syslogSink) Publish(_ context.Context, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		w, err := syslog.Dial(s.network, s.addr, syslog.LOG_AUTH|syslog.LOG_INFO, "cairn-audit-head")
		if err != nil {
			return err
		}
		s.w = w
	}
	if err := s.w.Info(string(line)); err != nil {
		s.w.Close()
		s.w = nil
		return err
	}
	return nil
}

func (s *syslogSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}

// httpSink POSTs each line. A 2xx answer is success; 408, 429 and 5xx are
// retried, other answers are not (the endpoint refuses the head).
type httpSink struct {
	url, name string
	client    *http.Client
}

func (s *httpSink) Name() string { return s.name }

func (s *httpSink) Publish(ctx context.Context, line []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(line))
	if err != nil {
		return backoff.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		// The client's error quotes the whole URL, which may hold a token.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return fmt.Errorf("POST %s: %w", s.name, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("%s answered %s", s.name, resp.Status)
	default:
		return backoff.Permanent(fmt.Errorf("%s answered %s", s.name, resp.Status))
	}
}

func (s *httpSink) Close() error {
	s.client.CloseIdleConnections()
	return nil
}
