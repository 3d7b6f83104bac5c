package readapi

import (
	"bufio"
	"context"
	"io"
	"mime"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/sessions"
)

const (
	opSessionLogs = "session.logs"
	// maxLogTail bounds ?tail= (lines).
	maxLogTail = 100_000
	// defaultLogLimit and maxLogLimit are ?limit='s default and bound
	// (bytes) for a read by offset.
	defaultLogLimit = 1 << 20
	maxLogLimit     = 8 << 20
)

// streamWriteWindow bounds one write of a log stream: a client that
// reads nothing for that long is cut off.
const streamWriteWindow = time.Minute

// kernelPoll is how often a follow asks again for a starting kernel's log.
const kernelPoll = 250 * time.Millisecond

// Headers of a log answer: the offset of the body's first byte, where the
// next read resumes (start plus the body's length), and whether the log is
// complete there (the kernel ended: nothing will follow).
const (
	HeaderLogStart    = "Cairn-Log-Start"
	HeaderLogOffset   = "Cairn-Log-Offset"
	HeaderLogComplete = "Cairn-Log-Complete"
)

// sessionLogs handles GET /v1/sessions/{id}/logs: a kernel's log (the
// main kernel's, or kernel=<id>'s), as text/plain, read from the agent it
// was placed on. A session not placed on an agent (yet, or ever) is a
// conflict (409). The answer is one of:
//
//   - tail=N: the last N lines (at most 1 MiB), as before offsets;
//   - offset=N: the bytes from offset N, at most limit=M (1 MiB by
//     default), with Cairn-Log-Offset the offset to ask next and
//     Cairn-Log-Complete whether the log ended there: a poller that
//     always asks from the offset it was given misses and repeats no
//     byte;
//   - follow=true: the bytes from offset (0 by default) streamed as the
//     kernel writes them, until it ends and all its log was sent;
//   - otherwise (download=true adds Content-Disposition: attachment): the
//     whole log from offset, streamed.
//
// Every answer from an offset has Cairn-Log-Start, the offset of its
// first byte: the asked offset, or later when the agent no longer keeps
// the bytes from there (a removed kernel's log is kept only in part).
func (a *api) sessionLogs(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	id, err := ParseSessionID(c, opSessionLogs)
	if err != nil {
		return err
	}
	q, err := parseLogQuery(c)
	if err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opSessionLogs); err != nil {
		return err
	}
	s, err := a.VisibleSession(c, who, opSessionLogs, id)
	if err != nil {
		return err
	}
	k, err := logKernel(s, q.kernel)
	if err != nil {
		return err
	}
	if k.AgentID == "" {
		return domain.Errorf(opSessionLogs, domain.KindConflict,
			"session %s is %s and has not been placed on an agent: it has no logs", id, s.Status)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCacheControl, "no-store")
	switch {
	case q.tail > 0:
		logs, err := a.Logs.KernelLogs(c.UserContext(), k.AgentID, k.ID.String(), q.tail)
		if err != nil {
			return err
		}
		return c.Send(logs)
	case q.chunk:
		return a.logChunk(c, k, q.r)
	}
	if q.download {
		c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment",
			map[string]string{"filename": "session-" + id.String() + "-kernel-" + k.ID.String() + ".log"}))
	}
	return a.logStream(c, k, q.r)
}

// logQuery is a logs request's parameters.
type logQuery struct {
	kernel   uuid.UUID // uuid.Nil: the main kernel
	tail     int
	r        LogRange
	download bool
	chunk    bool // a read by offset: bounded, with the next offset
}

func parseLogQuery(c *fiber.Ctx) (logQuery, error) {
	var q logQuery
	var err error
	if raw := c.Query("kernel"); raw != "" {
		if q.kernel, err = uuid.Parse(raw); err != nil {
			return q, domain.Invalid(opSessionLogs, "kernel", "%q is not a kernel id", raw)
		}
	}
	if q.tail, err = QueryInt(c, opSessionLogs, "tail", 0, 0, maxLogTail); err != nil {
		return q, err
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"follow", &q.r.Follow}, {"download", &q.download}} {
		if raw := c.Query(b.name); raw != "" {
			if *b.dst, err = strconv.ParseBool(raw); err != nil {
				return q, domain.Invalid(opSessionLogs, b.name, "must be true or false, not %q", raw)
			}
		}
	}
	if raw := c.Query("offset"); raw != "" {
		if q.r.Offset, err = strconv.ParseInt(raw, 10, 64); err != nil || q.r.Offset < 0 {
			return q, domain.Invalid(opSessionLogs, "offset", "must be a non-negative byte offset, not %q", raw)
		}
		q.chunk = !q.r.Follow && !q.download
	}
	limit, err := QueryInt(c, opSessionLogs, "limit", defaultLogLimit, 1, maxLogLimit)
	if err != nil {
		return q, err
	}
	switch {
	case q.tail > 0 && (c.Query("offset") != "" || q.r.Follow || q.download):
		return q, domain.Invalid(opSessionLogs, "tail", "reads the last lines: it does not go with offset, follow or download")
	case c.Query("limit") != "" && !q.chunk:
		return q, domain.Invalid(opSessionLogs, "limit", "bounds a read by offset (offset= without follow or download)")
	case q.chunk:
		q.r.Limit = int64(limit)
	}
	return q, nil
}

// logKernel is the kernel of s that id names, the main kernel for
// uuid.Nil. A session without kernels has none placed: a conflict.
func logKernel(s sessions.Session, id uuid.UUID) (sessions.Kernel, error) {
	if id == uuid.Nil {
		if k, ok := mainKernel(s); ok {
			return k, nil
		}
		return sessions.Kernel{}, domain.Errorf(opSessionLogs, domain.KindConflict,
			"session %s is %s and has not been placed on an agent: it has no logs", s.ID, s.Status)
	}
	for _, k := range s.Kernels {
		if k.ID == id {
			return k, nil
		}
	}
	return sessions.Kernel{}, domain.Errorf(opSessionLogs, domain.KindNotFound, "session %s has no kernel %s", s.ID, id)
}

// logChunk answers a read by offset: the bytes read, the next offset.
func (a *api) logChunk(c *fiber.Ctx, k sessions.Kernel, r LogRange) error {
	st, err := a.Logs.OpenKernelLog(c.UserContext(), k.AgentID, k.ID.String(), r)
	if err != nil {
		return err
	}
	defer st.Close()
	body, err := io.ReadAll(st)
	if err != nil {
		return err
	}
	next, complete := st.End()
	c.Set(HeaderLogStart, strconv.FormatInt(st.Start(), 10))
	c.Set(HeaderLogOffset, strconv.FormatInt(next, 10))
	c.Set(HeaderLogComplete, strconv.FormatBool(complete))
	return c.Send(body)
}

// logStream answers a follow or a download: the head once the agent found
// the log, then its bytes as they come, each flushed. The read outlives
// the handler (fasthttp writes the body after it returns), so it runs
// under Deps.Streams, which ends at shutdown; a client gone is noticed at
// the next write.
func (a *api) logStream(c *fiber.Ctx, k sessions.Kernel, r LogRange) error {
	ctx, cancel := context.WithCancel(a.streams())
	st, err := a.Logs.OpenKernelLog(ctx, k.AgentID, k.ID.String(), r)
	// A kernel still starting may not have reached its agent yet: a
	// follow waits for it, at most MaxWait.
	for end := a.Clock().Add(a.MaxWait); r.Follow && k.Status.IsStarting() &&
		domain.KindOf(err) == domain.KindNotFound && a.Clock().Before(end); {
		select {
		case <-ctx.Done():
			cancel()
			return err
		case <-time.After(kernelPoll):
		}
		st, err = a.Logs.OpenKernelLog(ctx, k.AgentID, k.ID.String(), r)
	}
	if err != nil {
		cancel()
		return err
	}
	c.Set(HeaderLogStart, strconv.FormatInt(st.Start(), 10))
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer cancel()
		defer st.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := st.Read(buf)
			if n > 0 {
				// The server's write timeout bounds a whole answer; a
				// follow lasts as long as its kernel, so each write gets
				// a window of its own instead.
				_ = conn.SetWriteDeadline(time.Now().Add(streamWriteWindow))
				if _, werr := w.Write(buf[:n]); werr != nil || w.Flush() != nil {
					return
				}
			}
			if err != nil {
				// The end, or an agent lost: the client resumes from
				// Cairn-Log-Start plus what it received.
				return
			}
		}
	})
	return nil
}
