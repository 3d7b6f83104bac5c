package podman

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/cairnhq/cairn/agents/runtime"
)

// compatAPIVersion is the Docker-compatible API version of the pull
// request; Podman 4 and 5 serve it.
const compatAPIVersion = "1.41"

// pull pulls ref through the service's Docker-compatible endpoint
// (POST /images/create), the one that streams byte counts: the libpod
// endpoint the bindings use streams only text lines ("Copying blob ..."),
// without sizes. Every layer's progress is folded into a
// runtime.PullProgress handed to progress (if not nil).
func (r *Runtime) pull(ctx context.Context, ref string, progress func(runtime.PullProgress)) error {
	conn, err := bindings.GetClient(r.call(ctx))
	if err != nil {
		return fmt.Errorf("podman: pull %s: %w: %w", ref, runtime.ErrUnavailable, err)
	}
	base := "http://d"
	if conn.URI.Scheme == "tcp" {
		base = "http://" + conn.URI.Host + conn.URI.Path
	}
	q := url.Values{"fromImage": {ref}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v"+compatAPIVersion+"/images/create?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("podman: pull %s: %w: %w", ref, runtime.ErrInvalid, err)
	}
	resp, err := conn.Client.Do(req)
	if err != nil {
		return translate(ctx, "pull "+ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		// Refused before any progress: one error object, Docker's way.
		err = pullRefusal(resp)
	} else {
		var t pullTracker
		err = t.read(resp.Body, progress)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("podman: pull %s: %w", ref, ctx.Err())
	}
	if err != nil {
		// The service is up and said no: the image cannot be had.
		return fmt.Errorf("podman: pull %s: %w: %w", ref, runtime.ErrNotFound, err)
	}
	return nil
}

// pullRefusal is the error of a pull the service refused with an error
// status: the message of its JSON body ({"message"} before any progress,
// or a jsonmessage with its error), else the status.
func pullRefusal(resp *http.Response) error {
	var body struct {
		Message string                 `json:"message"`
		Error   string                 `json:"error"`
		Detail  *jsonmessage.JSONError `json:"errorDetail"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
	switch {
	case body.Message != "":
		return errors.New(body.Message)
	case body.Detail != nil && body.Detail.Message != "":
		return errors.New(body.Detail.Message)
	case body.Error != "":
		return errors.New(body.Error)
	}
	return fmt.Errorf("status %d", resp.StatusCode)
}

// pullTracker folds the pull's JSON messages (Docker's jsonmessage, one
// per layer event) into the pull's progress.
type pullTracker struct {
	layers map[string]*layerProgress
	// order keeps the layers in the order they were announced, so that
	// sums do not depend on map order (they do not, but tests read it).
	order []string
	last  runtime.PullProgress
}

type layerProgress struct {
	done         bool
	current, max int64
}

// read decodes messages from body until it ends, calling progress on
// each change; it returns the error a message reports (the pull failed).
func (t *pullTracker) read(body io.Reader, progress func(runtime.PullProgress)) error {
	dec := json.NewDecoder(body)
	for {
		var m pullMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decode the pull's progress: %w", err)
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		if m.ErrorText != "" {
			return errors.New(m.ErrorText)
		}
		if t.fold(m.JSONMessage) && progress != nil {
			progress(t.last)
		}
	}
}

// pullMessage is one message of the pull's stream: Docker's, with the
// plain "error" text read into a field of its own (Podman may send it
// without the errorDetail; jsonmessage's own field for it is deprecated).
type pullMessage struct {
	jsonmessage.JSONMessage
	ErrorText string `json:"error"`
}

// fold applies one message and reports whether the progress changed.
// Podman sends "Pulling fs layer" when a blob is announced, "Downloading"
// with bytes current/total as it arrives, "Download complete" when it is
// in, "Already exists" for a blob it had; the last message names the
// image (an id never announced), which changes nothing.
func (t *pullTracker) fold(m jsonmessage.JSONMessage) bool {
	if m.ID == "" {
		return false
	}
	if t.layers == nil {
		t.layers = map[string]*layerProgress{}
	}
	l := t.layers[m.ID]
	switch m.Status {
	case "Pulling fs layer", "Downloading", "Already exists":
		if l == nil {
			l = &layerProgress{}
			t.layers[m.ID] = l
			t.order = append(t.order, m.ID)
		}
	}
	if l == nil {
		return false
	}
	switch m.Status {
	case "Downloading":
		if m.Progress != nil {
			l.current = max(l.current, m.Progress.Current)
			l.max = max(l.max, m.Progress.Total)
		}
	case "Download complete", "Already exists":
		l.done = true
		l.current = max(l.current, l.max)
	}
	var p runtime.PullProgress
	for _, id := range t.order {
		l := t.layers[id]
		p.LayersTotal++
		if l.done {
			p.LayersDone++
		}
		p.BytesDone += l.current
		p.BytesTotal += max(l.max, l.current)
	}
	if p == t.last {
		return false
	}
	t.last = p
	return true
}
