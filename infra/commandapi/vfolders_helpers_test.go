package commandapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/vfolderjobs"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	infravf "github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/projections/vfolders"
)

// Virtual folder callers: tenancy users of domain default (seeded in
// helpers_test.go); alice and bob are members of project default/default; eve
// is of another domain.
const (
	vfAlice = "vf-alice"
	vfBob   = "vf-bob"
	vfCarol = "vf-carol"
	vfAdmin = "vf-admin"
	vfEve   = "vf-eve"
)

// maxUpload is the test server's upload limit (far above its body limit).
const maxUpload = 1 << 20

func uploadLimit(o envOptions) int64 {
	if o.anyUploadSize {
		return 0
	}
	return maxUpload
}

// setScopeQuota sets the quota scope size of vf-alice's user resource
// policy (0: none), through the real command, and waits for it.
func (e *env) setScopeQuota(t *testing.T, size int64) {
	t.Helper()
	e.run(t, func(ctx context.Context, h *commands.Handlers) (commands.Result, error) {
		return h.ModifyUserPolicy.Handle(ctx, testMD, commands.ModifyUserPolicy{Actor: system, Name: vfAlice,
			Changes: domain.StoragePolicyChanges{MaxQuotaScopeSize: &size}})
	})
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
