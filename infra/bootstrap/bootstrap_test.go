package bootstrap

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/auth/password"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/tenancy"
)

var ctx = context.Background()

// world is a store with real commands and the tenancy read model kept up
// to date by its projector.
type world struct {
	deps Deps
	rm   *tenancy.ReadModel
}

func newWorld(t *testing.T) world {
	t.Helper()
	b := projectiontest.SQLite(t)
	rm := tenancy.New(b.DB)
	if err := projections.Setup(ctx, b.DB, rm); err != nil {
		t.Fatal(err)
	}
	running := projectiontest.Start(t, b.DB, b, rm, projections.Options{})
	h, err := commands.NewHandlers(b.Store, projectiontest.StepClock(), commands.Options{PasswordHasher: password.Hasher{Params: password.CheapParams()}})
	if err != nil {
		t.Fatal(err)
	}
	return world{rm: rm, deps: Deps{DataDir: filepath.Join(t.TempDir(), "data"), APIURL: "http://127.0.0.1:1", Commands: h, Tenancy: rm,
		Waiter: running.Projector, Images: []string{"localhost/cairn/base:latest"}, Architecture: "x86_64"}}
}

func TestProvisionCreatesAWorkingSuperadminOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	c, created, err := Provision(ctx, w.deps)
	if err != nil || !created {
		t.Fatalf("first Provision: created=%v err=%v", created, err)
	}
	st, err := os.Stat(filepath.Join(w.deps.DataDir, FileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", st, err)
	}
	if c.Email != Email || c.APIURL != w.deps.APIURL || c.Domain != "default" || c.Project != "default" || c.ResourceGroup != "default" {
		t.Fatalf("credentials %+v", c)
	}
	checkWorks(t, w, c)

	again, created, err := Provision(ctx, Deps{DataDir: w.deps.DataDir, APIURL: "http://127.0.0.1:2", Commands: w.deps.Commands,
		Tenancy: w.rm, Waiter: w.deps.Waiter, Images: w.deps.Images, Architecture: "amd64"})
	if err != nil || created {
		t.Fatalf("second Provision: created=%v err=%v", created, err)
	}
	if again.Token != c.Token || again.SecretKey != c.SecretKey || again.UserID != c.UserID || again.APIURL != "http://127.0.0.1:2" {
		t.Fatalf("a second start must keep the credentials and refresh the URL: %+v", again)
	}
	if users, err := w.rm.ListUsers(ctx, tenancy.UserFilter{}); err != nil || len(users) != 1 {
		t.Fatalf("users after two starts: %+v %v", users, err)
	}
}

func TestProvisionReplacesARevokedToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	c, _, err := Provision(ctx, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	_, digest, err := token.Parse(c.Token)
	if err != nil {
		t.Fatal(err)
	}
	g, err := w.rm.TokenByDigest(ctx, digest.String())
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.deps.Commands.RevokeToken.Handle(ctx, commands.Metadata{}, commands.RevokeToken{Actor: system, TokenID: g.ID})
	if err != nil {
		t.Fatal(err)
	}
	// A restart happens after the read model shows the revocation.
	if err := w.deps.Waiter.WaitFor(ctx, res.Position); err != nil {
		t.Fatal(err)
	}
	next, created, err := Provision(ctx, w.deps)
	if err != nil || !created || next.Token == c.Token || next.SecretKey != c.SecretKey || next.Password != c.Password {
		t.Fatalf("after revocation: created=%v err=%v %+v", created, err, next)
	}
	checkWorks(t, w, next)
}

func TestProvisionResetsTheSuperadminOfAStaleFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first, _, err := Provision(ctx, w.deps)
	if err != nil {
		t.Fatal(err)
	}
	// A file from before tenancy: no UUID, keys the store never saw.
	old := Credentials{Email: Email, Password: "pw", Token: "cairn_x", AccessKey: "AKCAIRNXXXXXXXXXXXXX", SecretKey: "s",
		UserID: "admin", Domain: "default", Project: "default", ResourceGroup: "default"}
	if err := Save(w.deps.DataDir, old); err != nil {
		t.Fatal(err)
	}
	c, created, err := Provision(ctx, w.deps)
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	if c.UserID != first.UserID || c.Password == first.Password || c.AccessKey == first.AccessKey {
		t.Fatalf("the existing superadmin must be reused with a new password and keypair: %+v", c)
	}
	checkWorks(t, w, c)
}

func TestProvisionRefusesADamagedFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(w.deps.DataDir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.deps.DataDir, FileName), []byte(`{"email":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Provision(ctx, w.deps); err == nil {
		t.Fatal("a damaged credentials file must be an error, not silently replaced")
	}
}

// checkWorks checks every credential against the read model.
func checkWorks(t *testing.T, w world, c Credentials) {
	t.Helper()
	id, err := uuid.Parse(c.UserID)
	if err != nil {
		t.Fatalf("user id %q: %v", c.UserID, err)
	}
	l, err := w.rm.Login(ctx, c.Email)
	if err != nil || l.ID != id || l.Role != domain.RoleSuperadmin || l.Status != domain.UserActive || l.MainAccessKey != c.AccessKey {
		t.Fatalf("superadmin %+v %v", l, err)
	}
	if ok, err := password.Verify(c.Password, l.PasswordHash); !ok || err != nil {
		t.Fatalf("the password does not verify: %v %v", ok, err)
	}
	cr, err := w.rm.Credentials(ctx, c.AccessKey)
	if err != nil || cr.SecretKey != c.SecretKey || !cr.MaySign() {
		t.Fatalf("keypair %+v %v", cr, err)
	}
	_, digest, err := token.Parse(c.Token)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := w.rm.TokenByDigest(ctx, digest.String()); err != nil || g.UserID != id || g.Revoked() {
		t.Fatalf("token %+v %v", g, err)
	}
	ps, err := w.rm.ProjectsOf(ctx, id)
	if err != nil || len(ps) != 1 || ps[0].Project != "default" {
		t.Fatalf("projects %+v %v", ps, err)
	}
	groups, err := w.rm.AllowedResourceGroups(ctx, "default", "default", c.AccessKey)
	if err != nil || !slices.Equal(groups, []string{"default"}) {
		t.Fatalf("resource groups %v %v", groups, err)
	}
	if known, err := w.rm.HasImage(ctx, "localhost/cairn/base:latest"); !known || err != nil {
		t.Fatalf("base image registered: %v %v", known, err)
	}
	raw, err := os.ReadFile(filepath.Join(w.deps.DataDir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Credentials
	if err := json.Unmarshal(raw, &onDisk); err != nil || onDisk != c {
		t.Fatalf("file %s, returned %+v", raw, c)
	}
}

// Local images are registered with their labels and architecture, once,
// through the commands; one with a bad service-ports label is left out
// and the start goes on.
func TestProvisionRegistersLocalImagesWithTheirLabels(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.deps.Local = []LocalImage{
		{Reference: "localhost/cairn/python:latest", Architecture: "amd64",
			Labels: map[string]string{domain.ServicePortsLabel: "jupyter:http:8888", "io.cairn.recipe": "abc"}},
		{Reference: "localhost/cairn/broken:latest", Architecture: "amd64", Labels: map[string]string{domain.ServicePortsLabel: "jupyter"}},
		{Reference: "localhost/cairn/base:latest", Labels: map[string]string{}},
	}
	for range 2 { // a restart changes nothing
		if _, _, err := Provision(ctx, w.deps); err != nil {
			t.Fatal(err)
		}
	}
	list, err := w.rm.ListImages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, img := range list {
		refs = append(refs, img.Reference+"@"+img.Architecture)
	}
	if !slices.Equal(refs, []string{"localhost/cairn/base:latest@x86_64", "localhost/cairn/python:latest@x86_64"}) {
		t.Fatalf("registered %v", refs)
	}
	py, err := w.rm.GetImage(ctx, "localhost/cairn/python:latest", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if want := []domain.ServicePort{{Name: "jupyter", Protocol: "http", Port: 8888}}; !slices.Equal(py.ServicePorts, want) || py.Labels["io.cairn.recipe"] != "abc" {
		t.Fatalf("python image %+v", py)
	}
}
