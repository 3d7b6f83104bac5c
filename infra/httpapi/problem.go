package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// ProblemContentType is the media type of every error body.
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details body, with Cairn's extensions.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Kind is Cairn's error kind (invalid, not-found, conflict...).
	Kind string `json:"kind"`
	// Field names the offending input field for invalid requests.
	Field string `json:"field,omitempty"`
	// Errors lists every problem when several fields are wrong.
	Errors []FieldError `json:"errors,omitempty"`
	// RequestID correlates the answer with logs and the audit trail.
	RequestID string `json:"request_id,omitempty"`
}

// FieldError is one invalid field.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// StorageFullDetail is the detail of every answer refused because the data
// disk is full (eventstore.ErrStorageFull).
const StorageFullDetail = "the data disk is full: writes are refused until space is freed; reads still work"

// StatusChecksumMismatch is the tus protocol's answer to a chunk whose
// checksum does not match its bytes (an invalid request).
const StatusChecksumMismatch = 460

// RetryAfterUnavailable is the Retry-After, in seconds, of a 503 answer
// whose handler did not set one.
const RetryAfterUnavailable = "5"

// kindStatus is the one mapping between error kinds and HTTP statuses.
var kindStatus = map[domain.Kind]int{
	domain.KindInvalid:         http.StatusBadRequest,
	domain.KindNotFound:        http.StatusNotFound,
	domain.KindConflict:        http.StatusConflict,
	domain.KindForbidden:       http.StatusForbidden,
	domain.KindQuotaExceeded:   http.StatusForbidden,
	domain.KindUnauthenticated: http.StatusUnauthorized,
	domain.KindUnavailable:     http.StatusServiceUnavailable,
	domain.KindTooLarge:        http.StatusRequestEntityTooLarge,
}

// StatusOf maps an error kind to its HTTP status.
func StatusOf(k domain.Kind) int {
	if status, ok := kindStatus[k]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// ProblemFor builds the problem body for err. Internal errors do not leak
// their details.
func ProblemFor(err error) Problem {
	if errors.Is(err, ErrBodyStalled) {
		// Whatever the handler made of the failed read (storage calls it
		// an invalid body), the client stalled: 408, never a 400.
		const status = http.StatusRequestTimeout
		kind := kindForStatus(status).String()
		return Problem{Type: "https://cairn.dev/problems/" + kind, Title: http.StatusText(status), Status: status, Kind: kind,
			Detail: "no byte of the request body came within the server's idle timeout; it was cut and nothing of it kept"}
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		p := Problem{Status: fe.Code, Title: http.StatusText(fe.Code), Detail: fe.Message, Kind: kindForStatus(fe.Code).String()}
		p.Type = "https://cairn.dev/problems/" + p.Kind
		return p
	}
	kind := domain.KindOf(err)
	status := StatusOf(kind)
	p := Problem{
		Type:   "https://cairn.dev/problems/" + kind.String(),
		Title:  http.StatusText(status),
		Status: status,
		Kind:   kind.String(),
	}
	if kind == domain.KindInternal {
		p.Detail = "internal error; see the server log for the request id"
		return p
	}
	if errors.Is(err, eventstore.ErrStorageFull) {
		// The driver's message and the paths stay in the server's log.
		p.Detail = StorageFullDetail
		return p
	}
	p.Detail = err.Error()
	// Collect every field error (errors.Join of several *domain.Error).
	var fields []FieldError
	collectFields(err, &fields)
	if len(fields) == 1 {
		p.Field = fields[0].Field
	} else if len(fields) > 1 {
		p.Field = fields[0].Field
		p.Errors = fields
	}
	return p
}

func collectFields(err error, out *[]FieldError) {
	if err == nil {
		return
	}
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			collectFields(e, out)
		}
		return
	}
	var de *domain.Error
	if errors.As(err, &de) && de.Field != "" {
		detail := de.Message
		if de.Err != nil {
			detail += ": " + de.Err.Error()
		}
		*out = append(*out, FieldError{Field: de.Field, Detail: detail})
	}
}

// kindForStatus classifies a status the HTTP layer produced itself (fiber
// errors such as 405 or 413). Statuses several kinds share (403) map to the
// more general kind.
func kindForStatus(status int) domain.Kind {
	switch status {
	case http.StatusForbidden:
		return domain.KindForbidden
	case http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType, http.StatusRequestedRangeNotSatisfiable,
		http.StatusPreconditionFailed, StatusChecksumMismatch:
		return domain.KindInvalid
	case http.StatusTooManyRequests, http.StatusRequestTimeout:
		return domain.KindUnavailable
	}
	for k, s := range kindStatus {
		if s == status {
			return k
		}
	}
	return domain.KindInternal
}

// ErrorHandler is fiber's error handler: every error becomes a problem+json
// answer; internal errors are logged with the request id.
func ErrorHandler(logger *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		p := ProblemFor(err)
		p.Instance = c.OriginalURL()
		p.RequestID = RequestID(c)
		if p.Status >= 500 {
			logger.Error("request failed", "request_id", p.RequestID, "method", c.Method(), "path", c.Path(), "err", err)
		}
		c.Set(fiber.HeaderContentType, ProblemContentType)
		if p.Status == http.StatusServiceUnavailable && len(c.Response().Header.Peek(fiber.HeaderRetryAfter)) == 0 {
			c.Set(fiber.HeaderRetryAfter, RetryAfterUnavailable)
		}
		return c.Status(p.Status).JSON(p, ProblemContentType)
	}
}

// WriteProblem writes err as a problem+json answer on a net/http
// ResponseWriter (for the small net/http servers, such as the agent's).
func WriteProblem(w http.ResponseWriter, r *http.Request, err error) {
	p := ProblemFor(err)
	if r != nil {
		p.Instance = r.URL.RequestURI()
	}
	w.Header().Set("Content-Type", ProblemContentType)
	if p.Status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", RetryAfterUnavailable)
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
