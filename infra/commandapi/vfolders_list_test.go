package commandapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// GET /v1/vfolders a page at a time: limit and cursor walk the caller's
// folders by name, status takes several statuses, another tenant's folder
// is on no page, and a bad limit or cursor is a 400 naming it.
func TestVFolderListPagesOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	ids := map[string]string{}
	var pos uint64
	for _, name := range []string{"c", "a", "b"} {
		ids[name], pos = e.mkfolder(t, vfAlice, fmt.Sprintf(`{"name":%q}`, name))
	}
	e.mkfolder(t, vfEve, `{"name":"aa"}`)
	r := e.do(t, "DELETE", "/v1/vfolders/"+ids["b"], vfAlice, "")
	if r.status != http.StatusOK {
		t.Fatalf("trash: %d %s", r.status, r.body)
	}
	var trashed struct{ Position uint64 }
	r.decode(t, &trashed)
	pos = max(pos, trashed.Position)

	type page struct {
		Items      []vfolderAnswer
		NextCursor *string `json:"next_cursor"`
	}
	get := func(query string) page {
		t.Helper()
		r := e.do(t, "GET", fmt.Sprintf("/v1/vfolders?wait_for_position=%d&%s", pos, query), vfAlice, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET ?%s: %d %s", query, r.status, r.body)
		}
		var p page
		r.decode(t, &p)
		return p
	}
	names := func(p page) []string {
		var out []string
		for _, f := range p.Items {
			out = append(out, f.Name)
		}
		return out
	}

	first := get("relation=own&status=ready,delete-pending&limit=2")
	if !slices.Equal(names(first), []string{"a", "b"}) || first.NextCursor == nil {
		t.Fatalf("first page: %v, next %v", names(first), first.NextCursor)
	}
	second := get("relation=own&status=ready,delete-pending&limit=2&cursor=" + url.QueryEscape(*first.NextCursor))
	if !slices.Equal(names(second), []string{"c"}) || second.NextCursor != nil {
		t.Fatalf("second page: %v, next %v", names(second), second.NextCursor)
	}
	if live := get("status=ready"); !slices.Equal(names(live), []string{"a", "c"}) || live.NextCursor != nil {
		t.Errorf("ready: %v", names(live))
	}
	if trash := get("status=delete-pending&limit=10"); !slices.Equal(names(trash), []string{"b"}) {
		t.Errorf("trash: %v", names(trash))
	}

	for _, q := range []string{"limit=0", "limit=1001", "limit=x"} {
		wantProblem(t, e.do(t, "GET", "/v1/vfolders?"+q, vfAlice, ""), http.StatusBadRequest, "invalid", "limit")
	}
	wantProblem(t, e.do(t, "GET", "/v1/vfolders?limit=1&cursor=nope", vfAlice, ""), http.StatusBadRequest, "invalid", "cursor")
}

// An administrator who is also a member of a project sees who a project
// folder is shared with (its per-user permissions); the members do not.
func TestVFolderUsersForAdminsWhoAreMembers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	id, _ := e.mkfolder(t, adminToken, `{"name":"team","project":"default"}`)
	r := e.do(t, "POST", "/v1/vfolders/"+id+"/share", adminToken, `{"email":"bob@cairn.test","permission":"ro"}`)
	if r.status != http.StatusOK {
		t.Fatalf("share: %d %s", r.status, r.body)
	}
	var shared struct{ Position uint64 }
	r.decode(t, &shared)
	type detail struct {
		Relation string `json:"relation"`
		Users    []struct {
			UserID     string `json:"user_id"`
			Kind       string `json:"kind"`
			Permission string `json:"permission"`
		} `json:"users"`
	}
	get := func(token string) detail {
		t.Helper()
		r := e.do(t, "GET", fmt.Sprintf("/v1/vfolders/%s?wait_for_position=%d", id, shared.Position), token, "")
		if r.status != http.StatusOK {
			t.Fatalf("%s: GET %d %s", token, r.status, r.body)
		}
		var d detail
		r.decode(t, &d)
		return d
	}
	d := get(adminToken)
	if d.Relation != "project" || len(d.Users) != 1 || d.Users[0].UserID != e.users[vfBob].ID.String() || d.Users[0].Kind != "override" || d.Users[0].Permission != "ro" {
		t.Errorf("the admin member sees %+v", d)
	}
	for _, token := range []string{vfAlice, vfBob} {
		if d := get(token); len(d.Users) != 0 {
			t.Errorf("%s sees the users %+v", token, d.Users)
		}
	}
}
