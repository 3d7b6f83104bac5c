package commandapi_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnhq/cairn/infra/await"
)

// doHeaders is do with request headers (set last).
func (e *env) doHeaders(t testing.TB, method, path, token, body string, header map[string]string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token(token))
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// tusMeta encodes Upload-Metadata.
func tusMeta(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(parts, ",")
}

func tusHeaders(kv ...string) map[string]string {
	h := map[string]string{"Tus-Resumable": "1.0.0"}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// tusCreate creates an upload of length bytes at path and returns its URL.
func (e *env) tusCreate(t *testing.T, token, folder, path string, length int, want int, extra ...string) (string, response) {
	t.Helper()
	h := tusHeaders(append([]string{"Upload-Length", strconv.Itoa(length), "Upload-Metadata", tusMeta("path", path, "filename", "x")}, extra...)...)
	r := e.raw(t, "POST", "/v1/vfolders/"+folder+"/uploads", token, nil, h)
	if r.status != want {
		t.Fatalf("create upload %s (%d bytes): %d, want %d: %s", path, length, r.status, want, r.body)
	}
	return r.header.Get("Location"), r
}

func (e *env) tusPatch(t *testing.T, token, url string, offset int, chunk []byte, checksum string, want int) response {
	t.Helper()
	h := tusHeaders("Upload-Offset", strconv.Itoa(offset), "Content-Type", "application/offset+octet-stream")
	if checksum != "" {
		h["Upload-Checksum"] = checksum
	}
	r := e.raw(t, "PATCH", url, token, bytes.NewReader(chunk), h)
	if r.status != want {
		t.Fatalf("PATCH %s at %d (%d bytes): %d, want %d: %s", url, offset, len(chunk), r.status, want, r.body)
	}
	return r
}

func (e *env) tusOffset(t *testing.T, token, url string) int {
	t.Helper()
	r := e.raw(t, "HEAD", url, token, nil, tusHeaders())
	if r.status != http.StatusOK {
		t.Fatalf("HEAD %s: %d", url, r.status)
	}
	n, err := strconv.Atoi(r.header.Get("Upload-Offset"))
	if err != nil {
		t.Fatalf("HEAD %s: Upload-Offset %q", url, r.header.Get("Upload-Offset"))
	}
	return n
}

func sha256Header(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256 " + base64.StdEncoding.EncodeToString(s[:])
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// A tus upload in chunks, each checked: a wrong checksum is refused (460)
// and the offset does not move, a wrong offset is 409, the file appears
// under its path (parents made) only once whole, byte-identical.
func TestTusUploadInChunksOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, vfAlice, `{"name":"tus"}`)

	r := e.raw(t, "OPTIONS", "/v1/vfolders/"+id+"/uploads", vfAlice, nil, nil)
	if r.status != http.StatusNoContent || r.header.Get("Tus-Version") != "1.0.0" || r.header.Get("Tus-Max-Size") != strconv.Itoa(maxUpload) ||
		!strings.Contains(r.header.Get("Tus-Extension"), "checksum") || r.header.Get("Tus-Checksum-Algorithm") != "sha1,sha256" {
		t.Fatalf("OPTIONS: %d %v", r.status, r.header)
	}

	data := randomBytes(t, 600_000)
	url, r := e.tusCreate(t, vfAlice, id, "dir/sub/f.bin", len(data), http.StatusCreated)
	if url != "/v1/vfolders/"+id+"/uploads/"+strings.TrimPrefix(url, "/v1/vfolders/"+id+"/uploads/") || r.header.Get("Upload-Offset") != "0" ||
		r.header.Get("Upload-Expires") == "" || r.header.Get("Tus-Resumable") != "1.0.0" {
		t.Fatalf("create: Location %q, headers %v", url, r.header)
	}
	var v struct {
		ID     string  `json:"id"`
		Path   string  `json:"path"`
		Length int64   `json:"length"`
		Offset int64   `json:"offset"`
		Done   bool    `json:"done"`
		File   *string `json:"file"`
	}
	r.decode(t, &v)
	if v.Path != "dir/sub/f.bin" || v.Length != int64(len(data)) || v.Offset != 0 || v.Done || !strings.HasSuffix(url, "/"+v.ID) {
		t.Fatalf("create answered %s", r.body)
	}
	h := e.raw(t, "HEAD", url, vfAlice, nil, tusHeaders())
	if h.status != http.StatusOK || h.header.Get("Upload-Length") != "600000" || h.header.Get("Upload-Metadata") != tusMeta("path", "dir/sub/f.bin", "filename", "x") ||
		h.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("HEAD: %d %v", h.status, h.header)
	}

	e.tusPatch(t, vfAlice, url, 0, data[:200_000], sha256Header(data[:200_000]), http.StatusNoContent)
	// A chunk whose checksum does not match: 460, discarded.
	wrong := sha256Header(data[:1])
	wantProblem(t, e.tusPatch(t, vfAlice, url, 200_000, data[200_000:400_000], wrong, 460), 460, "invalid", "")
	if got := e.tusOffset(t, vfAlice, url); got != 200_000 {
		t.Fatalf("offset after a refused chunk %d, want 200000", got)
	}
	wantProblem(t, e.tusPatch(t, vfAlice, url, 100_000, data[100_000:200_000], "", http.StatusConflict), http.StatusConflict, "conflict", "")
	s1 := sha1.Sum(data[200_000:400_000])
	r = e.tusPatch(t, vfAlice, url, 200_000, data[200_000:400_000], "sha1 "+base64.StdEncoding.EncodeToString(s1[:]), http.StatusNoContent)
	if r.header.Get("Upload-Offset") != "400000" {
		t.Fatalf("PATCH answered offset %q", r.header.Get("Upload-Offset"))
	}
	// Not there before the last byte.
	e.download(t, vfAlice, id, "dir/sub/f.bin", "", http.StatusNotFound)
	r = e.tusPatch(t, vfAlice, url, 400_000, data[400_000:], "", http.StatusNoContent)
	if r.header.Get("Upload-Offset") != "600000" {
		t.Fatalf("last PATCH answered offset %q", r.header.Get("Upload-Offset"))
	}
	if got := e.download(t, vfAlice, id, "dir/sub/f.bin", "", http.StatusOK); sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("the uploaded file differs from what was sent")
	}
	if r := e.raw(t, "HEAD", url, vfAlice, nil, tusHeaders()); r.status != http.StatusNotFound {
		t.Fatalf("HEAD of a finished upload: %d", r.status)
	}
	if u, err := e.vfs.RefreshUsage(t.Context(), refOf(t, id)); err != nil || u.Bytes != int64(len(data)) || u.Files != 3 {
		t.Fatalf("usage %+v, %v", u, err)
	}
}

// Refusals: the tus version, the headers, the size limit, the quota
// (reserved from creation, released by DELETE), an existing file.
func TestTusRefusalsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, vfAlice, `{"name":"tus-limits","quota":300000}`)
	base := "/v1/vfolders/" + id + "/uploads"

	r := e.raw(t, "POST", base, vfAlice, nil, map[string]string{"Upload-Length": "1", "Upload-Metadata": tusMeta("path", "f")})
	wantProblem(t, r, http.StatusPreconditionFailed, "invalid", "")
	if r.header.Get("Tus-Version") != "1.0.0" {
		t.Fatalf("412 without Tus-Version: %v", r.header)
	}
	for _, c := range []struct {
		header map[string]string
		status int
		kind   string
		field  string
	}{
		{tusHeaders("Upload-Metadata", tusMeta("path", "f")), 400, "invalid", "Upload-Length"},
		{tusHeaders("Upload-Length", "-1", "Upload-Metadata", tusMeta("path", "f")), 400, "invalid", "Upload-Length"},
		{tusHeaders("Upload-Defer-Length", "1", "Upload-Metadata", tusMeta("path", "f")), 400, "invalid", "Upload-Defer-Length"},
		{tusHeaders("Upload-Length", "1"), 400, "invalid", "Upload-Metadata"},
		{tusHeaders("Upload-Length", "1", "Upload-Metadata", "path !!!"), 400, "invalid", "Upload-Metadata"},
		{tusHeaders("Upload-Length", "1", "Upload-Metadata", tusMeta("path", "f", "overwrite", "yes")), 400, "invalid", "Upload-Metadata"},
		{tusHeaders("Upload-Length", "1", "Upload-Metadata", tusMeta("path", "../f")), 400, "invalid", "path"},
		{tusHeaders("Upload-Length", "1", "Upload-Metadata", tusMeta("path", ".cairn-staging/resumable/x")), 400, "invalid", "path"},
		{tusHeaders("Upload-Length", strconv.Itoa(maxUpload+1), "Upload-Metadata", tusMeta("path", "big")), 413, "too-large", ""},
		{tusHeaders("Upload-Length", "300001", "Upload-Metadata", tusMeta("path", "big")), 403, "quota-exceeded", ""},
	} {
		wantProblem(t, e.raw(t, "POST", base, vfAlice, nil, c.header), c.status, c.kind, c.field)
	}

	first, _ := e.tusCreate(t, vfAlice, id, "a", 200_000, http.StatusCreated)
	r = e.raw(t, "POST", base, vfAlice, nil, tusHeaders("Upload-Length", "100001", "Upload-Metadata", tusMeta("path", "b")))
	wantProblem(t, r, http.StatusForbidden, "quota-exceeded", "")
	if r := e.raw(t, "DELETE", first, vfAlice, nil, tusHeaders()); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if r := e.raw(t, "HEAD", first, vfAlice, nil, tusHeaders()); r.status != http.StatusNotFound {
		t.Fatalf("HEAD of an aborted upload: %d", r.status)
	}
	second, _ := e.tusCreate(t, vfAlice, id, "b", 100_001, http.StatusCreated)

	// A chunk: its media type, its offset header, its checksum header,
	// its length.
	r = e.raw(t, "PATCH", second, vfAlice, strings.NewReader("x"), tusHeaders("Upload-Offset", "0", "Content-Type", "application/octet-stream"))
	wantProblem(t, r, http.StatusUnsupportedMediaType, "invalid", "")
	r = e.raw(t, "PATCH", second, vfAlice, strings.NewReader("x"), tusHeaders("Content-Type", "application/offset+octet-stream"))
	wantProblem(t, r, http.StatusBadRequest, "invalid", "Upload-Offset")
	wantProblem(t, e.tusPatch(t, vfAlice, second, 0, []byte("x"), "md5 AAAA", 400), 400, "invalid", "Upload-Checksum")
	wantProblem(t, e.tusPatch(t, vfAlice, second, 0, make([]byte, 100_002), "", 413), 413, "too-large", "")
	if got := e.tusOffset(t, vfAlice, second); got != 0 {
		t.Fatalf("offset %d after refused chunks", got)
	}

	// An existing file: 409 unless overwrite is asked for.
	e.upload(t, vfAlice, id, "exists", []byte("old"), http.StatusCreated)
	wantProblem(t, e.raw(t, "POST", base, vfAlice, nil, tusHeaders("Upload-Length", "3", "Upload-Metadata", tusMeta("path", "exists"))), 409, "conflict", "")
	url, _ := e.tusCreate(t, vfAlice, id, "exists", 3, http.StatusCreated, "Upload-Metadata", tusMeta("path", "exists", "overwrite", "true"))
	e.tusPatch(t, vfAlice, url, 0, []byte("new"), "", http.StatusNoContent)
	if got := e.download(t, vfAlice, id, "exists", "", http.StatusOK); string(got) != "new" {
		t.Fatalf("exists holds %q", got)
	}
}

// creation-with-upload: the POST's body is the first chunk, here the
// whole file, and a zero-length upload is a file at once.
func TestTusCreationWithUploadOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, vfAlice, `{"name":"tus-cwu"}`)
	data := randomBytes(t, 50_000)
	h := tusHeaders("Upload-Length", strconv.Itoa(len(data)), "Upload-Metadata", tusMeta("path", "one/f"),
		"Content-Type", "application/offset+octet-stream", "Upload-Checksum", sha256Header(data))
	r := e.raw(t, "POST", "/v1/vfolders/"+id+"/uploads", vfAlice, bytes.NewReader(data), h)
	if r.status != http.StatusCreated || r.header.Get("Upload-Offset") != "50000" || !strings.Contains(string(r.body), `"done":true`) {
		t.Fatalf("creation with upload: %d %v %s", r.status, r.header, r.body)
	}
	if got := e.download(t, vfAlice, id, "one/f", "", http.StatusOK); !bytes.Equal(got, data) {
		t.Fatal("the file differs")
	}
	// A first chunk with a wrong checksum: the upload is refused whole.
	h["Upload-Checksum"], h["Upload-Metadata"] = sha256Header(data[1:]), tusMeta("path", "two/f")
	r = e.raw(t, "POST", "/v1/vfolders/"+id+"/uploads", vfAlice, bytes.NewReader(data), h)
	wantProblem(t, r, 460, "invalid", "")
	if u, err := e.vfs.RefreshUsage(t.Context(), refOf(t, id)); err != nil || u.Bytes != int64(len(data)) {
		t.Fatalf("usage after a refused creation %+v, %v: a reservation is left", u, err)
	}
	_, r = e.tusCreate(t, vfAlice, id, "empty", 0, http.StatusCreated)
	if !strings.Contains(string(r.body), `"done":true`) {
		t.Fatalf("an empty upload: %s", r.body)
	}
	if got := e.download(t, vfAlice, id, "empty", "", http.StatusOK); len(got) != 0 {
		t.Fatalf("empty holds %d bytes", len(got))
	}
}

// Another tenant, a user without access, and another user's upload: 404.
func TestTusAuthorizationOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, vfAlice, `{"name":"tus-authz"}`)
	url, _ := e.tusCreate(t, vfAlice, id, "f", 10, http.StatusCreated)
	for _, who := range []string{vfBob, vfCarol, vfEve} {
		if r := e.raw(t, "OPTIONS", "/v1/vfolders/"+id+"/uploads", who, nil, nil); r.status != http.StatusNotFound {
			t.Errorf("%s OPTIONS: %d", who, r.status)
		}
		if r := e.raw(t, "POST", "/v1/vfolders/"+id+"/uploads", who, nil, tusHeaders("Upload-Length", "1", "Upload-Metadata", tusMeta("path", "x"))); r.status != http.StatusNotFound {
			t.Errorf("%s POST: %d %s", who, r.status, r.body)
		}
		if r := e.raw(t, "HEAD", url, who, nil, tusHeaders()); r.status != http.StatusNotFound {
			t.Errorf("%s HEAD: %d", who, r.status)
		}
		if r := e.raw(t, "PATCH", url, who, strings.NewReader("0123456789"), tusHeaders("Upload-Offset", "0", "Content-Type", "application/offset+octet-stream")); r.status != http.StatusNotFound {
			t.Errorf("%s PATCH: %d %s", who, r.status, r.body)
		}
		if r := e.raw(t, "DELETE", url, who, nil, tusHeaders()); r.status != http.StatusNotFound {
			t.Errorf("%s DELETE: %d", who, r.status)
		}
	}
	if got := e.tusOffset(t, vfAlice, url); got != 0 {
		t.Fatalf("offset %d after others' attempts", got)
	}
	if r := e.raw(t, "HEAD", "/v1/vfolders/"+id+"/uploads/AAAAAAAAAAAAAAAAAAAAAAAAAA", vfAlice, nil, tusHeaders()); r.status != http.StatusNotFound {
		t.Fatalf("HEAD of an unknown upload: %d", r.status)
	}
}

// serve serves the env's app on a loopback port until the test ends.
func (e *env) serve(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.app.Listener(ln) }()
	t.Cleanup(func() {
		if err := e.app.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return "http://" + ln.Addr().String()
}

// A connection cut in the middle of a PATCH: HEAD gives the offset
// actually stored (what came before the cut), the resumed upload sends
// only the rest, and the file is byte-identical.
func TestTusResumeAfterCutConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	addr := e.serve(t)
	id, _ := e.mkfolder(t, vfAlice, `{"name":"tus-cut"}`)
	data := randomBytes(t, 400_000)
	url, _ := e.tusCreate(t, vfAlice, id, "f", len(data), http.StatusCreated)

	conn, err := net.Dial("tcp", strings.TrimPrefix(addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	half := len(data) / 2
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "PATCH %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"+
		"Content-Type: application/offset+octet-stream\r\nContent-Length: %d\r\n\r\n", url, e.token(vfAlice), len(data))
	w.Write(data[:half])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// The server stores what came as it reads it: once it has read it
	// all and seen the cut, HEAD reports it.
	var stored int
	await.Until(t, waitBound, "the half sent before the cut to be stored", func() bool {
		stored = e.tusOffset(t, vfAlice, url)
		return stored == half
	})
	e.tusPatch(t, vfAlice, url, stored, data[stored:], sha256Header(data[stored:]), http.StatusNoContent)
	if got := e.download(t, vfAlice, id, "f", "", http.StatusOK); sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("the resumed file differs from what was sent")
	}
}

// 300 small files uploaded over real connections, 16 at a time (as a page
// with bounded parallelism does, each a single creation-with-upload), all
// land, each byte-identical.
func TestTusManySmallFilesInParallel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	addr := e.serve(t)
	id, _ := e.mkfolder(t, vfAlice, `{"name":"tus-many"}`)
	const files, parallel = 300, 16
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: parallel, MaxIdleConnsPerHost: parallel}}
	defer client.CloseIdleConnections()
	contents := make([][]byte, files)
	for i := range contents {
		contents[i] = randomBytes(t, 1000+i*7)
	}
	var (
		wg   sync.WaitGroup
		next = make(chan int)
		errs = make(chan error, files)
	)
	for range parallel {
		wg.Go(func() {
			for i := range next {
				req, _ := http.NewRequest("POST", addr+"/v1/vfolders/"+id+"/uploads", bytes.NewReader(contents[i]))
				for k, v := range tusHeaders("Upload-Length", strconv.Itoa(len(contents[i])),
					"Upload-Metadata", tusMeta("path", fmt.Sprintf("bulk/d%02d/f%03d", i%10, i)),
					"Content-Type", "application/offset+octet-stream", "Authorization", "Bearer "+e.token(vfAlice)) {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated || resp.Header.Get("Upload-Offset") != strconv.Itoa(len(contents[i])) {
					errs <- fmt.Errorf("file %d: %d %s", i, resp.StatusCode, body)
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range files {
		r, _, err := e.vfs.Download(t.Context(), refOf(t, id), fmt.Sprintf("bulk/d%02d/f%03d", i%10, i))
		if err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, contents[i]) {
			t.Fatalf("file %d differs (%v)", i, err)
		}
	}
	if u, err := e.vfs.RefreshUsage(t.Context(), refOf(t, id)); err != nil || u.Files != files+11 {
		t.Fatalf("usage %+v, %v: want %d files and 11 directories", u, err, files)
	}
}

// The quota scope counts resumable uploads from their creation: two
// uploads into two folders of one owner, racing, that each fit the scope
// alone, cannot both be created; once the one created is aborted, the
// other fits.
func TestTusQuotaScopeCountsReservations(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, _ := e.mkfolder(t, vfAlice, `{"name":"tus-race-a"}`)
	b, _ := e.mkfolder(t, vfAlice, `{"name":"tus-race-b"}`)
	e.setScopeQuota(t, 250_000)
	defer e.setScopeQuota(t, 0)
	type answer struct {
		status   int
		location string
	}
	answers := make(chan answer, 2)
	for _, id := range []string{a, b} {
		go func() {
			r := e.raw(t, "POST", "/v1/vfolders/"+id+"/uploads", vfAlice, nil,
				tusHeaders("Upload-Length", "150000", "Upload-Metadata", tusMeta("path", "big.bin")))
			answers <- answer{r.status, r.header.Get("Location")}
		}()
	}
	x, y := <-answers, <-answers
	if x.status == http.StatusForbidden {
		x, y = y, x
	}
	if x.status != http.StatusCreated || y.status != http.StatusForbidden {
		t.Fatalf("statuses %d and %d, want one 201 and one 403", x.status, y.status)
	}
	if r := e.raw(t, "DELETE", x.location, vfAlice, nil, tusHeaders()); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	e.tusCreate(t, vfAlice, b, "big.bin", 150_000, http.StatusCreated)
}
