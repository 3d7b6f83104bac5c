package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// limitBody keeps BodyLimit for the requests that do not stream their
// body (streams false) when the server streams request bodies: fasthttp
// then hands every handler a stream, and reading it whole (c.Body()) has
// no limit of its own. The body is read here, at most limit bytes, and
// put back as an ordinary body; a longer one is refused with 413 and the
// connection closed (the rest of the body is never read). It is read
// under the server's ReadTimeout, a total deadline.
//
// The body of a request that streams it is read by the handler through
// BodyStream, under an idle timeout instead: each read may wait idle for
// bytes, however long the whole body takes. A read that waited longer
// fails with ErrBodyStalled, which ProblemFor answers 408; the connection
// is then closed.
func limitBody(limit int, streams func(c *fiber.Ctx) bool, idle time.Duration, stalls prometheus.Counter) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		if !req.IsBodyStream() {
			return c.Next()
		}
		if streams(c) {
			body := &idleBody{r: req.BodyStream(), conn: c.Context().Conn(), idle: idle}
			c.Locals(bodyKey, body)
			err := c.Next()
			if err != nil && body.stalled {
				stalls.Inc()
				c.Context().SetConnectionClose()
				if !errors.Is(err, ErrBodyStalled) {
					err = fmt.Errorf("%w: %w", ErrBodyStalled, err) // the handler lost the cause
				}
			}
			return err
		}
		if req.Header.ContentLength() > limit {
			c.Context().SetConnectionClose()
			return fiber.NewError(http.StatusRequestEntityTooLarge, "request body too large")
		}
		body, err := io.ReadAll(io.LimitReader(req.BodyStream(), int64(limit)+1))
		if err != nil {
			c.Context().SetConnectionClose()
			return fiber.NewError(http.StatusBadRequest, "cannot read the request body")
		}
		if len(body) > limit {
			c.Context().SetConnectionClose()
			return fiber.NewError(http.StatusRequestEntityTooLarge, "request body too large")
		}
		req.SetBody(body)
		return c.Next()
	}
}

const (
	bodyKey     = "cairn.body"
	bodyWrapKey = "cairn.body_wrap"
)

// WrapBodyStream has BodyStream hand the handler a streamed request body
// through wrap: middleware that must see the body as it streams
// (httpauth checks a strict signature's body hash) registers it.
func WrapBodyStream(c *fiber.Ctx, wrap func(io.Reader) io.Reader) {
	c.Locals(bodyWrapKey, wrap)
}

// BodyStream is the body of a request whose body the server streams
// (Config.StreamRequestBody), read under the body idle timeout and through
// the middleware's wrap if any; nil when the body was read whole (then use
// c.Body()). Handlers of streamed routes read the body through it, never
// c.Body() or the fasthttp stream, so that what middleware checks while
// streaming is checked; they call it once.
func BodyStream(c *fiber.Ctx) io.Reader {
	var r io.Reader
	if b, ok := c.Locals(bodyKey).(*idleBody); ok {
		r = b
	} else if s := c.Context().RequestBodyStream(); s != nil {
		r = s
	} else {
		return nil
	}
	if wrap, ok := c.Locals(bodyWrapKey).(func(io.Reader) io.Reader); ok {
		return wrap(r)
	}
	return r
}

// ErrBodyStalled is what a read of a streamed body returns when no byte
// came for the body idle timeout; ProblemFor answers it 408 wherever it is
// in an error's chain.
var ErrBodyStalled = errors.New("the request body stalled")

// idleBody reads a streamed request body, moving the connection's read
// deadline idle ahead of every read: the deadline fasthttp set when the
// request started bounds the header and what it read ahead of the
// handler, not the whole body.
type idleBody struct {
	r       io.Reader
	conn    net.Conn
	idle    time.Duration
	stalled bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if err := b.conn.SetReadDeadline(time.Now().Add(b.idle)); err != nil {
		return 0, err
	}
	n, err := b.r.Read(p)
	if err != nil && isTimeout(err) {
		b.stalled = true
		return n, fmt.Errorf("%w: no byte for %s: %w", ErrBodyStalled, b.idle, err)
	}
	return n, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
