package node

import (
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/protocol"
	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// serveLogRange answers GET /kernels/{id}/logs?offset=: the byte range of
// the kernel's log StreamLogs writes, flushed as it comes. The status and
// the start header go out once the log is found (or at the end), so an
// error found before is still a problem answer, and a follower learns at
// once that its kernel has a log.
func (a *Agent) serveLogRange(w http.ResponseWriter, r *http.Request, id uuid.UUID) {
	const op = "agent.logs"
	q := r.URL.Query()
	var lr runtime.LogRange
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"offset", &lr.Offset}, {"limit", &lr.Limit}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			httpapi.WriteProblem(w, r, domain.Invalid(op, p.name, "%q is not a non-negative integer", v))
			return
		}
		*p.dst = n
	}
	if v := q.Get("follow"); v != "" {
		f, err := strconv.ParseBool(v)
		if err != nil {
			httpapi.WriteProblem(w, r, domain.Invalid(op, "follow", "%q is not true or false", v))
			return
		}
		lr.Follow = f
	}
	out := &rangeAnswer{w: w}
	out.flusher, _ = w.(http.Flusher)
	res, err := a.StreamLogs(r.Context(), id, lr, out)
	if err != nil && !out.started {
		httpapi.WriteProblem(w, r, err)
		return
	}
	out.NoteLogStart(res.Start)
	h := w.Header()
	h.Set(protocol.LogNextHeader, strconv.FormatInt(res.Next, 10))
	h.Set(protocol.LogCompleteHeader, strconv.FormatBool(res.Complete))
	if err != nil {
		h.Set(protocol.LogErrorTrailer, err.Error())
	}
}

// rangeAnswer sends the answer's head as soon as the log's start is known
// and flushes every write, so a follower sees output as the kernel writes
// it.
type rangeAnswer struct {
	w       http.ResponseWriter
	flusher http.Flusher
	started bool
}

// NoteLogStart sends the head: status, content type, the start header and
// the trailers to come. Only the first call counts.
func (o *rangeAnswer) NoteLogStart(start int64) {
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set(protocol.LogStartHeader, strconv.FormatInt(start, 10))
	h.Set("Trailer", protocol.LogNextHeader+", "+protocol.LogCompleteHeader+", "+protocol.LogErrorTrailer)
	o.w.WriteHeader(http.StatusOK)
	if o.flusher != nil {
		o.flusher.Flush()
	}
}

func (o *rangeAnswer) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err == nil && o.flusher != nil {
		o.flusher.Flush()
	}
	return n, err
}

var _ runtime.StartNoter = (*rangeAnswer)(nil)
