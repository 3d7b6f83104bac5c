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
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

type vfolderAnswer struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Relation   string `json:"relation"`
	Effective  string `json:"effective_permission"`
	Position   uint64 `json:"position"`
	StatusMsg  string `json:"status_message"`
	OwnerType  string `json:"ownership_type"`
	Permission string `json:"permission"`
	Usage      *struct {
		Bytes int64 `json:"bytes"`
		Files int64 `json:"files"`
	} `json:"usage"`
}

// mkfolder creates a folder and returns its id and position.
func (e *env) mkfolder(t testing.TB, token, body string) (string, uint64) {
	t.Helper()
	r := e.do(t, "POST", "/v1/vfolders", token, body)
	if r.status != http.StatusCreated {
		t.Fatalf("create folder %s: %d %s", body, r.status, r.body)
	}
	var w struct {
		ID       string `json:"id"`
		Position uint64 `json:"position"`
	}
	r.decode(t, &w)
	return w.ID, w.Position
}

func (e *env) folderAt(t *testing.T, token, id string, pos uint64) (int, vfolderAnswer) {
	t.Helper()
	r := e.do(t, "GET", fmt.Sprintf("/v1/vfolders/%s?wait_for_position=%d", id, pos), token, "")
	var v vfolderAnswer
	if r.status == http.StatusOK {
		r.decode(t, &v)
	}
	return r.status, v
}

// raw sends a request with a raw body and headers.
func (e *env) raw(t *testing.T, method, path, token string, body io.Reader, header map[string]string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("Authorization", "Bearer "+e.token(token))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func wantProblem(t *testing.T, r response, status int, kind, field string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	p := r.problem(t)
	if p.Kind != kind || (field != "" && p.Field != field) {
		t.Fatalf("problem %+v, want kind %s field %q", p, kind, field)
	}
}

func TestVFolderLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, pos := e.mkfolder(t, vfAlice, `{"name":"data","cloneable":true}`)
	status, v := e.folderAt(t, vfAlice, id, pos)
	if status != http.StatusOK || v.Name != "data" || v.Relation != "own" || v.Effective != "wd" || v.Usage == nil {
		t.Fatalf("GET: %d %+v", status, v)
	}
	// Another tenant, and a user it is not shared with, see nothing.
	for _, token := range []string{vfEve, vfCarol} {
		if status, _ := e.folderAt(t, token, id, pos); status != http.StatusNotFound {
			t.Errorf("%s: GET = %d, want 404", token, status)
		}
		wantProblem(t, e.do(t, "POST", "/v1/vfolders/"+id+"/rename", token, `{"name":"x"}`), http.StatusNotFound, "not-found", "")
	}
	wantProblem(t, e.do(t, "POST", "/v1/vfolders", vfAlice, `{"name":"data"}`), http.StatusConflict, "conflict", "")
	wantProblem(t, e.do(t, "POST", "/v1/vfolders", vfAlice, `{"name":"a/b"}`), http.StatusBadRequest, "invalid", "name")
	wantProblem(t, e.do(t, "POST", "/v1/vfolders", vfAlice, `{"name":"x","colour":"red"}`), http.StatusBadRequest, "invalid", "colour")
	wantProblem(t, e.do(t, "GET", "/v1/vfolders/not-a-uuid", vfAlice, ""), http.StatusNotFound, "not-found", "")

	// Invite bob; he accepts and sees it shared, read-only.
	r := e.do(t, "POST", "/v1/vfolders/"+id+"/invitations", vfAlice, `{"email":"bob@cairn.test","permission":"ro"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("invite: %d %s", r.status, r.body)
	}
	var inv struct {
		ID       string `json:"id"`
		Position uint64 `json:"position"`
	}
	r.decode(t, &inv)
	r = e.do(t, "GET", fmt.Sprintf("/v1/vfolder-invitations?state=pending&wait_for_position=%d", inv.Position), vfBob, "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), inv.ID) || !strings.Contains(string(r.body), `"folder_name":"data"`) {
		t.Fatalf("bob's invitations: %d %s", r.status, r.body)
	}
	wantProblem(t, e.do(t, "POST", "/v1/vfolder-invitations/"+inv.ID+"/accept", vfCarol, ""), http.StatusNotFound, "not-found", "")
	r = e.do(t, "POST", "/v1/vfolder-invitations/"+inv.ID+"/accept", vfBob, "")
	if r.status != http.StatusOK {
		t.Fatalf("accept: %d %s", r.status, r.body)
	}
	var acc struct{ Position uint64 }
	r.decode(t, &acc)
	r = e.do(t, "GET", fmt.Sprintf("/v1/vfolders?relation=shared&wait_for_position=%d", acc.Position), vfBob, "")
	var list struct{ Items []vfolderAnswer }
	r.decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != id || list.Items[0].Effective != "ro" || list.Items[0].Relation != "shared" {
		t.Fatalf("bob's shared folders: %s", r.body)
	}
	// ro: bob reads, never writes.
	wantProblem(t, e.raw(t, "PUT", "/v1/vfolders/"+id+"/files/content?path=x", vfBob, strings.NewReader("x"), nil), http.StatusForbidden, "forbidden", "")
	if r := e.do(t, "GET", "/v1/vfolders/"+id+"/files", vfBob, ""); r.status != http.StatusOK {
		t.Fatalf("bob lists: %d %s", r.status, r.body)
	}
	if r := e.do(t, "POST", "/v1/vfolders/"+id+"/leave", vfBob, ""); r.status != http.StatusOK {
		t.Fatalf("leave: %d %s", r.status, r.body)
	}

	// Rename, trash, restore, trash, delete forever (in the background), purge.
	post := func(path, body string, want int) uint64 {
		t.Helper()
		r := e.do(t, "POST", "/v1/vfolders/"+id+path, vfAlice, body)
		if r.status != want {
			t.Fatalf("POST %s: %d %s", path, r.status, r.body)
		}
		var w struct{ Position uint64 }
		r.decode(t, &w)
		return w.Position
	}
	post("/rename", `{"name":"renamed"}`, http.StatusOK)
	if r := e.do(t, "DELETE", "/v1/vfolders/"+id, vfAlice, ""); r.status != http.StatusOK {
		t.Fatalf("trash: %d %s", r.status, r.body)
	}
	post("/restore", "", http.StatusOK)
	if r := e.do(t, "DELETE", "/v1/vfolders/"+id, vfAlice, ""); r.status != http.StatusOK {
		t.Fatalf("trash: %d %s", r.status, r.body)
	}
	pos = post("/delete-forever", "", http.StatusAccepted)
	v = e.awaitFolder(t, vfAlice, id, pos, func(v vfolderAnswer) bool { return v.Status == string(domain.VFolderDeleteComplete) })
	if v.Usage != nil {
		t.Errorf("a deleted folder still has usage %+v", v.Usage)
	}
	pos = post("/purge", "", http.StatusOK)
	if status, _ := e.folderAt(t, vfAlice, id, pos); status != http.StatusNotFound {
		t.Fatalf("purged folder: GET = %d", status)
	}
	e.mkfolder(t, vfAlice, `{"name":"renamed"}`)
}

// awaitFolder polls a folder until cond holds.
func (e *env) awaitFolder(t *testing.T, token, id string, pos uint64, cond func(vfolderAnswer) bool) vfolderAnswer {
	t.Helper()
	var status int
	var v vfolderAnswer
	defer func() {
		if t.Failed() {
			t.Logf("folder %s: last answer %d %+v", id, status, v)
		}
	}()
	await.Until(t, waitBound, "folder "+id+" to match", func() bool {
		status, v = e.folderAt(t, token, id, pos)
		return status == http.StatusOK && cond(v)
	})
	return v
}

func TestVFolderCloneOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, vfAlice, `{"name":"src","cloneable":true}`)
	if r := e.do(t, "POST", "/v1/vfolders/"+id+"/files/mkdir", vfAlice, `{"path":"a"}`); r.status != http.StatusCreated {
		t.Fatalf("mkdir: %d %s", r.status, r.body)
	}
	e.upload(t, vfAlice, id, "a/b.txt", []byte("hello"), http.StatusCreated)
	r := e.do(t, "POST", "/v1/vfolders/"+id+"/clone", vfAlice, `{"name":"copy"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("clone: %d %s", r.status, r.body)
	}
	var w struct {
		ID       string
		Position uint64
	}
	r.decode(t, &w)
	e.awaitFolder(t, vfAlice, w.ID, w.Position, func(v vfolderAnswer) bool { return v.Status == "ready" })
	if got := e.download(t, vfAlice, w.ID, "a/b.txt", "", http.StatusOK); string(got) != "hello" {
		t.Fatalf("the copy holds %q", got)
	}
}

func (e *env) upload(t *testing.T, token, id, path string, data []byte, want int) response {
	t.Helper()
	r := e.raw(t, "PUT", "/v1/vfolders/"+id+"/files/content?path="+path, token, bytes.NewReader(data),
		map[string]string{"Content-Type": "application/octet-stream"})
	if r.status != want {
		t.Fatalf("upload %s: %d, want %d: %s", path, r.status, want, r.body)
	}
	return r
}

func (e *env) download(t *testing.T, token, id, path, rng string, want int) []byte {
	t.Helper()
	h := map[string]string{}
	if rng != "" {
		h["Range"] = rng
	}
	r := e.raw(t, "GET", "/v1/vfolders/"+id+"/files/content?path="+path, token, nil, h)
	if r.status != want {
		t.Fatalf("download %s (%s): %d, want %d: %s", path, rng, r.status, want, r.body)
	}
	return r.body
}

// Files: upload beyond the server's body limit (streamed), list with
// paging, ranges, mkdir, move, delete; refusals leave nothing behind.
func TestVFolderFilesOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, vfAlice, `{"name":"files","quota":300000}`)
	big := make([]byte, 200_000) // far above the 8 KiB body limit
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	e.upload(t, vfAlice, id, "big.bin", big, http.StatusCreated)
	if got := e.download(t, vfAlice, id, "big.bin", "", http.StatusOK); !bytes.Equal(got, big) {
		t.Fatalf("downloaded %d bytes, not what was uploaded", len(got))
	}
	for _, c := range []struct {
		rng  string
		want []byte
		code int
	}{
		{"bytes=10-19", big[10:20], http.StatusPartialContent},
		{"bytes=199990-", big[199990:], http.StatusPartialContent},
		{"bytes=-5", big[len(big)-5:], http.StatusPartialContent},
		{"bytes=0-1,5-6", big, http.StatusOK},
		{"bytes=300000-", nil, http.StatusRequestedRangeNotSatisfiable},
	} {
		got := e.download(t, vfAlice, id, "big.bin", c.rng, c.code)
		if c.code != http.StatusRequestedRangeNotSatisfiable && !bytes.Equal(got, c.want) {
			t.Errorf("range %s: %d bytes, want %d", c.rng, len(got), len(c.want))
		}
	}
	// Over the folder's quota: 403, nothing left.
	r := e.upload(t, vfAlice, id, "more.bin", big, http.StatusForbidden)
	if p := r.problem(t); p.Kind != "quota-exceeded" {
		t.Fatalf("over quota: %+v", p)
	}
	// Over the upload limit: 413.
	huge := make([]byte, maxUpload+1)
	r = e.upload(t, vfAlice, id, "huge.bin", huge, http.StatusRequestEntityTooLarge)
	if p := r.problem(t); p.Kind != "too-large" {
		t.Fatalf("over the upload limit: %+v", p)
	}
	// Over the owner's quota scope: 403.
	other, _ := e.mkfolder(t, vfAlice, `{"name":"other"}`)
	e.setScopeQuota(t, 250_000)
	r = e.upload(t, vfAlice, other, "x.bin", big[:100_000], http.StatusForbidden)
	if p := r.problem(t); p.Kind != "quota-exceeded" {
		t.Fatalf("over the scope: %+v", p)
	}
	e.upload(t, vfAlice, other, "y.bin", big[:40_000], http.StatusCreated)
	e.setScopeQuota(t, 0)

	// Path traversal is 400 naming the path.
	for _, bad := range []string{"../escape", "/etc/passwd", "a/../../b"} {
		r := e.upload(t, vfAlice, id, bad, []byte("x"), http.StatusBadRequest)
		if p := r.problem(t); p.Field != "path" || !strings.Contains(p.Detail, bad) {
			t.Errorf("upload to %q: %+v", bad, p)
		}
	}
	wantProblem(t, e.do(t, "GET", "/v1/vfolders/"+id+"/files?path=../..", vfAlice, ""), http.StatusBadRequest, "invalid", "path")

	// Directories and paging.
	if r := e.do(t, "POST", "/v1/vfolders/"+id+"/files/mkdir", vfAlice, `{"path":"d/e","parents":true}`); r.status != http.StatusCreated {
		t.Fatalf("mkdir: %d %s", r.status, r.body)
	}
	for i := range 5 {
		e.upload(t, vfAlice, id, fmt.Sprintf("d/f%d", i), []byte{byte(i)}, http.StatusCreated)
	}
	var names []string
	cursor := ""
	for {
		r := e.do(t, "GET", "/v1/vfolders/"+id+"/files?path=d&limit=2&cursor="+cursor, vfAlice, "")
		var page struct {
			Items      []struct{ Name, Type string }
			NextCursor *string `json:"next_cursor"`
		}
		if r.status != http.StatusOK {
			t.Fatalf("list: %d %s", r.status, r.body)
		}
		r.decode(t, &page)
		for _, it := range page.Items {
			names = append(names, it.Name)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if strings.Join(names, ",") != "e,f0,f1,f2,f3,f4" {
		t.Fatalf("listing %v", names)
	}
	if r := e.do(t, "POST", "/v1/vfolders/"+id+"/files/move", vfAlice, `{"from":"d/f0","to":"d/e/g"}`); r.status != http.StatusOK {
		t.Fatalf("move: %d %s", r.status, r.body)
	}
	wantProblem(t, e.do(t, "POST", "/v1/vfolders/"+id+"/files/move", vfAlice, `{"from":"d/f1","to":"../x"}`), http.StatusBadRequest, "invalid", "to")
	wantProblem(t, e.do(t, "DELETE", "/v1/vfolders/"+id+"/files?path=d", vfAlice, ""), http.StatusConflict, "conflict", "")
	if r := e.do(t, "DELETE", "/v1/vfolders/"+id+"/files?path=d&recursive=true", vfAlice, ""); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	e.download(t, vfAlice, id, "d/f1", "", http.StatusNotFound)

	// Nothing but the uploaded files is on disk: the refused uploads left
	// no staging file.
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
	if err != nil || strings.Join(onDisk, ",") != "big.bin" {
		t.Errorf("the folder holds %v (%v)", onDisk, err)
	}
}

// A JSON route keeps the body limit when uploads stream.
func TestBodyLimitHoldsBesideStreamedUploads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	body := `{"name":"` + strings.Repeat("x", bodyLimit) + `"}`
	r := e.raw(t, "POST", "/v1/vfolders", vfAlice, strings.NewReader(body), map[string]string{"Content-Type": "application/json"})
	wantProblem(t, r, http.StatusRequestEntityTooLarge, "too-large", "")
}

func TestSessionMountsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.mkfolder(t, vfAlice, `{"name":"data"}`)
	e.mkfolder(t, vfBob, `{"name":"bobs"}`)
	body := func(mounts string) string {
		return `{"image":"cr.io/pytorch:2.4","resources":{"cpu":1,"mem":"1g"},"mounts":` + mounts + `}`
	}
	if r := e.do(t, "POST", "/v1/sessions", vfAlice, body(`[{"name":"data","permission":"ro"}]`)); r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	wantProblem(t, e.do(t, "POST", "/v1/sessions", vfAlice, body(`[{"name":"bobs"}]`)), http.StatusBadRequest, "invalid", "mounts[0].name")
	wantProblem(t, e.do(t, "POST", "/v1/sessions", vfAlice, body(`[{"name":"data","path":"/etc"}]`)), http.StatusBadRequest, "invalid", "mounts[0].path")
}

func refOf(t testing.TB, id string) vfstorage.Ref {
	t.Helper()
	return vfstorage.Ref{Host: "local", ID: uuid.MustParse(id)}
}

// TestVFolderQuotaScopeHoldsUnderConcurrentUploads: uploads into two
// folders of one owner, racing, cannot together pass the owner's quota
// scope: exactly one of two uploads that each fit alone succeeds.
func TestVFolderQuotaScopeHoldsUnderConcurrentUploads(t *testing.T) {
	e := newEnv(t, envOptions{})
	a, _ := e.mkfolder(t, vfAlice, `{"name":"race-a"}`)
	b, _ := e.mkfolder(t, vfAlice, `{"name":"race-b"}`)
	e.setScopeQuota(t, 250_000)
	defer e.setScopeQuota(t, 0)
	data := bytes.Repeat([]byte("x"), 150_000)
	statuses := make(chan int, 2)
	for _, id := range []string{a, b} {
		go func() {
			r := e.raw(t, "PUT", "/v1/vfolders/"+id+"/files/content?path=big.bin", vfAlice, bytes.NewReader(data),
				map[string]string{"Content-Type": "application/octet-stream"})
			statuses <- r.status
		}()
	}
	got := []int{<-statuses, <-statuses}
	slices.Sort(got)
	if !slices.Equal(got, []int{http.StatusCreated, http.StatusForbidden}) {
		t.Fatalf("statuses %v, want one 201 and one 403", got)
	}
}
