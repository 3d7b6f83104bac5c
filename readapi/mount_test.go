package readapi_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
	"github.com/cairnhq/cairn/projections/agents"
	auditrm "github.com/cairnhq/cairn/projections/audit"
	"github.com/cairnhq/cairn/projections/sessions"
	"github.com/cairnhq/cairn/projections/tenancy"
	"github.com/cairnhq/cairn/projections/vfolders"
	"github.com/cairnhq/cairn/readapi"
)

// The routes' behaviour is tested in infra/commandapi, where both sides
// are mounted; these tests hold what this package promises on its own.

type noWait struct{}

func (noWait) WaitFor(context.Context, uint64) error { return nil }

type noLogs struct{}

func (noLogs) KernelLogs(context.Context, string, string, int) ([]byte, error) { return nil, nil }
func (noLogs) OpenKernelLog(context.Context, string, string, readapi.LogRange) (readapi.LogStream, error) {
	return nil, nil
}

// noLog is an empty event log.
type noLog struct{}

func (noLog) Head(context.Context) (uint64, error) { return 0, nil }
func (noLog) ReadAll(context.Context, uint64, int) ([]eventstore.RecordedEvent, error) {
	return nil, nil
}
func (noLog) Subscribe(context.Context, uint64) (eventstore.Subscription, error) {
	return nil, errors.New("no log")
}

type noTenancy struct{}

func (noTenancy) VFolderViewer(context.Context, uuid.UUID, domain.Role, string) (domain.VFolderViewer, error) {
	return domain.VFolderViewer{}, nil
}

func (noTenancy) StoragePolicy(context.Context, domain.VFolderOwner) (domain.StoragePolicySpec, error) {
	return domain.StoragePolicySpec{}, nil
}

// Mount registers queries only: every route is a GET (fiber adds a HEAD
// beside each), the folder queries included.
func TestMountRegistersQueriesOnly(t *testing.T) {
	t.Parallel()
	storage, err := localfs.Open(localfs.Config{Hosts: localfs.Hosts{{Name: "local", Path: filepath.Join(t.TempDir(), "vfolders")}}, CreateHostDirs: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	api, err := readapi.New(readapi.Deps{
		Sessions: &sessions.ReadModel{}, Agents: &agents.ReadModel{}, Audit: &auditrm.ReadModel{},
		Waiter: noWait{}, Logs: noLogs{}, Tenancy: &tenancy.ReadModel{}, Log: noLog{},
		VFolders: readapi.VFolderDeps{Folders: &vfolders.ReadModel{}, Tenancy: noTenancy{}, Storage: storage},
	})
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	api.Mount(app.Group("/v1"))
	var paths []string
	for _, r := range app.GetRoutes(true) {
		switch r.Method {
		case http.MethodGet:
			paths = append(paths, r.Path)
		case http.MethodHead:
		default:
			t.Errorf("%s %s: the query side registers only GET routes", r.Method, r.Path)
		}
	}
	for _, want := range []string{"/v1/sessions/:id", "/v1/audit/stream", "/v1/users/:id", "/v1/vfolders/quota-scope", "/v1/vfolder-invitations", "/v1/events"} {
		if !slices.Contains(paths, want) {
			t.Errorf("GET %s is not registered (have %q)", want, paths)
		}
	}
}

// New refuses missing dependencies, all of them at once.
func TestNewReportsEveryMissingDependency(t *testing.T) {
	t.Parallel()
	_, err := readapi.New(readapi.Deps{MaxWait: -1})
	if err == nil {
		t.Fatal("New accepted no dependencies")
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		t.Fatalf("New's error %v is not a list of problems", err)
	}
	// Sessions, Agents, Audit, Waiter, Logs, Tenancy, Log and the negative
	// wait.
	if n := len(joined.Unwrap()); n != 8 {
		t.Errorf("New reported %d problems, want 8: %v", n, err)
	}
}
