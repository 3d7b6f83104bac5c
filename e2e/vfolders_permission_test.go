package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/cairnhq/cairn/infra/podmantest"
)

// TestDevVFolderMountNeedsPermission proves with two real users that a
// user cannot mount a folder they have no permission on: the bootstrap
// superadmin makes a folder and a second user through the API; the user's
// mount of it is refused (and so is every other look at it) until the
// folder is shared with them, read-only; then the same request runs a
// real container that reads the folder and cannot write it, a read-write
// mount stays refused, and once the user is removed from the folder the
// mount is refused again.
func TestDevVFolderMountNeedsPermission(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	admin := startDev(t, uri)

	// The domain's users may use the storage host, so that what refuses
	// the user below is the folder's permission, not the host's.
	admin.call("PATCH", "/v1/domains/default", map[string]any{"allowed_vfolder_hosts": map[string]any{
		"local": []string{"create-vfolder", "mount-in-session", "upload-file", "download-file"}}}, http.StatusOK, nil)
	secret := admin.mkfolder("secret")
	admin.put(secret, "given", "classified\n")

	// The second user: created, in the default project, with a main
	// keypair, logged in with a password.
	const email, password = "bob@cairn.test", "a long enough password"
	var bobUser struct {
		ID string `json:"id"`
	}
	admin.call("POST", "/v1/users", map[string]any{"email": email, "password": password}, http.StatusCreated, &bobUser)
	admin.call("PUT", "/v1/projects/default/members/"+bobUser.ID+"?domain=default", nil, http.StatusOK, nil)
	var kp struct {
		Position uint64 `json:"position"`
	}
	admin.call("POST", "/v1/keypairs", map[string]any{"user_id": bobUser.ID, "resource_policy": "default", "main": true}, http.StatusCreated, &kp)
	admin.call("GET", fmt.Sprintf("/v1/users/%s?wait_for_position=%d", bobUser.ID, kp.Position), nil, http.StatusOK, nil)
	var login struct {
		Token string `json:"token"`
	}
	admin.call("POST", "/v1/auth/login", map[string]any{"email": email, "password": password}, http.StatusOK, &login)
	if login.Token == "" {
		t.Fatal("login answered no token")
	}
	bob := admin.withToken(login.Token)

	// No permission: the folder cannot be mounted, read or even seen.
	// Bob's request works otherwise: his own folder mounts.
	bob.mkfolder("mine")
	bob.refused([]map[string]any{{"name": "secret"}}, http.StatusBadRequest, "mounts[0].name")
	bob.refused([]map[string]any{{"name": "mine"}, {"name": "secret", "path": "s"}}, http.StatusBadRequest, "mounts[1].name")
	bob.call("GET", "/v1/vfolders/"+secret, nil, http.StatusNotFound, nil)
	bob.fetch(secret, "given", http.StatusNotFound)

	// Shared read-only: the mount runs, reads, and cannot write; asking
	// for more than ro is refused.
	var inv struct {
		ID       string `json:"id"`
		Position uint64 `json:"position"`
	}
	admin.call("POST", "/v1/vfolders/"+secret+"/invitations", map[string]any{"email": email, "permission": "ro"}, http.StatusCreated, &inv)
	var accepted struct {
		Position uint64 `json:"position"`
	}
	bob.call("POST", fmt.Sprintf("/v1/vfolder-invitations/%s/accept?wait_for_position=%d", inv.ID, inv.Position), nil, http.StatusOK, &accepted)
	// A mount finds a shared folder by name in the read model.
	bob.call("GET", fmt.Sprintf("/v1/vfolders/%s?wait_for_position=%d", secret, accepted.Position), nil, http.StatusOK, nil)
	bob.refused([]map[string]any{{"name": "secret", "permission": "rw"}}, http.StatusForbidden, "mounts[0].permission")
	c := bob.create(map[string]any{
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
		"command": `sh -c 'cat /home/work/secret/given
if { echo x > /home/work/secret/new; } 2>/dev/null; then echo written; else echo refused; fi
echo done; sleep 30'`,
		"mounts": []map[string]any{{"name": "secret"}},
	})
	bob.awaitStatus(c.ID, c.Position, "RUNNING")
	bob.awaitLogs(c.ID, "done")
	_, logs := bob.logs(c.ID)
	for _, want := range []string{"classified", "refused"} {
		if !containsLine(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	admin.fetch(secret, "new", http.StatusNotFound)
	bob.awaitStatus(c.ID, bob.terminate(c.ID), "TERMINATED")

	// Removed from the folder: refused again, whether the read model
	// still lists the folder as shared with bob or not.
	var left struct {
		Position uint64 `json:"position"`
	}
	admin.call("POST", "/v1/vfolders/"+secret+"/leave", map[string]any{"user_id": bobUser.ID}, http.StatusOK, &left)
	bob.refused([]map[string]any{{"name": "secret"}}, http.StatusBadRequest, "mounts[0].name")
	bob.call("GET", fmt.Sprintf("/v1/vfolders/%s?wait_for_position=%d", secret, left.Position), nil, http.StatusNotFound, nil)
	bob.refused([]map[string]any{{"name": "secret"}}, http.StatusBadRequest, "mounts[0].name")
}

// withToken is d for another caller (its bearer token).
func (d *devServer) withToken(token string) *devServer {
	c := *d
	c.token = token
	return &c
}
