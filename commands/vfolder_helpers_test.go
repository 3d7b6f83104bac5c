package commands_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// fakeTenancy stands in for the tenancy read model: principals by user
// id, policies by owner stream, users by e-mail address.
type fakeTenancy struct {
	mu       sync.Mutex
	access   map[uuid.UUID]commands.VFolderAccess
	policies map[domain.Stream]domain.StoragePolicySpec
	emails   map[string]commands.VFolderUser
	projects map[string]bool
}

func (f *fakeTenancy) VFolderAccess(_ context.Context, actor commands.Principal) (commands.VFolderAccess, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.access[actor.UserID]
	if !ok {
		return commands.VFolderAccess{Viewer: domain.VFolderViewer{UserID: actor.UserID.String(), Domain: actor.Domain}}, nil
	}
	return a, nil
}

func (f *fakeTenancy) StoragePolicy(_ context.Context, o domain.VFolderOwner) (domain.StoragePolicySpec, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o.Kind == domain.VFolderOwnedByProject && !f.projects[o.ID] {
		return domain.StoragePolicySpec{}, domain.NotFound("test", "project")
	}
	return f.policies[o.Stream()], nil
}

func (f *fakeTenancy) UserByEmail(_ context.Context, email string) (commands.VFolderUser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.emails[email]
	if !ok {
		return u, domain.NotFound("test", "user")
	}
	return u, nil
}

func (f *fakeTenancy) UserByID(_ context.Context, id uuid.UUID) (commands.VFolderUser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, u := range f.emails {
		if u.ID == id {
			return u, nil
		}
	}
	return commands.VFolderUser{}, domain.NotFound("test", "user")
}

// fakeStorage keeps folders as a set with a byte count each, and fails
// the next call of an operation when told to.
type fakeStorage struct {
	mu       sync.Mutex
	folders  map[uuid.UUID]int64
	failNext map[string]error
	calls    []string
}

func newFakeStorage() *fakeStorage {
	return &fakeStorage{folders: map[uuid.UUID]int64{}, failNext: map[string]error{}}
}

func (s *fakeStorage) fail(op string) error {
	s.calls = append(s.calls, op)
	if err, ok := s.failNext[op]; ok {
		delete(s.failNext, op)
		return err
	}
	return nil
}

func (s *fakeStorage) HasHost(h string) bool { return h == "local" || h == "nfs" }

func (s *fakeStorage) CreateFolder(_ context.Context, _ string, id uuid.UUID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("create"); err != nil {
		return err
	}
	if _, ok := s.folders[id]; !ok {
		s.folders[id] = 0
	}
	return nil
}

func (s *fakeStorage) DeleteFolder(_ context.Context, _ string, id uuid.UUID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("delete"); err != nil {
		return err
	}
	delete(s.folders, id)
	return nil
}

func (s *fakeStorage) CloneFolder(_ context.Context, _ string, src uuid.UUID, _ string, dst uuid.UUID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail("clone"); err != nil {
		return err
	}
	s.folders[dst] = s.folders[src]
	return nil
}

func (s *fakeStorage) UsedBytes(_ context.Context, _ string, id uuid.UUID) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.folders[id], nil
}

func (s *fakeStorage) has(id uuid.UUID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.folders[id]
	return ok
}

// fakeDirectory finds shared folders by name from a fixed list.
type fakeDirectory map[string][]uuid.UUID // user/name → ids

func (d fakeDirectory) SharedWithNamed(_ context.Context, user, name string) ([]uuid.UUID, error) {
	return d[user+"/"+name], nil
}

var (
	vfAlice = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-0000000000a1"), Role: domain.RoleUser, Domain: "acme"}
	vfBob   = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-0000000000b0"), Role: domain.RoleUser, Domain: "acme"}
	vfAdmin = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-0000000000ad"), Role: domain.RoleAdmin, Domain: "acme"}
	vfEve   = commands.Principal{UserID: uuid.MustParse("0195a0c0-0000-7000-8000-0000000000e0"), Role: domain.RoleUser, Domain: "evil"}

	allHosts = domain.VFolderHosts{"local": domain.VFolderHostPermissions(), "nfs": domain.VFolderHostPermissions()}
)

// vfEnv is a store with handlers whose vfolder ports are fakes.
type vfEnv struct {
	*env
	tenancy *fakeTenancy
	storage *fakeStorage
	dir     fakeDirectory
}

func newVFEnv(t testing.TB) *vfEnv {
	t.Helper()
	return newVFEnvWith(t, commands.Options{})
}

// newVFEnvWith is newVFEnv with options (its VFolders ports are set).
func newVFEnvWith(t testing.TB, opts commands.Options) *vfEnv {
	t.Helper()
	store := openStore(t)
	ft := &fakeTenancy{
		access: map[uuid.UUID]commands.VFolderAccess{
			vfAlice.UserID: {Viewer: domain.VFolderViewer{UserID: vfAlice.UserID.String(), Domain: "acme", Projects: []string{"acme/ml"}}, Hosts: allHosts},
			vfBob.UserID:   {Viewer: domain.VFolderViewer{UserID: vfBob.UserID.String(), Domain: "acme", Projects: []string{"acme/ml"}}, Hosts: allHosts},
			vfAdmin.UserID: {Viewer: domain.VFolderViewer{UserID: vfAdmin.UserID.String(), Domain: "acme", DomainAdmin: true}, Hosts: allHosts},
			vfEve.UserID:   {Viewer: domain.VFolderViewer{UserID: vfEve.UserID.String(), Domain: "evil"}, Hosts: allHosts},
		},
		policies: map[domain.Stream]domain.StoragePolicySpec{},
		emails: map[string]commands.VFolderUser{
			"bob@acme.test": {ID: vfBob.UserID, Domain: "acme"},
			"eve@evil.test": {ID: vfEve.UserID, Domain: "evil"},
		},
		projects: map[string]bool{"acme/ml": true},
	}
	fs := newFakeStorage()
	dir := fakeDirectory{}
	opts.VFolders = commands.VFolderPorts{Tenancy: ft, Storage: fs, Directory: dir}
	h, err := commands.NewHandlers(store, stepClock(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return &vfEnv{env: &env{store: store, handlers: h, md: commands.Metadata{Actor: "u1", RequestID: "req-1"}}, tenancy: ft, storage: fs, dir: dir}
}

// create makes a folder of actor named name on host local.
func (e *vfEnv) create(t testing.TB, actor commands.Principal, name string, mod ...func(*domain.VFolderSpec)) uuid.UUID {
	t.Helper()
	spec := domain.VFolderSpec{Name: name, Host: "local"}
	for _, m := range mod {
		m(&spec)
	}
	res, err := e.handlers.CreateVFolder.Handle(ctx, e.md, commands.CreateVFolder{Actor: actor, Spec: spec})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return res.FolderID
}

func (e *vfEnv) folder(t testing.TB, id uuid.UUID) *domain.VFolder {
	t.Helper()
	f, err := domain.RehydrateVFolder(decode(t, e.read(t, domain.VFolderStream(id).String())))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (e *vfEnv) index(t testing.TB, o domain.VFolderOwner) *domain.VFolderIndex {
	t.Helper()
	x, err := domain.RehydrateVFolderIndex(decode(t, e.read(t, o.Stream().String())))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// wantKindField fails unless err has kind k (and, when field is set, names it).
func wantKindField(t testing.TB, err error, k domain.Kind, field string) {
	t.Helper()
	var de *domain.Error
	if err == nil || domain.KindOf(err) != k {
		t.Fatalf("error %v: want kind %s", err, k)
	}
	if field != "" {
		found := false
		for _, e := range flatten(err) {
			if errors.As(e, &de) && de.Field == field {
				found = true
			}
		}
		if !found {
			t.Fatalf("error %v: want field %q", err, field)
		}
	}
}

func flatten(err error) []error {
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range m.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// encodeEvents turns domain events into store events.
func encodeEvents(evs []domain.Event) ([]eventstore.EventData, error) {
	out := make([]eventstore.EventData, len(evs))
	for i, ev := range evs {
		data, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		out[i] = eventstore.EventData{ID: eventstore.NewEventID(), Type: ev.EventType(), Version: domain.SchemaVersion, Data: data}
	}
	return out, nil
}

func exact(revision int64) eventstore.ExpectedRevision { return eventstore.Exact(revision) }
