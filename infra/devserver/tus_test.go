package devserver

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// tus sends one tus request with the superadmin's token and returns the
// answer's status, headers and body.
func (r *running) tus(t *testing.T, method, path string, body []byte, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, r.creds.APIURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+r.creds.Token)
	req.Header.Set("Tus-Resumable", "1.0.0")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

// A resumable upload outlives a restart of `cairn dev`: its bytes are on
// the folder's storage host, HEAD gives the offset stored before the
// stop, and the rest completes a byte-identical file. The server's upload
// limit applies to it (Tus-Max-Size, 413 at creation).
func TestTusUploadResumesAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.VFolderMaxUpload = 1 << 20
	first := start(t, cfg)
	folder := first.mkfolder(t, "tus")
	base := "/v1/vfolders/" + folder + "/uploads"

	status, h, _ := first.tus(t, http.MethodOptions, base, nil, nil)
	if status != http.StatusNoContent || h.Get("Tus-Max-Size") != strconv.Itoa(1<<20) {
		t.Fatalf("OPTIONS: %d %v", status, h)
	}
	meta := "path " + base64.StdEncoding.EncodeToString([]byte("runs/1/model.bin"))
	if status, _, body := first.tus(t, http.MethodPost, base, nil, map[string]string{"Upload-Length": strconv.Itoa(1<<20 + 1), "Upload-Metadata": meta}); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("an upload over the limit: %d %s", status, body)
	}

	data := make([]byte, 700_000)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	status, h, body := first.tus(t, http.MethodPost, base, nil, map[string]string{"Upload-Length": strconv.Itoa(len(data)), "Upload-Metadata": meta})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	url := h.Get("Location")
	chunk := map[string]string{"Content-Type": "application/offset+octet-stream", "Upload-Offset": "0"}
	if status, _, body := first.tus(t, http.MethodPatch, url, data[:300_000], chunk); status != http.StatusNoContent {
		t.Fatalf("first chunk: %d %s", status, body)
	}
	first.stop(t)

	second := start(t, cfg)
	status, h, _ = second.tus(t, http.MethodHead, url, nil, nil)
	if status != http.StatusOK || h.Get("Upload-Offset") != "300000" || h.Get("Upload-Length") != "700000" {
		t.Fatalf("HEAD after a restart: %d %v", status, h)
	}
	chunk["Upload-Offset"] = "300000"
	if status, _, body := second.tus(t, http.MethodPatch, url, data[300_000:], chunk); status != http.StatusNoContent {
		t.Fatalf("the rest: %d %s", status, body)
	}
	status, got := second.get(t, "/v1/vfolders/"+folder+"/files/content?path=runs/1/model.bin", true)
	if status != http.StatusOK || sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("download: %d, %d bytes, not what was sent", status, len(got))
	}
}
