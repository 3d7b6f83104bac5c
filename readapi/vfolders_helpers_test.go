package readapi_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/vfolderjobs"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	infravf "github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/projections/vfolders"
)

// Virtual folder callers: tenancy users (UUID ids) of domain default;
// alice and bob are members of project ml; eve is of another domain.
const (
	vfAlice = "vf-alice"
	vfBob   = "vf-bob"
	vfCarol = "vf-carol"
	vfAdmin = "vf-admin"
	vfEve   = "vf-eve"
)

var (
	vfAliceID = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000a1")
	vfBobID   = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000b0")
	vfCarolID = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000c0")
	vfAdminID = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000ad")
	vfEveID   = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000e0")
)

// maxUpload is the test server's upload limit (far above its body limit).
const maxUpload = 1 << 20

func uploadLimit(o envOptions) int64 {
	if o.anyUploadSize {
		return 0
	}
	return maxUpload
}

// fakeTenancy stands in for the tenancy read model: every caller may use
// host local with every permission; alice and bob are in project
// default/ml; policies are set by the tests.
type fakeTenancy struct {
	mu       sync.Mutex
	policies map[string]domain.StoragePolicySpec
}

func newFakeTenancy() *fakeTenancy {
	return &fakeTenancy{policies: map[string]domain.StoragePolicySpec{}}
}

var _ commands.VFolderTenancy = (*fakeTenancy)(nil)

func (f *fakeTenancy) VFolderAccess(_ context.Context, p commands.Principal) (commands.VFolderAccess, error) {
	v := domain.VFolderViewer{UserID: p.UserID.String(), Domain: p.Domain,
		Superadmin: p.Role == domain.RoleSuperadmin, DomainAdmin: p.Role == domain.RoleAdmin, ReadOnly: p.Role == domain.RoleMonitor}
	if p.UserID == vfAliceID || p.UserID == vfBobID {
		v.Projects = []string{"default/ml"}
	}
	return commands.VFolderAccess{Viewer: v, Hosts: domain.VFolderHosts{"local": domain.VFolderHostPermissions()}}, nil
}

func (f *fakeTenancy) StoragePolicy(_ context.Context, o domain.VFolderOwner) (domain.StoragePolicySpec, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o.Kind == domain.VFolderOwnedByProject && o.ID != "default/ml" {
		return domain.StoragePolicySpec{}, domain.NotFound("test", "project")
	}
	return f.policies[o.Stream()], nil
}

func (f *fakeTenancy) setPolicy(o domain.VFolderOwner, p domain.StoragePolicySpec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.policies[o.Stream()] = p
}

func (f *fakeTenancy) UserByEmail(_ context.Context, email string) (commands.VFolderUser, error) {
	ids := map[string]commands.VFolderUser{
		"bob@cairn.test":   {ID: vfBobID, Domain: "default"},
		"carol@cairn.test": {ID: vfCarolID, Domain: "default"},
		"eve@evil.test":    {ID: vfEveID, Domain: "evil"},
	}
	u, ok := ids[email]
	if !ok {
		return u, domain.NotFound("test", "user")
	}
	return u, nil
}

// startJobs runs the vfolder jobs manager until the test ends.
func startJobs(t testing.TB, store eventstore.Store, rm *vfolders.ReadModel, st infravf.Storage, h *commands.Handlers) {
	t.Helper()
	m, err := vfolderjobs.New(vfolderjobs.Config{Logger: discard}, store, rm, st, vfolderjobs.FromHandlers(h))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("vfolder jobs: %v", err)
			}
		case <-time.After(waitBound):
			t.Error("vfolder jobs did not stop")
		}
	})
}
