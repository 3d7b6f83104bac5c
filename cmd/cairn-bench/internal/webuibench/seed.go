package webuibench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/devserver"
	"github.com/cairnhq/cairn/infra/httpapi"
	"github.com/cairnhq/cairn/infra/images"
)

// OtherDomain is the second domain the seeded users live in.
const OtherDomain = "bench-other"

// MeasuredShare is the share (in tenths) of the seeded sessions and
// folders that belong to the measured user: his first page is a real page
// of a huge list.
const MeasuredShare = 9

// User is one seeded user and the bearer token of its login.
type User struct {
	Email, Password string
	ID              string
	Domain, Project string
	Token           string
}

// Seeder makes the benchmark's users through the API of srv, one session
// and one folder per user too, and the other sessions and folders as
// copies of their events (appendSessions, appendFolders) while the server
// is stopped.
type Seeder struct {
	srv    *Server
	client *http.Client
	// Measured is the user whose pages are measured; Others own the rest.
	Measured User
	Others   []User

	sessions, folders int    // made so far
	last              uint64 // highest position written
	// templateIDs and folderTemplateIDs are the sessions and folders made
	// through the API, by owner.
	templateIDs, folderTemplateIDs map[string]uuid.UUID
}

// NewSeeder provisions the users: the measured one and two others in the
// default domain and project, two more in OtherDomain and its project;
// each logs in once (its bearer token makes its objects).
func NewSeeder(ctx context.Context, srv *Server) (*Seeder, error) {
	s := &Seeder{srv: srv, client: &http.Client{Timeout: 2 * time.Minute}}
	// Both domains' users may create folders on the default storage host.
	hosts := map[string]any{devserver.DefaultVFolderHost: []string{"create-vfolder", "modify-vfolder", "upload-file", "download-file", "invite-others"}}
	if err := s.admin(ctx, http.MethodPatch, "/v1/domains/"+bootstrap.DefaultScope, map[string]any{"allowed_vfolder_hosts": hosts}, nil); err != nil {
		return nil, err
	}
	steps := []struct {
		path string
		body any
	}{
		{"/v1/domains", map[string]any{"name": OtherDomain, "description": "cairn-bench webui", "allowed_vfolder_hosts": hosts}},
		{"/v1/projects", map[string]any{"domain": OtherDomain, "name": OtherDomain, "resource_policy": bootstrap.DefaultScope}},
		{"/v1/resource-groups/" + bootstrap.DefaultScope + "/access", map[string]any{"kind": "domain", "name": OtherDomain}},
	}
	for _, st := range steps {
		if err := s.admin(ctx, http.MethodPost, st.path, st.body, nil); err != nil {
			return nil, err
		}
	}
	scopes := []string{bootstrap.DefaultScope, bootstrap.DefaultScope, bootstrap.DefaultScope, OtherDomain, OtherDomain}
	for i, scope := range scopes {
		u, err := s.newUser(ctx, fmt.Sprintf("bench%d", i), scope)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			s.Measured = u
		} else {
			s.Others = append(s.Others, u)
		}
	}
	return s, s.templates(ctx)
}

// newUser creates a user in scope (its domain and project) with a main
// keypair, and logs in.
func (s *Seeder) newUser(ctx context.Context, prefix, scope string) (User, error) {
	u := User{Email: prefix + "-" + rand.Text()[:6] + "@bench.cairn.local", Password: rand.Text(), Domain: scope, Project: scope}
	var created struct {
		ID string `json:"id"`
	}
	if err := s.admin(ctx, http.MethodPost, "/v1/users", map[string]any{
		"email": u.Email, "password": u.Password, "domain": scope, "role": "user", "full_name": "webui benchmark " + prefix,
	}, &created); err != nil {
		return u, err
	}
	u.ID = created.ID
	if err := s.admin(ctx, http.MethodPut, "/v1/projects/"+scope+"/members/"+u.ID+"?domain="+url.QueryEscape(scope), nil, nil); err != nil {
		return u, err
	}
	// A session is accounted to its owner's main keypair.
	if err := s.admin(ctx, http.MethodPost, "/v1/keypairs", map[string]any{
		"user_id": u.ID, "resource_policy": bootstrap.DefaultScope, "main": true,
	}, nil); err != nil {
		return u, err
	}
	var login struct {
		Token    string `json:"token"`
		Position uint64 `json:"position"`
	}
	if err := s.call(ctx, http.MethodPost, "/v1/auth/login", "", map[string]any{"email": u.Email, "password": u.Password}, &login); err != nil {
		return u, err
	}
	s.note(login.Position)
	u.Token = login.Token
	return u, nil
}

// owner is the user who owns the n-th object: the measured user nine
// times in ten, the others in turn.
func (s *Seeder) owner(n int) User {
	if n%10 < MeasuredShare {
		return s.Measured
	}
	return s.Others[(n/10)%len(s.Others)]
}

// templates creates one session and one folder per user through the API
// (the real RequestSession and CreateVFolder): the sessions and folders
// appended later are copies of their events.
func (s *Seeder) templates(ctx context.Context) error {
	s.templateIDs, s.folderTemplateIDs = map[string]uuid.UUID{}, map[string]uuid.UUID{}
	for _, u := range append([]User{s.Measured}, s.Others...) {
		var res struct {
			ID       uuid.UUID `json:"id"`
			Position uint64    `json:"position"`
		}
		if err := s.call(ctx, http.MethodPost, "/v1/sessions", u.Token, map[string]any{
			"name": "bench-template", "image": images.BaseImage, "project": u.Project,
			"resources": map[string]any{"cpu": 1, "mem": "64m"},
		}, &res); err != nil {
			return err
		}
		s.note(res.Position)
		s.templateIDs[u.ID] = res.ID
		s.sessions++
		var folder struct {
			ID       uuid.UUID `json:"id"`
			Position uint64    `json:"position"`
		}
		if err := s.call(ctx, http.MethodPost, "/v1/vfolders", u.Token, map[string]any{"name": "bench-template"}, &folder); err != nil {
			return err
		}
		s.note(folder.Position)
		s.folderTemplateIDs[u.ID] = folder.ID
		s.folders++
	}
	return nil
}

// note keeps the highest position written.
func (s *Seeder) note(pos uint64) { s.last = max(s.last, pos) }

// CatchUp waits until the read models show every write made so far: a
// read with wait_for_position answers (it answers 503 after the server's
// longest wait; the read is tried again until ctx ends).
func (s *Seeder) CatchUp(ctx context.Context) error {
	for _, path := range []string{"/v1/sessions?limit=1", "/v1/vfolders?limit=1"} {
		for {
			err := s.admin(ctx, http.MethodGet, fmt.Sprintf("%s&wait_for_position=%d", path, s.last), nil, nil)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("the read models have not reached position %d: %w", s.last, err)
			}
		}
	}
	return nil
}

// admin sends a request as the superadmin, after the read models reached
// the last write (the next command's checks read them).
func (s *Seeder) admin(ctx context.Context, method, path string, body, out any) error {
	if method != http.MethodGet && s.last > 0 {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path = fmt.Sprintf("%s%swait_for_position=%d", path, sep, s.last)
	}
	raw, err := s.send(ctx, method, path, s.srv.Token, body)
	if err != nil {
		return err
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var res struct {
		Position uint64 `json:"position"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	s.note(res.Position)
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// call sends a request with token and decodes the JSON answer into out
// (when not nil); any status but 2xx is an error.
func (s *Seeder) call(ctx context.Context, method, path, token string, body, out any) error {
	return httpapi.CallJSON(ctx, s.client, method, s.srv.URL+path, token, body, 0, out)
}

// send sends a request with token and answers the body (possibly empty);
// any status but 2xx is an error.
func (s *Seeder) send(ctx context.Context, method, path, token string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.srv.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	return raw, nil
}
