package podman

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/containers/podman/v5/pkg/errorhandling"
	"github.com/containers/podman/v5/pkg/specgen"
	"github.com/containers/storage/pkg/idtools"

	"github.com/cairnhq/cairn/agents/runtime"
)

func TestTranslate(t *testing.T) {
	t.Parallel()
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	model := func(code int) error {
		return &errorhandling.ErrorModel{Because: "x", Message: "x", ResponseCode: code}
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want []error // sentinels it must match
		not  []error // and must not
	}{
		{"404", live, model(404), []error{runtime.ErrNotFound}, []error{runtime.ErrInvalid, runtime.ErrUnavailable}},
		{"400", live, model(400), []error{runtime.ErrInvalid}, []error{runtime.ErrNotFound}},
		{"503", live, model(503), []error{runtime.ErrUnavailable}, nil},
		{"500 stays unclassified", live, model(500), nil, []error{runtime.ErrNotFound, runtime.ErrInvalid, runtime.ErrUnavailable}},
		{"409 stays unclassified", live, fmt.Errorf("wrapped: %w", model(409)), nil, []error{runtime.ErrNotFound}},
		{"connection refused", live, &url.Error{Op: "Get", URL: "http://d/", Err: syscall.ECONNREFUSED}, []error{runtime.ErrUnavailable, syscall.ECONNREFUSED}, nil},
		{"context ended", ended, &url.Error{Op: "Get", URL: "http://d/", Err: context.Canceled}, []error{context.Canceled}, []error{runtime.ErrUnavailable}},
		{"other", live, errors.New("boom"), nil, []error{runtime.ErrNotFound, runtime.ErrInvalid, runtime.ErrUnavailable}},
	} {
		got := translate(tc.ctx, "op", tc.err)
		for _, w := range tc.want {
			if !errors.Is(got, w) {
				t.Errorf("%s: %v does not match %v", tc.name, got, w)
			}
		}
		for _, n := range tc.not {
			if errors.Is(got, n) {
				t.Errorf("%s: %v matches %v", tc.name, got, n)
			}
		}
		if !errors.Is(got, tc.err) {
			t.Errorf("%s: the cause is lost: %v", tc.name, got)
		}
	}
	if translate(live, "op", nil) != nil {
		t.Error("translate(nil) != nil")
	}
}

// TestKeyLock runs in a synctest bubble: the waiter's deadline passes only
// once every goroutine is blocked, so a lock that let it in late would be
// seen as surely as one that let it in at once.
func TestKeyLock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var l keyLock
		ctx := context.Background()

		// Holders of one key never overlap.
		var inside, maxInside, counter int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				unlock, err := l.lock(ctx, "k")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				maxInside = max(maxInside, inside)
				mu.Unlock()
				counter++ // guarded by the key lock alone: -race checks it
				mu.Lock()
				inside--
				mu.Unlock()
				unlock()
			}()
		}
		wg.Wait()
		if maxInside != 1 || counter != 16 {
			t.Errorf("max holders %d, count %d; want 1 and 16", maxInside, counter)
		}

		// A waiter gives up when its context ends; other keys are free.
		unlock, err := l.lock(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		if _, err := l.lock(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("lock of a held key past the deadline: %v", err)
		}
		unlockB, err := l.lock(short, "b")
		if err == nil {
			unlockB()
		}
		unlock()
		if n := len(l.entries); n != 0 {
			t.Errorf("%d entries left after every lock was released", n)
		}

	})
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	b := tailBuffer{max: 5}
	for _, s := range []string{"ab", "cdefg", "h", "ijklmnopq", "r"} {
		b.write(s)
	}
	if got := string(b.bytes()); got != "nopqr" {
		t.Errorf("tail = %q, want nopqr", got)
	}
	small := tailBuffer{max: 10}
	small.write("abc")
	if got := string(small.bytes()); got != "abc" {
		t.Errorf("tail = %q, want abc", got)
	}
}

func TestGraceSeconds(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]uint{
		0: 1, time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, 10 * time.Second: 10,
	} {
		if got := graceSeconds(d); got != want {
			t.Errorf("graceSeconds(%s) = %d, want %d", d, got, want)
		}
	}
}

// The spec's isolation reaches Podman's: every capability dropped but the
// spec's, spelled CAP_*, a private user namespace with the one mapping for
// uids and gids, and nosuid,nodev bind mounts.
func TestSpecForIsolation(t *testing.T) {
	t.Parallel()
	s := runtime.ContainerSpec{
		KernelID: "k", SessionID: "s", AgentID: "a", Image: "i",
		Capabilities: []string{"chown", "CAP_KILL"},
		UserNS:       &runtime.IDMap{HostID: 1 << 20, Size: 65536},
		Mounts:       []runtime.Mount{{Source: "/data", Target: "/home/work/data", ReadOnly: true}},
	}.WithDefaults()
	g := specFor(s)
	if !slices.Equal(g.CapDrop, []string{"ALL"}) || !slices.Equal(g.CapAdd, []string{"CAP_CHOWN", "CAP_KILL"}) {
		t.Errorf("cap drop %v add %v", g.CapDrop, g.CapAdd)
	}
	if g.NoNewPrivileges == nil || !*g.NoNewPrivileges {
		t.Error("no-new-privileges is not set")
	}
	if g.UserNS.NSMode != specgen.Private || g.IDMappings == nil {
		t.Fatalf("userns %+v mappings %+v", g.UserNS, g.IDMappings)
	}
	want := []idtools.IDMap{{ContainerID: 0, HostID: 1 << 20, Size: 65536}}
	if !slices.Equal(g.IDMappings.UIDMap, want) || !slices.Equal(g.IDMappings.GIDMap, want) || g.IDMappings.HostUIDMapping || g.IDMappings.HostGIDMapping {
		t.Errorf("mappings = %+v, want uids and gids %v", g.IDMappings, want)
	}
	if len(g.Mounts) != 1 || !slices.Equal(g.Mounts[0].Options, []string{"rbind", "ro", "nosuid", "nodev"}) {
		t.Errorf("mounts = %+v", g.Mounts)
	}

	s.UserNS, s.Capabilities = nil, []string{}
	g = specFor(s)
	if g.UserNS.NSMode != "" || g.IDMappings != nil || len(g.CapAdd) != 0 || !slices.Equal(g.CapDrop, []string{"ALL"}) {
		t.Errorf("without a user namespace or capabilities: userns %+v mappings %+v add %v drop %v", g.UserNS, g.IDMappings, g.CapAdd, g.CapDrop)
	}
}

func TestExitRace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&errorhandling.ErrorModel{Because: "x", Message: "open /proc/16044/cgroup: no such process", ResponseCode: 500}, true},
		{errors.New("open /proc/7/stat: no such file or directory"), true},
		{errors.New("no such container"), false},
		{errors.New("open /etc/x: no such file or directory"), false},
	} {
		if got := exitRace(tc.err); got != tc.want {
			t.Errorf("exitRace(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
