package devserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// do sends a request with the bootstrap token; a body that is not a
// *strings.Reader or *bytes.Reader is sent chunked (no Content-Length).
func (r *running) do(t *testing.T, method, path string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, r.creds.APIURL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// mkfolderWithQuota creates a folder and returns its id and its quota as the API
// shows it.
func (r *running) mkfolderWithQuota(t *testing.T, body string) (string, int64) {
	t.Helper()
	status, _, b := r.do(t, "POST", "/v1/vfolders", strings.NewReader(body))
	var w struct {
		ID       string `json:"id"`
		Position uint64 `json:"position"`
	}
	if status != http.StatusCreated || json.Unmarshal(b, &w) != nil {
		t.Fatalf("create %s: %d %s", body, status, b)
	}
	status, _, b = r.do(t, "GET", fmt.Sprintf("/v1/vfolders/%s?wait_for_position=%d", w.ID, w.Position), nil)
	var f struct {
		Quota int64 `json:"quota"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &f) != nil {
		t.Fatalf("get %s: %d %s", w.ID, status, b)
	}
	return w.ID, f.Quota
}

// chunked hides the length of a reader, so that the client sends it
// chunked and the server learns its size only by reading it.
type chunked struct{ io.Reader }

// wantProblem checks a problem+json answer of status and kind.
func wantProblem(t *testing.T, what string, status int, h http.Header, b []byte, wantStatus int, kind string) {
	t.Helper()
	var p httpapi.Problem
	if status != wantStatus || h.Get("Content-Type") != httpapi.ProblemContentType || json.Unmarshal(b, &p) != nil || p.Kind != kind || p.Status != wantStatus {
		t.Fatalf("%s: %d %s %s, want %d problem+json of kind %s", what, status, h.Get("Content-Type"), b, wantStatus, kind)
	}
}

// files lists what a folder's directory holds, its staging directory's
// contents included.
func files(t *testing.T, dataDir, id string) []string {
	t.Helper()
	dir := filepath.Join(dataDir, vfolderDir, id[34:], id)
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir || (d.IsDir() && d.Name() == vfstorage.ReservedName) {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The default quota applies to folders created without one, through the
// same enforcement as a quota asked for; the upload limit holds even
// where the quota would allow more; refused uploads leave nothing.
func TestVFolderDefaultQuotaAndUploadLimit(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.VFolderDefaultQuota, cfg.VFolderMaxUpload = 100_000, 50_000
	r := start(t, cfg)

	plain, q := r.mkfolderWithQuota(t, `{"name":"plain"}`)
	if q != 100_000 {
		t.Fatalf("a folder created without a quota has quota %d, want the default 100000", q)
	}
	roomy, q := r.mkfolderWithQuota(t, `{"name":"roomy","quota":1000000}`)
	if q != 1_000_000 {
		t.Fatalf("quota %d, want the one asked for", q)
	}
	put := func(id, name string, body io.Reader) (int, http.Header, []byte) {
		return r.do(t, "PUT", "/v1/vfolders/"+id+"/files/content?path="+name, body)
	}

	// Over the upload limit, within the quota: 413, announced or not.
	big := bytes.Repeat([]byte("x"), 60_000)
	status, h, b := put(roomy, "big", bytes.NewReader(big))
	wantProblem(t, "an upload over the limit", status, h, b, http.StatusRequestEntityTooLarge, "too-large")
	status, h, b = put(roomy, "big", chunked{bytes.NewReader(big)})
	wantProblem(t, "a chunked upload over the limit", status, h, b, http.StatusRequestEntityTooLarge, "too-large")
	if got := files(t, cfg.DataDir, roomy); len(got) != 0 {
		t.Fatalf("refused uploads left %v", got)
	}

	// The default quota: two files of 40 kB fit in 100 kB, a third does not.
	part := bytes.Repeat([]byte("y"), 40_000)
	for _, name := range []string{"a", "b"} {
		if status, _, b := put(plain, name, bytes.NewReader(part)); status != http.StatusCreated {
			t.Fatalf("upload %s: %d %s", name, status, b)
		}
	}
	status, h, b = put(plain, "c", chunked{bytes.NewReader(part)})
	wantProblem(t, "an upload over the default quota", status, h, b, http.StatusForbidden, "quota-exceeded")
	if got := files(t, cfg.DataDir, plain); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("the folder holds %v, want [a b]", got)
	}

	// The owner's quota scope sums what its folders hold.
	status, _, b = r.do(t, "GET", "/v1/vfolders/quota-scope", nil)
	var scope struct {
		Folders int   `json:"folders"`
		Bytes   int64 `json:"bytes"`
		Files   int64 `json:"files"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &scope) != nil || scope.Folders != 2 || scope.Bytes != 80_000 || scope.Files != 2 {
		t.Fatalf("quota scope: %d %s, want 2 folders holding 80000 bytes in 2 files", status, b)
	}
}

// NoLimit disables the default quota and the upload limit.
func TestVFolderLimitsDisabled(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t.TempDir())
	cfg.VFolderDefaultQuota, cfg.VFolderMaxUpload = NoLimit, NoLimit
	r := start(t, cfg)
	id, q := r.mkfolderWithQuota(t, `{"name":"plain"}`)
	if q != 0 {
		t.Fatalf("quota %d, want none", q)
	}
	body := bytes.Repeat([]byte("z"), 1<<20)
	if status, _, b := r.do(t, "PUT", "/v1/vfolders/"+id+"/files/content?path=f", bytes.NewReader(body)); status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, b)
	}
}

// The upload limit is the run-time setting vfolder.max_upload_size: the
// flag seeds it, a value an admin sets applies to the next upload without
// a restart, and it wins over the flag after a restart too.
func TestVFolderUploadLimitSetting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.VFolderMaxUpload = 50_000
	r := start(t, cfg)
	id, _ := r.mkfolderWithQuota(t, `{"name":"up","quota":1000000}`)
	big := bytes.Repeat([]byte("x"), 60_000)
	put := func(r *running, name string) (int, http.Header, []byte) {
		return r.do(t, "PUT", "/v1/vfolders/"+id+"/files/content?path="+name, bytes.NewReader(big))
	}
	upload := func(r *running) (value, def float64) {
		t.Helper()
		status, _, b := r.do(t, "GET", "/v1/settings", nil)
		var list struct {
			Items []struct {
				Key            string
				Value, Default any
				Flag           string
			}
		}
		if status != http.StatusOK || json.Unmarshal(b, &list) != nil {
			t.Fatalf("GET /v1/settings: %d %s", status, b)
		}
		for _, s := range list.Items {
			v, vok := s.Value.(float64)
			d, dok := s.Default.(float64)
			if s.Key == "vfolder.max_upload_size" && s.Flag == "vfolder-max-upload" && vok && dok {
				return v, d
			}
		}
		t.Fatalf("no upload limit in %s", b)
		return 0, 0
	}
	if v, d := upload(r); v != 50_000 || d != 50_000 {
		t.Fatalf("upload limit %v (default %v), want the flag's 50000", v, d)
	}
	status, h, b := put(r, "a")
	wantProblem(t, "an upload over the flag's limit", status, h, b, http.StatusRequestEntityTooLarge, "too-large")

	if status, _, b := r.do(t, "PATCH", "/v1/settings", strings.NewReader(`{"vfolder.max_upload_size":100000}`)); status != http.StatusOK {
		t.Fatalf("PATCH /v1/settings: %d %s", status, b)
	}
	if status, _, b := put(r, "a"); status != http.StatusCreated {
		t.Fatalf("an upload under the new limit: %d %s", status, b)
	}
	r.stop(t)

	cfg.VFolderMaxUpload = 30_000
	again := start(t, cfg)
	if v, d := upload(again); v != 100_000 || d != 30_000 {
		t.Fatalf("after a restart with another flag: limit %v (default %v), want the admin's 100000 (default 30000)", v, d)
	}
	if status, _, b := put(again, "b"); status != http.StatusCreated {
		t.Fatalf("an upload under the admin's limit after a restart: %d %s", status, b)
	}
}
