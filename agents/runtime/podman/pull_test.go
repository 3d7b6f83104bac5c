package podman

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/cairnhq/cairn/agents/runtime"
)

// The tracker folds the stream Podman's compatible pull endpoint writes
// (Docker's jsonmessage, encoded as the service encodes it) into layers
// and bytes done of the totals announced. No registry can be reached
// here, so the stream is built from the same types the service encodes.
func TestPullTrackerFoldsTheServiceStream(t *testing.T) {
	t.Parallel()
	var stream bytes.Buffer
	enc := json.NewEncoder(&stream)
	msg := func(id, status string, cur, total int64) {
		m := jsonmessage.JSONMessage{ID: id, Status: status, Progress: &jsonmessage.JSONProgress{Current: cur, Total: total}}
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
	}
	msg("aaaaaaaaaaaa", "Pulling fs layer", 0, 0)
	msg("bbbbbbbbbbbb", "Pulling fs layer", 0, 0)
	msg("aaaaaaaaaaaa", "Downloading", 100, 1000)
	msg("aaaaaaaaaaaa", "Downloading", 100, 1000) // no change
	msg("bbbbbbbbbbbb", "Downloading", 50, 500)
	msg("aaaaaaaaaaaa", "Downloading", 1000, 1000)
	msg("aaaaaaaaaaaa", "Download complete", 0, 0)
	msg("cccccccccccc", "Already exists", 0, 0)
	msg("bbbbbbbbbbbb", "Download complete", 0, 0)
	msg("0123456789ab", "Download complete", 0, 0) // the image's id: no layer

	var got []runtime.PullProgress
	var tr pullTracker
	if err := tr.read(&stream, func(p runtime.PullProgress) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	want := []runtime.PullProgress{
		{LayersTotal: 1},
		{LayersTotal: 2},
		{LayersTotal: 2, BytesDone: 100, BytesTotal: 1000},
		{LayersTotal: 2, BytesDone: 150, BytesTotal: 1500},
		{LayersTotal: 2, BytesDone: 1050, BytesTotal: 1500},
		{LayersDone: 1, LayersTotal: 2, BytesDone: 1050, BytesTotal: 1500},
		{LayersDone: 2, LayersTotal: 3, BytesDone: 1050, BytesTotal: 1500},
		{LayersDone: 3, LayersTotal: 3, BytesDone: 1500, BytesTotal: 1500},
	}
	if len(got) != len(want) {
		t.Fatalf("progress %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// An error in the stream (the registry refused, the connection broke) is
// the pull's error.
func TestPullTrackerReturnsTheStreamError(t *testing.T) {
	t.Parallel()
	var stream bytes.Buffer
	_ = json.NewEncoder(&stream).Encode(jsonmessage.JSONMessage{ID: "aaaaaaaaaaaa", Status: "Pulling fs layer"})
	_ = json.NewEncoder(&stream).Encode(jsonmessage.JSONMessage{Error: &jsonmessage.JSONError{Message: "unauthorized"}})
	var tr pullTracker
	if err := tr.read(&stream, nil); err == nil || err.Error() != "unauthorized" {
		t.Fatalf("error %v, want unauthorized", err)
	}
	if err := (&pullTracker{}).read(bytes.NewBufferString("{not json"), nil); err == nil {
		t.Fatal("a broken stream is no error")
	}
}

// A pull the service refuses with an error status says why: the message
// of Docker's error object (sent before any progress), of a jsonmessage's
// error, else the status.
func TestPullRefusal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, want string }{
		{`{"message":"manifest unknown"}`, "manifest unknown"},
		{`{"errorDetail":{"message":"unauthorized"},"error":"unauthorized"}`, "unauthorized"},
		{`not json`, "status 500"},
	} {
		rec := httptest.NewRecorder()
		rec.WriteHeader(http.StatusInternalServerError)
		rec.WriteString(c.body)
		if err := pullRefusal(rec.Result()); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.body, err, c.want)
		}
	}
}
