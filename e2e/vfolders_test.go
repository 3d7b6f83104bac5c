package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestDevVFolderMounts mounts virtual folders into real containers: a ro
// mount cannot be written (the container's write fails), a rw mount can
// (the file appears in the folder, readable through the file API), and
// mounts the requester may not have are refused before anything runs.
func TestDevVFolderMounts(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri)

	ro := d.mkfolder("ro-data")
	rw := d.mkfolder("rw-data")
	d.put(ro, "given", "data\n")

	// An interactive session, so its logs are read while it runs. The
	// refused write's error goes to /dev/null: sh writes it in pieces
	// that may interleave with the next line.
	c := d.create(map[string]any{
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
		"command": `sh -c 'cat /home/work/ro-data/given
if { echo x > /home/work/ro-data/new; } 2>/dev/null; then echo ro-written; else echo ro-refused; fi
if echo y > /home/work/out/new; then echo rw-written; else echo rw-refused; fi
echo done; sleep 30'`,
		"mounts": []map[string]any{
			{"name": "ro-data", "permission": "ro"},
			{"name": "rw-data", "path": "out"},
		},
	})
	d.awaitStatus(c.ID, c.Position, "RUNNING")
	d.awaitLogs(c.ID, "done")
	_, logs := d.logs(c.ID)
	for _, want := range []string{"data", "ro-refused", "rw-written"} {
		if !containsLine(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if got := d.fetch(rw, "new", http.StatusOK); got != "y\n" {
		t.Errorf("rw-data/new holds %q, want y", got)
	}
	d.fetch(ro, "new", http.StatusNotFound)
	d.awaitStatus(c.ID, d.terminate(c.ID), "TERMINATED")

	// Refused: a folder the requester has none of, a permission no
	// folder gives, a folder in the trash; each names its mount.
	for _, c := range []struct {
		mounts []map[string]any
		status int
		field  string
	}{
		{[]map[string]any{{"name": "someone-elses"}}, http.StatusBadRequest, "mounts[0].name"},
		{[]map[string]any{{"name": "ro-data"}, {"name": "rw-data", "path": "ro-data"}}, http.StatusBadRequest, "mounts"},
	} {
		d.refused(c.mounts, c.status, c.field)
	}
	d.call("DELETE", "/v1/vfolders/"+ro, nil, http.StatusOK, nil)
	d.refused([]map[string]any{{"name": "ro-data"}}, http.StatusConflict, "mounts[0]")
}

func containsLine(s, want string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// mkfolder creates a folder and returns its id.
func (d *devServer) mkfolder(name string) string {
	d.t.Helper()
	var res struct {
		ID string `json:"id"`
	}
	d.call("POST", "/v1/vfolders", map[string]any{"name": name}, http.StatusCreated, &res)
	return res.ID
}

// put uploads a file through the file API.
func (d *devServer) put(folder, path, content string) {
	d.t.Helper()
	d.raw("PUT", "/v1/vfolders/"+folder+"/files/content?path="+path, strings.NewReader(content), http.StatusCreated)
}

// fetch downloads a file and checks the status.
func (d *devServer) fetch(folder, path string, want int) string {
	d.t.Helper()
	return d.raw("GET", "/v1/vfolders/"+folder+"/files/content?path="+path, nil, want)
}

func (d *devServer) raw(method, path string, body io.Reader, want int) string {
	d.t.Helper()
	req, err := http.NewRequest(method, d.api+path, body)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	if resp.StatusCode != want {
		d.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	return string(raw)
}

// refused requests a session with mounts and checks the problem.
func (d *devServer) refused(mounts []map[string]any, status int, field string) {
	d.t.Helper()
	body := map[string]any{"image": podmantest.DefaultImage, "resources": map[string]any{"cpu": 1, "mem": "64m"}, "mounts": mounts}
	raw := d.call("POST", "/v1/sessions", body, status, nil)
	var p struct {
		Field string `json:"field"`
	}
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&p); err != nil || p.Field != field {
		d.t.Errorf("mounts %v: problem %s, want field %q", mounts, raw, field)
	}
}
