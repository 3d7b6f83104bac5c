package devserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/readmodels"
)

// send makes an authenticated request with a JSON body.
func (r *running) send(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, r.creds.APIURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// The server describes itself at GET /v1/system (the leases it leads, its
// bus, every read model), and rebuilds its tenancy read model online, the
// one every request authenticates against, while it keeps serving.
func TestSystemAndOnlineRebuild(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(t.TempDir()))
	var sys maintenance.System
	await.Until(t, time.Minute, "the scheduler's lease held here", func() bool {
		code, body := r.get(t, "/v1/system", true)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/system = %d %s", code, body)
		}
		if err := json.Unmarshal(body, &sys); err != nil {
			t.Fatal(err)
		}
		for _, l := range sys.Leases {
			if l.Name == "scheduler" {
				return l.HeldHere && l.Since != nil
			}
		}
		return false
	})
	if sys.Store.Backend != "sqlite" || !strings.HasPrefix(sys.Store.DSN, "sqlite://") || sys.Store.Head == 0 {
		t.Errorf("store %+v", sys.Store)
	}
	if sys.Bus.Mode != "embedded" || !strings.HasPrefix(sys.Bus.URL, "nats://") || !sys.Bus.Connected {
		t.Errorf("bus %+v", sys.Bus)
	}
	if len(sys.ReadModels) != len(readmodels.Names()) || len(sys.Leases) < 2 || sys.DataDirFreeBytes <= 0 {
		t.Errorf("system %+v", sys)
	}

	code, body := r.send(t, "POST", "/v1/maintenance/rebuilds", `{"read_model":"tenancy"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST rebuild = %d %s", code, body)
	}
	var job maintenance.Rebuild
	if err := json.Unmarshal(body, &job); err != nil {
		t.Fatal(err)
	}
	await.Until(t, time.Minute, "the rebuild to end", func() bool {
		code, body := r.get(t, "/v1/maintenance/rebuilds/"+job.ID, true)
		if code != http.StatusOK {
			t.Fatalf("GET rebuild = %d %s", code, body)
		}
		if err := json.Unmarshal(body, &job); err != nil {
			t.Fatal(err)
		}
		return job.State != maintenance.StateRunning
	})
	if job.State != maintenance.StateDone {
		t.Fatalf("rebuild %+v", job)
	}
	if code, body := r.get(t, "/v1/auth/whoami", true); code != http.StatusOK {
		t.Fatalf("GET whoami after the rebuild = %d %s", code, body)
	}
}
