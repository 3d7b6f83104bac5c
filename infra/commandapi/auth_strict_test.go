package commandapi_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/auth/signing"
	"github.com/cairnhq/cairn/infra/httpapi"
)

// strictRequest is a request signed in strict mode by u for body (nil:
// none); swap, when not nil, is sent instead of the signed body.
func strictRequest(t *testing.T, method, path string, u testUser, body, swap []byte, header map[string]string, at time.Time) *http.Request {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if err := signing.SignHTTPStrict(req, u.AccessKey, u.SecretKey, apiVersion, at); err != nil {
		t.Fatal(err)
	}
	if swap != nil {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(swap)), int64(len(swap))
	}
	return req
}

// again is a copy of req to send once more (a replay).
func again(t *testing.T, req *http.Request, body []byte) *http.Request {
	t.Helper()
	r := req.Clone(t.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return r
}

// TestStrictSignedRequests: strict-mode requests are served once; the
// same request again is refused (401, replayed) while a Backend.AI-signed
// one may be sent again within the window (the documented limitation of
// that mode); a JSON body other than the signed one is refused and
// nothing is written.
func TestStrictSignedRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	alice := e.users[vfAlice]
	now := time.Now()

	who := strictRequest(t, "GET", "/v1/auth/whoami", alice, nil, nil, nil, now)
	r := e.send(t, again(t, who, nil))
	var p httpapi.Principal
	r.decode(t, &p)
	if r.status != http.StatusOK || p.AccessKey != alice.AccessKey || p.Method != httpapi.MethodSignature {
		t.Fatalf("strict whoami: %d %+v", r.status, p)
	}
	for range 2 {
		refused(t, e.send(t, again(t, who, nil)), "replayed")
	}
	for range 3 {
		if r := e.signed(t, "GET", "/v1/auth/whoami", alice.AccessKey, alice.SecretKey, "", now); r.status != http.StatusOK {
			t.Fatalf("a replayed Backend.AI-signed request: %d %s", r.status, r.body)
		}
	}

	// A body under its signature is served, once.
	json := map[string]string{"Content-Type": "application/json"}
	body := []byte(`{"name":"strict"}`)
	create := strictRequest(t, "POST", "/v1/vfolders", alice, body, nil, json, now)
	if r := e.send(t, again(t, create, body)); r.status != http.StatusCreated {
		t.Fatalf("strict POST: %d %s", r.status, r.body)
	}
	refused(t, e.send(t, again(t, create, body)), "replayed")

	// Another body under a valid signature: refused, nothing created, and
	// the signature not used up by the forgery.
	forged := []byte(`{"name":"forged"}`)
	good := []byte(`{"name":"second"}`)
	req := strictRequest(t, "POST", "/v1/vfolders", alice, good, forged, json, now)
	refused(t, e.send(t, again(t, req, forged)), "body-mismatch")
	r = e.send(t, again(t, req, good))
	if r.status != http.StatusCreated {
		t.Fatalf("the genuine request after a forged one: %d %s", r.status, r.body)
	}
	var created struct {
		Position uint64 `json:"position"`
	}
	r.decode(t, &created)
	if r := e.do(t, "GET", fmt.Sprintf("/v1/vfolders?wait_for_position=%d", created.Position), vfAlice, ""); r.status != http.StatusOK || strings.Contains(string(r.body), "forged") ||
		!strings.Contains(string(r.body), `"second"`) {
		t.Fatalf("folders: %d %s", r.status, r.body)
	}
}

// TestStrictSignedUploads: a streamed upload (above the body limit) under
// a strict signature is written when its bytes are the signed ones; with
// other bytes it is refused (401, body-mismatch) once they have been read
// and nothing is written: no file, no staging file. A small upload, read
// whole, is checked too.
func TestStrictSignedUploads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	alice := e.users[vfAlice]
	id, _ := e.mkfolder(t, vfAlice, `{"name":"uploads"}`)
	octets := map[string]string{"Content-Type": "application/octet-stream"}
	path := "/v1/vfolders/" + id + "/files/content?path="
	data := make([]byte, 200_000) // far above the 8 KiB body limit: streamed
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	now := time.Now()

	up := strictRequest(t, "PUT", path+"good.bin", alice, data, nil, octets, now)
	if r := e.send(t, again(t, up, data)); r.status != http.StatusCreated {
		t.Fatalf("strict upload: %d %s", r.status, r.body)
	}
	if got := e.download(t, vfAlice, id, "good.bin", "", http.StatusOK); !bytes.Equal(got, data) {
		t.Fatal("the uploaded file is not the signed body")
	}
	refused(t, e.send(t, again(t, up, data)), "replayed")

	other := bytes.Clone(data)
	other[len(other)-1] ^= 0xff // the last byte: found only at the end
	for _, tc := range []struct {
		name       string
		signed, as []byte
	}{
		{"streamed, last byte changed", data, other},
		{"streamed, truncated", data, data[:len(data)-1]},
		{"small, read whole", []byte("signed"), []byte("forged")},
	} {
		req := strictRequest(t, "PUT", path+"forged.bin", alice, tc.signed, tc.as, octets, now)
		r := e.send(t, again(t, req, tc.as))
		refused(t, r, "body-mismatch")
		e.download(t, vfAlice, id, "forged.bin", "", http.StatusNotFound)
	}

	src, err := e.vfs.MountSource(refOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			onDisk = append(onDisk, strings.TrimPrefix(p, src+"/"))
		}
		return err
	})
	if err != nil || strings.Join(onDisk, ",") != "good.bin" {
		t.Errorf("the folder holds %v (%v)", onDisk, err)
	}
}
