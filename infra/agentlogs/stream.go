package agentlogs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/readapi"
)

var _ readapi.LogSource = (*Source)(nil)

// OpenKernelLog starts reading the range r of a kernel's log from its
// agent: the agent in this process through a pipe, a remote one over its
// signed endpoint (GET {address}/kernels/{id}/logs?offset=&limit=&follow=,
// see agents/protocol). It returns once the agent found the log, or with
// the agent's error as a domain error (as KernelLogs). The stream ends
// with ctx, or when Close is called.
func (s *Source) OpenKernelLog(ctx context.Context, agentID, kernelID string, r readapi.LogRange) (readapi.LogStream, error) {
	id, err := uuid.Parse(kernelID)
	if err != nil {
		return nil, domain.Invalid(op, "kernel_id", "%q is not a kernel id", kernelID)
	}
	lr := runtime.LogRange{Offset: r.Offset, Limit: r.Limit, Follow: r.Follow}
	if err := lr.Validate(); err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindInvalid, Err: err}
	}
	if agentID == "" {
		return nil, domain.Errorf(op, domain.KindUnavailable, "kernel %s is not placed on an agent (yet): it has no logs", kernelID)
	}
	if a, ok := s.local[agentID]; ok {
		return openLocal(ctx, a, id, lr)
	}
	addr, err := s.address(agentID)
	if err != nil {
		return nil, err
	}
	return s.openRemote(ctx, agentID, addr, id, lr)
}

// localStream is a range read from an agent in this process: the agent
// writes into a pipe from a goroutine of its own.
type localStream struct {
	pr      *io.PipeReader
	pw      *io.PipeWriter
	cancel  context.CancelFunc
	found   chan struct{} // closed when the start is known or the read ended
	once    sync.Once
	mu      sync.Mutex
	start   int64
	noted   bool
	res     runtime.LogRead
	done    bool
	readErr error
}

func openLocal(ctx context.Context, a LocalAgent, id uuid.UUID, lr runtime.LogRange) (*localStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	ls := &localStream{pr: pr, pw: pw, cancel: cancel, found: make(chan struct{})}
	go func() {
		res, err := a.StreamLogs(ctx, id, lr, ls)
		ls.mu.Lock()
		ls.res, ls.done, ls.readErr = res, true, err
		ls.mu.Unlock()
		ls.once.Do(func() { close(ls.found) })
		pw.CloseWithError(err) // nil: io.EOF
	}()
	<-ls.found
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !ls.noted && ls.readErr != nil {
		cancel()
		return nil, ls.readErr
	}
	return ls, nil
}

// NoteLogStart learns the start from the agent's range writer.
func (ls *localStream) NoteLogStart(start int64) {
	ls.mu.Lock()
	if !ls.noted {
		ls.start, ls.noted = start, true
	}
	ls.mu.Unlock()
	ls.once.Do(func() { close(ls.found) })
}

func (ls *localStream) Write(p []byte) (int, error) { return ls.pw.Write(p) }

func (ls *localStream) Read(p []byte) (int, error) { return ls.pr.Read(p) }

func (ls *localStream) Start() int64 {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !ls.noted {
		return ls.res.Start
	}
	return ls.start
}

func (ls *localStream) End() (int64, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.res.Next, ls.res.Complete
}

// Close ends the read: the agent's next write fails, and a follow waiting
// for output stops.
func (ls *localStream) Close() error {
	ls.cancel()
	return ls.pr.Close()
}

// remoteStream is a range read from a remote agent's answer.
type remoteStream struct {
	agentID string
	resp    *http.Response
	cancel  context.CancelFunc
	start   int64
	next    int64
	done    bool
	ended   bool
}

// headerTimeout bounds the wait for a remote agent's answer head: it comes
// once the agent found the log, before any byte of it.
const headerTimeout = DefaultTimeout

func (s *Source) openRemote(ctx context.Context, agentID, addr string, id uuid.UUID, lr runtime.LogRange) (*remoteStream, error) {
	q := url.Values{"offset": {strconv.FormatInt(lr.Offset, 10)}}
	if lr.Limit > 0 {
		q.Set("limit", strconv.FormatInt(lr.Limit, 10))
	}
	if lr.Follow {
		q.Set("follow", "true")
	}
	u := strings.TrimRight(addr, "/") + "/kernels/" + id.String() + "/logs?" + q.Encode()
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: fmt.Errorf("agent %s address %q: %w", agentID, addr, err)}
	}
	if s.sign != nil {
		if err := s.sign(req, agentID); err != nil {
			cancel()
			return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
		}
	}
	late := time.AfterFunc(headerTimeout, cancel)
	resp, err := s.streams.Do(req)
	if !late.Stop() && err == nil {
		resp.Body.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		cancel()
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: fmt.Sprintf("agent %s at %s does not answer", agentID, addr), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, remoteError(agentID, resp.StatusCode, body)
	}
	start, err := strconv.ParseInt(resp.Header.Get(protocol.LogStartHeader), 10, 64)
	if err != nil {
		cancel()
		resp.Body.Close()
		return nil, domain.Errorf(op, domain.KindUnavailable, "agent %s answered no valid %s header", agentID, protocol.LogStartHeader)
	}
	return &remoteStream{agentID: agentID, resp: resp, cancel: cancel, start: start, next: start}, nil
}

// Read gives the body; at its end, the trailers tell where the read ended
// or why the agent stopped early.
func (rs *remoteStream) Read(p []byte) (int, error) {
	n, err := rs.resp.Body.Read(p)
	rs.next += int64(n)
	if err != io.EOF {
		if err != nil {
			err = &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: fmt.Sprintf("agent %s: reading the logs", rs.agentID), Err: err}
		}
		return n, err
	}
	t := rs.resp.Trailer
	if msg := t.Get(protocol.LogErrorTrailer); msg != "" {
		return n, domain.Errorf(op, domain.KindUnavailable, "agent %s stopped sending the logs: %s", rs.agentID, msg)
	}
	next, perr := strconv.ParseInt(t.Get(protocol.LogNextHeader), 10, 64)
	if perr != nil || next != rs.next {
		return n, domain.Errorf(op, domain.KindUnavailable, "agent %s ended the logs at %d, but its trailer says %q", rs.agentID, rs.next, t.Get(protocol.LogNextHeader))
	}
	rs.done, rs.ended = true, t.Get(protocol.LogCompleteHeader) == "true"
	return n, io.EOF
}

func (rs *remoteStream) Start() int64 { return rs.start }

func (rs *remoteStream) End() (int64, bool) { return rs.next, rs.done && rs.ended }

func (rs *remoteStream) Close() error {
	rs.cancel()
	return rs.resp.Body.Close()
}
