package commandapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/httpapi"
)

// settingView is an item of GET /v1/settings.
type settingView struct {
	Key         string     `json:"key"`
	Kind        string     `json:"kind"`
	Description string     `json:"description"`
	Value       any        `json:"value"`
	Default     any        `json:"default"`
	Flag        string     `json:"flag"`
	Set         bool       `json:"set"`
	ChangedBy   *string    `json:"changed_by"`
	ChangedAt   *time.Time `json:"changed_at"`
	Position    *uint64    `json:"position"`
}

type settingChange struct {
	Position uint64    `json:"position"`
	Key      string    `json:"key"`
	Old      any       `json:"old"`
	New      any       `json:"new"`
	Actor    string    `json:"actor"`
	At       time.Time `json:"at"`
}

type settingHistory struct {
	Items      []settingChange `json:"items"`
	NextCursor *string         `json:"next_cursor"`
}

func (e *env) settings(t *testing.T, token string) map[string]settingView {
	t.Helper()
	r := e.do(t, "GET", "/v1/settings", token, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/settings: %d %s", r.status, r.body)
	}
	var out struct{ Items []settingView }
	r.decode(t, &out)
	m := map[string]settingView{}
	for _, s := range out.Items {
		m[s.Key] = s
	}
	return m
}

func (e *env) patchSettings(t *testing.T, token, body string, want int) response {
	t.Helper()
	r := e.do(t, "PATCH", "/v1/settings", token, body)
	if r.status != want {
		t.Fatalf("PATCH /v1/settings %s: %d, want %d: %s", body, r.status, want, r.body)
	}
	return r
}

func (e *env) settingHistory(t *testing.T, query string) settingHistory {
	t.Helper()
	r := e.do(t, "GET", "/v1/settings/history"+query, adminToken, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/settings/history%s: %d %s", query, r.status, r.body)
	}
	var h settingHistory
	r.decode(t, &h)
	return h
}

// problemFields are the fields a 400 names.
func problemFields(p httpapi.Problem) []string {
	fields := []string{}
	if p.Field != "" {
		fields = append(fields, p.Field)
	}
	for _, f := range p.Errors {
		fields = append(fields, f.Field)
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}

// TestSettingsOverHTTP: superadmins read and change the settings, others
// are refused; a change is all or nothing with every bad key named; the
// history pages newest first; a value set back to itself adds nothing.
func TestSettingsOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})

	for _, who := range []string{"dadmin", aliceToken, monitorToken, "oadmin"} {
		for _, req := range [][3]string{{"GET", "/v1/settings", ""}, {"GET", "/v1/settings/history", ""},
			{"PATCH", "/v1/settings", `{"vfolder.max_upload_size":1}`}} {
			r := e.do(t, req[0], req[1], who, req[2])
			if r.status != http.StatusForbidden {
				t.Fatalf("%s %s as %s: %d %s", req[0], req[1], who, r.status, r.body)
			}
		}
		r := e.do(t, "GET", "/v1/settings", "", "")
		if r.status != http.StatusUnauthorized {
			t.Fatalf("anonymous: %d", r.status)
		}
	}

	before := e.settings(t, adminToken)
	up := before["vfolder.max_upload_size"]
	if len(before) != 3 || up.Kind != "bytes" || up.Value != float64(maxUpload) || up.Default != float64(maxUpload) ||
		up.Flag != "vfolder-max-upload" || up.Set || up.ChangedBy != nil || up.Position != nil {
		t.Fatalf("settings before any change: %+v", before)
	}
	if p := before["keypair.default_resource_policy"]; p.Value != "" || p.Kind != "name" {
		t.Fatalf("%+v", p)
	}

	// Every bad key at once; nothing written.
	r := e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":"big","session.default_idle_timeout":-1,`+
		`"keypair.default_resource_policy":"no-such-policy","colour":"blue"}`, http.StatusBadRequest)
	p := r.problem(t)
	if got, want := problemFields(p), []string{"colour", "session.default_idle_timeout", "vfolder.max_upload_size"}; !slices.Equal(got, want) {
		t.Fatalf("fields %v, want %v: %+v", got, want, p)
	}
	// A good key with a bad one: nothing written either.
	r = e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":1024,"session.default_idle_timeout":1.5}`, http.StatusBadRequest)
	if got := problemFields(r.problem(t)); !slices.Equal(got, []string{"session.default_idle_timeout"}) {
		t.Fatalf("fields %v", got)
	}
	r = e.patchSettings(t, adminToken, `{"keypair.default_resource_policy":"no-such-policy","session.default_idle_timeout":-1}`, http.StatusBadRequest)
	if got := problemFields(r.problem(t)); !slices.Equal(got, []string{"keypair.default_resource_policy", "session.default_idle_timeout"}) {
		t.Fatalf("fields %v", got)
	}
	for _, body := range []string{`{}`, `[]`, `{"vfolder.max_upload_size":null}`} {
		e.patchSettings(t, adminToken, body, http.StatusBadRequest)
	}
	if h := e.settingHistory(t, ""); len(h.Items) != 0 {
		t.Fatalf("refused changes were written: %+v", h.Items)
	}

	// Two keys in one request: one append, the answer after the read
	// models show it.
	var w struct{ Position uint64 }
	e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":4096,"session.default_idle_timeout":600}`, http.StatusOK).decode(t, &w)
	after := e.settings(t, adminToken)
	up = after["vfolder.max_upload_size"]
	admin := e.users[adminToken].ID.String()
	if up.Value != float64(4096) || up.Default != float64(maxUpload) || !up.Set || up.ChangedBy == nil || *up.ChangedBy != admin ||
		up.ChangedAt == nil || up.Position == nil || *up.Position > w.Position {
		t.Fatalf("after the change: %+v", up)
	}
	if idle := after["session.default_idle_timeout"]; idle.Value != float64(600) || !idle.Set {
		t.Fatalf("%+v", idle)
	}
	// The same values again: no event, the same answer.
	var again struct{ Position uint64 }
	e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":4096}`, http.StatusOK).decode(t, &again)
	e.patchSettings(t, adminToken, `{"keypair.default_resource_policy":"default"}`, http.StatusOK)
	e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":8192}`, http.StatusOK)

	// History: newest first, two per page, then one key only.
	var all []settingChange
	query := "?limit=2"
	for pages := 1; ; pages++ {
		h := e.settingHistory(t, query)
		all = append(all, h.Items...)
		if h.NextCursor == nil {
			if pages != 2 {
				t.Fatalf("%d pages", pages)
			}
			break
		}
		query = fmt.Sprintf("?limit=2&cursor=%s", *h.NextCursor)
	}
	var keys []string
	for _, c := range all {
		keys = append(keys, fmt.Sprintf("%s:%v>%v", c.Key, c.Old, c.New))
		if c.Actor != admin || c.At.IsZero() {
			t.Fatalf("%+v", c)
		}
	}
	want := []string{"vfolder.max_upload_size:4096>8192", "keypair.default_resource_policy:>default",
		"vfolder.max_upload_size:1.048576e+06>4096", "session.default_idle_timeout:0>600"}
	if !slices.Equal(keys, want) {
		t.Fatalf("history %v, want %v", keys, want)
	}
	if !slices.IsSortedFunc(all, func(a, b settingChange) int { return int(b.Position) - int(a.Position) }) {
		t.Fatalf("not newest first: %+v", all)
	}
	if h := e.settingHistory(t, "?key=session.default_idle_timeout"); len(h.Items) != 1 || h.Items[0].New != float64(600) {
		t.Fatalf("one key: %+v", h)
	}
	for _, q := range []string{"?key=colour", "?cursor=x", "?limit=0", "?limit=1001"} {
		r := e.do(t, "GET", "/v1/settings/history"+q, adminToken, "")
		if r.status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
	}
}

// TestSettingsUploadLimitWithoutRestart: a changed upload limit bounds the
// very next upload; 0 leaves only the quotas.
func TestSettingsUploadLimitWithoutRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, pos := e.mkfolder(t, vfAlice, `{"name":"limits"}`)
	e.wait(t, pos)
	data := make([]byte, 3000)
	e.upload(t, vfAlice, id, "a.bin", data, http.StatusCreated)

	e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":2048}`, http.StatusOK)
	r := e.upload(t, vfAlice, id, "b.bin", data, http.StatusRequestEntityTooLarge)
	if p := r.problem(t); p.Kind != "too-large" {
		t.Fatalf("%+v", p)
	}
	e.upload(t, vfAlice, id, "c.bin", data[:2048], http.StatusCreated)

	// Above the flag's limit once the setting lifts it.
	e.upload(t, vfAlice, id, "d.bin", make([]byte, maxUpload+1), http.StatusRequestEntityTooLarge)
	e.patchSettings(t, adminToken, `{"vfolder.max_upload_size":0}`, http.StatusOK)
	e.upload(t, vfAlice, id, "d.bin", make([]byte, maxUpload+1), http.StatusCreated)
}
