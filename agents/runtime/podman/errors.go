package podman

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/errorhandling"

	"github.com/cairnhq/cairn/agents/runtime"
)

// translate turns an error from the bindings into one that matches the
// port's sentinels, keeping the original in the chain. It decides by type
// and HTTP status only:
//
//   - the caller's context ended: its error, unchanged in kind;
//   - the service answered with an error model: 404 is ErrNotFound, 400
//     ErrInvalid, 503 ErrUnavailable, anything else stays unclassified;
//   - the request never got an answer (connection refused, socket missing,
//     connection dropped): ErrUnavailable.
func translate(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("podman: %s: %w", op, err)
	}
	if code, ok := statusOf(err); ok {
		if kind := kindOfStatus(code); kind != nil {
			return fmt.Errorf("podman: %s: %w: %w", op, kind, err)
		}
		return fmt.Errorf("podman: %s: %w", op, err)
	}
	var urlErr *url.Error
	var connErr bindings.ConnectError
	if errors.As(err, &urlErr) || errors.As(err, &connErr) {
		return fmt.Errorf("podman: %s: %w: %w", op, runtime.ErrUnavailable, err)
	}
	return fmt.Errorf("podman: %s: %w", op, err)
}

// statusOf returns the HTTP status the service answered with, if err is
// the service's error model.
func statusOf(err error) (int, bool) {
	var ptr *errorhandling.ErrorModel
	if errors.As(err, &ptr) {
		return ptr.ResponseCode, true
	}
	var val errorhandling.ErrorModel
	if errors.As(err, &val) {
		return val.ResponseCode, true
	}
	return 0, false
}

// kindOfStatus maps an HTTP status to a sentinel, or nil.
func kindOfStatus(code int) error {
	switch code {
	case http.StatusNotFound:
		return runtime.ErrNotFound
	case http.StatusBadRequest:
		return runtime.ErrInvalid
	case http.StatusServiceUnavailable:
		return runtime.ErrUnavailable
	}
	return nil
}

// isServiceError reports whether err is an answer from the service (as
// opposed to a transport failure or the caller's context ending).
func isServiceError(err error) bool {
	_, ok := statusOf(err)
	return ok
}
