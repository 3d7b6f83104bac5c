package devserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// call sends a JSON request with the superadmin's token and decodes the
// answer into out (if not nil), failing unless it has status want.
func (r *running) call(t *testing.T, method, path string, in any, want int, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.creds.APIURL+path, body)
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
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
}

// mkfolder makes a virtual folder and returns its id.
func (r *running) mkfolder(t *testing.T, name string) string {
	t.Helper()
	var res struct {
		ID string `json:"id"`
	}
	r.call(t, http.MethodPost, "/v1/vfolders", map[string]any{"name": name}, http.StatusCreated, &res)
	return res.ID
}

// paced is a reader of size bytes (a pattern) that delivers at most rate
// bytes a second, in chunks of chunk bytes, and hashes what it delivered.
// After stallAfter bytes (if > 0) it stalls until stop is closed.
type paced struct {
	size, sent, stallAfter int64
	chunk                  int
	rate                   float64 // bytes a second; 0: as fast as read
	start                  time.Time
	stop                   <-chan struct{}
	hash                   interface {
		io.Writer
		Sum([]byte) []byte
	}
}

func newPaced(size int64, chunk int, rate float64, stallAfter int64, stop <-chan struct{}) *paced {
	return &paced{size: size, chunk: chunk, rate: rate, stallAfter: stallAfter, stop: stop, hash: sha256.New()}
}

func (p *paced) Read(b []byte) (int, error) {
	if p.sent >= p.size {
		return 0, io.EOF
	}
	if p.stallAfter > 0 && p.sent >= p.stallAfter {
		<-p.stop
		return 0, io.ErrUnexpectedEOF
	}
	if p.start.IsZero() {
		p.start = time.Now()
	}
	if p.rate > 0 {
		// Wait until the bytes sent so far are due at the rate.
		due := p.start.Add(time.Duration(float64(p.sent) / p.rate * float64(time.Second)))
		time.Sleep(time.Until(due))
	}
	n := int(min(int64(len(b)), int64(p.chunk), p.size-p.sent))
	for i := range b[:n] {
		b[i] = byte((p.sent + int64(i)) * 7 % 251)
	}
	p.hash.Write(b[:n])
	p.sent += int64(n)
	return n, nil
}

func (p *paced) sum() string { return hex.EncodeToString(p.hash.Sum(nil)) }

// upload PUTs body (of size bytes) as the file path of folder and returns
// the answer's status and body.
func (r *running) upload(t *testing.T, folder, path string, body io.Reader, size int64) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, r.creds.APIURL+"/v1/vfolders/"+folder+"/files/content?path="+url.QueryEscape(path), body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// filesUnder lists the regular files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fileHash is the sha256 of the one file named name under dir.
func fileHash(t *testing.T, dir, name string) string {
	t.Helper()
	var found []string
	for _, f := range filesUnder(t, dir) {
		if filepath.Base(f) == name {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one file %s under %s, found %v", name, dir, found)
	}
	f, err := os.Open(filepath.Join(dir, found[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Small timeouts: the old total deadline (HTTPReadTimeout) is short, the
// upload idle timeout long beside the trickle's pauses.
const (
	uploadReadTimeout = time.Second
	uploadIdleTimeout = 3 * time.Second
)

// An upload trickling for three times the read timeout, never pausing
// near the idle timeout, is stored whole; one that stalls is cut with 408
// and leaves no file, whole or partial, in the folder.
func TestUploadsOutlastTheReadTimeoutAndStalledOnesAreCut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	cfg := testConfig(dir)
	cfg.HTTPReadTimeout, cfg.UploadIdleTimeout = uploadReadTimeout, uploadIdleTimeout
	r := start(t, cfg)
	folder := r.mkfolder(t, "uploads")
	vfolders := filepath.Join(dir, vfolderDir)

	// 64 KiB every 20ms for 3s: 3 MiB.
	const chunk = 64 << 10
	size := int64(3*uploadReadTimeout/(20*time.Millisecond)) * chunk
	slow := newPaced(size, chunk, float64(chunk)/0.02, 0, nil)
	status, body := r.upload(t, folder, "slow.bin", slow, size)
	if status != http.StatusCreated {
		t.Fatalf("an upload trickling for %s (read timeout %s) answered %d: %s", 3*uploadReadTimeout, uploadReadTimeout, status, body)
	}
	if got := fileHash(t, vfolders, "slow.bin"); got != slow.sum() {
		t.Fatalf("the stored file's sha256 is %s; the upload's %s", got, slow.sum())
	}

	stop := make(chan struct{})
	defer close(stop)
	stalled := newPaced(1<<20, chunk, 0, 256<<10, stop)
	status, body = r.upload(t, folder, "stalled.bin", stalled, 1<<20)
	if status != http.StatusRequestTimeout {
		t.Fatalf("a stalled upload answered %d, want 408: %s", status, body)
	}
	var p httpapi.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Status != http.StatusRequestTimeout || p.Field == "path" {
		t.Fatalf("a stalled upload's problem: %+v", p)
	}
	// Nothing of it on disk, staged or in place; the folder lists only the
	// first file.
	if files := filesUnder(t, vfolders); len(files) != 1 || filepath.Base(files[0]) != "slow.bin" {
		t.Fatalf("files in the folders after a stalled upload: %v, want only slow.bin", files)
	}
	var listing struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	r.call(t, http.MethodGet, "/v1/vfolders/"+folder+"/files", nil, http.StatusOK, &listing)
	var names []string
	for _, it := range listing.Items {
		names = append(names, it.Name)
	}
	if strings.Join(names, ",") != "slow.bin" {
		t.Fatalf("the folder lists %v after a stalled upload, want [slow.bin]", names)
	}
	// The audit trail records what the client was answered.
	q := "/v1/audit?action=" + url.QueryEscape("PUT /v1/vfolders/:id/files/content")
	await.Until(t, time.Minute, "the audit trail to record the two uploads", func() bool {
		var page struct {
			Items []struct {
				Status int `json:"status"`
			} `json:"items"`
		}
		r.call(t, http.MethodGet, q, nil, http.StatusOK, &page)
		var statuses []int
		for _, it := range page.Items {
			statuses = append(statuses, it.Status)
		}
		if len(statuses) == 2 && (!slices.Contains(statuses, http.StatusCreated) || !slices.Contains(statuses, http.StatusRequestTimeout)) {
			t.Fatalf("the audit trail records the uploads as %v, want 201 and 408", statuses)
		}
		return len(statuses) == 2
	})
}

// The requirement, literally: a 1 GiB upload at 1 MiB/s (about
// 17 minutes) works with the default timeouts. make test-long runs it.
func TestLongUploadOfOneGiBAtOneMiBPerSecond(t *testing.T) {
	if os.Getenv("CAIRN_LONG_TESTS") != "1" {
		t.Skip("CAIRN_LONG_TESTS is unset: this test takes about 17 minutes (make test-long runs it)")
	}
	dir := filepath.Join(t.TempDir(), "data")
	r := start(t, testConfig(dir))
	folder := r.mkfolder(t, "big")
	const size = 1 << 30
	body := newPaced(size, 64<<10, 1<<20, 0, nil)
	status, raw := r.upload(t, folder, "big.bin", body, size)
	if status != http.StatusCreated {
		t.Fatalf("a 1 GiB upload at 1 MiB/s answered %d: %s", status, raw)
	}
	if got := fileHash(t, filepath.Join(dir, vfolderDir), "big.bin"); got != body.sum() {
		t.Fatalf("the stored file's sha256 is %s; the upload's %s", got, body.sum())
	}
}
