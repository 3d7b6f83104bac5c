package vfolders_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/vfolderorphans"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/pgtest"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/infra/vfstorage"
	"github.com/cairnhq/cairn/infra/vfstorage/localfs"
	"github.com/cairnhq/cairn/projections"
)

// The crash test runs CreateVFolder in a child process (this test binary)
// that kills itself with SIGKILL at one step, then looks at what the
// child left, as the next start of a server would find it.
const (
	crashAtEnv  = "CAIRN_TEST_VFOLDER_CRASH_AT"
	crashDirEnv = "CAIRN_TEST_VFOLDER_CRASH_DIR"
	crashDSNEnv = "CAIRN_TEST_VFOLDER_CRASH_STORE"
)

// Steps of a create at which the child dies.
const (
	afterMkdir   = "after-mkdir"   // the directory is made
	beforeAppend = "before-append" // the first append is about to be sent
	afterAppend  = "after-append"  // the first append has committed
	noCrash      = "none"
)

var (
	folderID = uuid.MustParse("0195a0c0-0000-7000-8000-00000000c0de")
	// root is the bootstrap superadmin, described from its principal.
	root = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-0000000000ff"), Role: domain.RoleSuperadmin, Domain: "default"}
)

func TestMain(m *testing.M) {
	if at := os.Getenv(crashAtEnv); at != "" {
		os.Exit(crashChild(at, os.Getenv(crashDirEnv), os.Getenv(crashDSNEnv)))
	}
	os.Exit(m.Run())
}

// node is what a server runs the create on: the store, the storage and
// the handlers over them.
type node struct {
	store    eventstore.Store
	storage  *localfs.Storage
	handlers *commands.Handlers
}

// open opens the store (storeDSN; "" for SQLite in dir) and the storage
// in dir, as a server would, with the store and storage wrapped by wrap
// (the child's crash points).
func open(ctx context.Context, dir, storeDSN string, wrapStore func(eventstore.Store) commands.EventStore, wrapStorage func(vfstorage.Storage) vfstorage.Storage) (*node, error) {
	if storeDSN == "" {
		storeDSN = "sqlite://" + filepath.Join(dir, "cairn.db")
	}
	store, db, err := readmodels.Open(ctx, storeDSN)
	if err != nil {
		return nil, err
	}
	models := readmodels.New(db, store)
	if err := projections.Setup(ctx, db, models.Tenancy); err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fs, err := localfs.Open(localfs.Config{Hosts: localfs.Hosts{{Name: "local", Path: filepath.Join(dir, "vfolders")}}, CreateHostDirs: true}, logger)
	if err != nil {
		return nil, err
	}
	st := vfolders.Storage{S: wrapStorage(fs)}
	h, err := commands.NewHandlers(wrapStore(store), time.Now, commands.Options{VFolders: commands.VFolderPorts{
		Tenancy: vfolders.Tenancy{RM: models.Tenancy, Hosts: st.HostNames()}, Storage: st,
	}})
	if err != nil {
		return nil, err
	}
	return &node{store: store, storage: fs, handlers: h}, nil
}

// create runs the request the HTTP API runs for POST /v1/vfolders, with
// the access record the access-log middleware would hand it.
func (n *node) create(ctx context.Context) (commands.VFolderResult, error) {
	access := commands.NewAccess(audit.Record{Time: time.Now(), Action: "POST /v1/vfolders", RequestID: "req-crash", UserID: root.UserID.String(),
		Outcome: audit.Success, Status: 201})
	return n.handlers.CreateVFolder.Handle(ctx, commands.Metadata{Actor: root.UserID.String(), RequestID: "req-crash", Access: access},
		commands.CreateVFolder{Actor: root, Spec: domain.VFolderSpec{ID: folderID, Name: "data", Host: "local"}})
}

func die(at string) {
	fmt.Println("crashing at", at)
	_ = os.Stdout.Sync()
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// crashStore dies at the first append, before or after it.
type crashStore struct {
	eventstore.Store
	at string
}

func (s crashStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events ...eventstore.EventData) (eventstore.AppendResult, error) {
	if s.at == beforeAppend {
		die(s.at)
	}
	res, err := s.Store.Append(ctx, stream, expected, events...)
	if err == nil && s.at == afterAppend {
		die(s.at)
	}
	return res, err
}

func (s crashStore) AppendMany(ctx context.Context, parts ...eventstore.StreamAppend) ([]eventstore.AppendResult, error) {
	if s.at == beforeAppend {
		die(s.at)
	}
	res, err := s.Store.AppendMany(ctx, parts...)
	if err == nil && s.at == afterAppend {
		die(s.at)
	}
	return res, err
}

// crashStorage dies once the folder's directory is made.
type crashStorage struct {
	vfstorage.Storage
	at string
}

func (s crashStorage) CreateFolder(ctx context.Context, ref vfstorage.Ref) error {
	err := s.Storage.CreateFolder(ctx, ref)
	if err == nil && s.at == afterMkdir {
		die(s.at)
	}
	return err
}

func crashChild(at, dir, storeDSN string) int {
	ctx := context.Background()
	n, err := open(ctx, dir, storeDSN,
		func(s eventstore.Store) commands.EventStore { return crashStore{Store: s, at: at} },
		func(s vfstorage.Storage) vfstorage.Storage { return crashStorage{Storage: s, at: at} })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := n.create(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println("created")
	return 0
}

// TestCreateVFolderCrash kills a process creating a folder (SIGKILL) at
// each step of the create. Whatever the step, what it leaves is either
// the folder with its directory and its record of success, or no folder,
// no claim of its name and no record of success, and then the orphan
// collector sets the directory aside. A retry of the request then
// completes it. It runs on SQLite and on PostgreSQL.
func TestCreateVFolderCrash(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		testCreateVFolderCrash(t, func(*testing.T) string { return "" })
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		testCreateVFolderCrash(t, func(t *testing.T) string {
			url, schema := pgtest.Schema(t)
			sep := "?"
			if strings.Contains(url, "?") {
				sep = "&"
			}
			return url + sep + "schema=" + schema
		})
	})
}

func testCreateVFolderCrash(t *testing.T, storeDSN func(*testing.T) string) {
	for _, c := range []struct {
		at      string
		created bool
	}{{afterMkdir, false}, {beforeAppend, false}, {afterAppend, true}, {noCrash, true}} {
		t.Run(c.at, func(t *testing.T) {
			t.Parallel()
			dir, dsn := t.TempDir(), storeDSN(t)
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashAtEnv+"="+c.at, crashDirEnv+"="+dir, crashDSNEnv+"="+dsn)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var ee *exec.ExitError
			switch {
			case c.at == noCrash && err != nil:
				t.Fatalf("child: %v\n%s", err, stderr.String())
			case c.at != noCrash && !(errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL):
				t.Fatalf("child did not die of SIGKILL: %v\n%s%s", err, out, stderr.String())
			case c.at != noCrash && !strings.Contains(string(out), "crashing at "+c.at):
				t.Fatalf("child died elsewhere: %s", out)
			}

			ctx := t.Context()
			n, err := open(ctx, dir, dsn, func(s eventstore.Store) commands.EventStore { return s }, func(s vfstorage.Storage) vfstorage.Storage { return s })
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { n.store.Close(); n.storage.Close() })
			checkCreated(t, n, c.created)

			// The next start's collector (its grace long past).
			coll, err := vfolderorphans.New(vfolderorphans.Config{Clock: func() time.Time { return time.Now().Add(2 * vfolderorphans.DefaultGrace) },
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, n.store, vfolders.Storage{S: n.storage})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := coll.Sweep(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, derr := n.storage.MountSource(vfstorage.Ref{Host: "local", ID: folderID})
			switch {
			case c.created && derr != nil:
				t.Fatalf("the folder exists, its directory does not: %v (sweep %+v)", derr, rep)
			case !c.created && !errors.Is(derr, vfstorage.ErrNoFolder):
				t.Fatalf("no folder, yet its directory is in place: %v (sweep %+v)", derr, rep)
			case c.at == afterMkdir || c.at == beforeAppend:
				want := "local:" + vfstorage.LostAndFound + "/" + folderID.String()
				if len(rep.SetAside) != 1 || rep.SetAside[0] != want {
					t.Fatalf("set aside %v, want [%s]", rep.SetAside, want)
				}
			case len(rep.SetAside) != 0:
				t.Fatalf("set aside %v", rep.SetAside)
			}

			// A retry of the request completes it, or repeats its success.
			if res, err := n.create(ctx); err != nil || res.FolderID != folderID {
				t.Fatalf("retry: %+v, %v", res, err)
			}
			checkCreated(t, n, true)
			if _, err := n.storage.MountSource(vfstorage.Ref{Host: "local", ID: folderID}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkCreated checks that the log holds the folder, its name's claim and
// one access record of success for it (in its stream) when created, and
// none of them otherwise.
func checkCreated(t *testing.T, n *node, created bool) {
	t.Helper()
	ctx := t.Context()
	stream := domain.VFolderStream(folderID).String()
	// A marker appended now: once the log shows it, it shows everything
	// committed before (PostgreSQL's reads of the log hold back events
	// behind transactions still open elsewhere, e.g. other tests').
	marker, err := eventstore.NewEvent("test.marker", map[string]string{}, eventstore.Metadata{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Append(ctx, "test-marker-"+uuid.NewString(), eventstore.NoStream, marker); err != nil {
		t.Fatal(err)
	}
	var folder, claims, successes int
	var after uint64
	seen := false
	await.Until(t, time.Minute, "the marker in the log", func() bool {
		recs, err := n.store.ReadAll(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			after = r.Position
			if r.ID == marker.ID {
				seen = true
			}
			switch r.Type {
			case domain.TypeVFolderCreated:
				if r.Stream == stream {
					folder++
				}
			case domain.TypeVFolderNameClaimed:
				claims++
			case domain.TypeAccessLogged:
				ev, err := domain.DecodeEvent(r.Type, r.Version, r.Data)
				if err != nil {
					t.Fatal(err)
				}
				rec := ev.(domain.AccessLogged).Record
				if rec.Outcome != audit.Success {
					continue
				}
				successes++
				if r.Stream != stream {
					t.Errorf("the record of success is in %s, not in the folder's stream", r.Stream)
				}
			}
		}
		return seen
	})
	want := 0
	if created {
		want = 1
	}
	if folder != want || claims != want || successes != want {
		t.Fatalf("created %v: the log holds %d folder, %d claim, %d records of success", created, folder, claims, successes)
	}
}
