package vfolders_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/vfolderorphans"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/vfolders"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// The collector sets aside exactly the directories older than its grace
// whose folder does not exist (no stream, a creation abandoned), keeps
// every other one, and never touches what is not a folder directory.
func TestCollectorSetsAsideOnlyOrphans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	n, err := open(ctx, dir, "", func(s eventstore.Store) commands.EventStore { return s }, func(s vfstorage.Storage) vfstorage.Storage { return s })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.store.Close(); n.storage.Close() })
	hostDir := filepath.Join(dir, "vfolders")
	now := time.Now()
	old := now.Add(-2 * time.Hour)

	if _, err := n.create(ctx); err != nil { // folderID, a real folder
		t.Fatal(err)
	}
	orphan, young, abandoned := uuid.New(), uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{orphan, young, abandoned} {
		if err := n.storage.CreateFolder(ctx, vfstorage.Ref{Host: "local", ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := domain.MarshalEvent(domain.VFolderCreationAbandoned{FolderID: abandoned, Name: "x", At: old})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Append(ctx, domain.VFolderStream(abandoned).String(), eventstore.NoStream, eventstore.EventData{
		ID: eventstore.NewEventID(), Type: domain.TypeVFolderCreationAbandoned, Version: domain.SchemaVersion, Data: data}); err != nil {
		t.Fatal(err)
	}
	// Not folder directories: work in progress, a stray file, a
	// directory named by an id in the wrong fan-out directory.
	stray := uuid.New()
	wrongFan := "zz"
	if fanOf(stray) == "00" {
		wrongFan = "01"
	}
	strays := []string{
		filepath.Join(hostDir, fanOf(orphan), ".clone-"+uuid.NewString()),
		filepath.Join(hostDir, "00", wrongFan),
		filepath.Join(hostDir, wrongFan, stray.String()),
	}
	for _, p := range strays {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	note := filepath.Join(hostDir, fanOf(orphan), "note")
	if err := os.WriteFile(note, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Everything is old but the young folder's directory.
	for _, p := range append(strays, note,
		filepath.Join(hostDir, fanOf(folderID), folderID.String()),
		filepath.Join(hostDir, fanOf(orphan), orphan.String()),
		filepath.Join(hostDir, fanOf(abandoned), abandoned.String())) {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	c, err := vfolderorphans.New(vfolderorphans.Config{Clock: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, n.store, vfolders.Storage{S: n.storage})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lf := "local:" + vfstorage.LostAndFound + "/"
	want := []string{lf + orphan.String(), lf + abandoned.String()}
	slices.Sort(want)
	slices.Sort(rep.SetAside)
	if !slices.Equal(rep.SetAside, want) || rep.Checked != 3 {
		t.Fatalf("sweep %+v, want %v set aside of 3 checked", rep, want)
	}
	for id, kept := range map[uuid.UUID]bool{folderID: true, young: true, orphan: false, abandoned: false} {
		_, err := n.storage.MountSource(vfstorage.Ref{Host: "local", ID: id})
		if (err == nil) != kept {
			t.Errorf("folder directory %s: kept %v, want %v (%v)", id, err == nil, kept, err)
		}
	}
	for _, p := range append(strays, note, filepath.Join(hostDir, vfstorage.LostAndFound, orphan.String())) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	// An orphan of an id set aside before gets another name.
	if err := n.storage.CreateFolder(ctx, vfstorage.Ref{Host: "local", ID: orphan}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(hostDir, fanOf(orphan), orphan.String()), old, old); err != nil {
		t.Fatal(err)
	}
	if rep, err = c.Sweep(ctx); err != nil || !slices.Equal(rep.SetAside, []string{lf + orphan.String() + ".1"}) {
		t.Fatalf("second sweep %+v, %v", rep, err)
	}
}

// Run sweeps at once, and returns nil when stopped.
func TestCollectorRunSweepsAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n, err := open(t.Context(), dir, "", func(s eventstore.Store) commands.EventStore { return s }, func(s vfstorage.Storage) vfstorage.Storage { return s })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.store.Close(); n.storage.Close() })
	orphan := uuid.New()
	if err := n.storage.CreateFolder(t.Context(), vfstorage.Ref{Host: "local", ID: orphan}); err != nil {
		t.Fatal(err)
	}
	c, err := vfolderorphans.New(vfolderorphans.Config{Grace: time.Nanosecond, Clock: func() time.Time { return time.Now().Add(time.Second) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, n.store, vfolders.Storage{S: n.storage})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	set := filepath.Join(dir, "vfolders", vfstorage.LostAndFound, orphan.String())
	await.Until(t, 30*time.Second, "the orphan set aside at start", func() bool {
		_, err := os.Stat(set)
		return err == nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func fanOf(id uuid.UUID) string { return id.String()[34:] }
