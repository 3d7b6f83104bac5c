package httpapi

import (
	"io"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// limitBody keeps BodyLimit for the requests that do not stream their
// body (streams false) when the server streams request bodies: fasthttp
// then hands every handler a stream, and reading it whole (c.Body()) has
// no limit of its own. The body is read here, at most limit bytes, and
// put back as an ordinary body; a longer one is refused with 413 and the
// connection closed (the rest of the body is never read).
func limitBody(limit int, streams func(c *fiber.Ctx) bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		req := c.Request()
		if streams(c) || !req.IsBodyStream() {
			return c.Next()
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

const bodyWrapKey = "cairn.body_wrap"

// WrapBodyStream has BodyStream hand the handler a streamed request body
// through wrap: middleware that must see the body as it streams
// (httpauth checks a strict signature's body hash) registers it.
func WrapBodyStream(c *fiber.Ctx, wrap func(io.Reader) io.Reader) {
	c.Locals(bodyWrapKey, wrap)
}

// BodyStream is the request body of a route that streams it
// (Config.StreamRequestBody), through the middleware's wrap if any; nil
// when the body was read whole (c.Body()). Handlers of streamed routes
// read the body through it, never c.Body() or the fasthttp stream, so
// that what middleware checks while streaming is checked; they call it
// once.
func BodyStream(c *fiber.Ctx) io.Reader {
	r := c.Context().RequestBodyStream()
	if r == nil {
		return nil
	}
	if wrap, ok := c.Locals(bodyWrapKey).(func(io.Reader) io.Reader); ok {
		return wrap(r)
	}
	return r
}
