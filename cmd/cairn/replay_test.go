package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore/sqlite"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/projections/sessions"
)

// TestReplayRebuild appends sessions with the real command handlers, then
// rebuilds every read model from the log and reads them back.
func TestReplayRebuild(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	store, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := commands.NewHandlers(store, time.Now, commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	for range n {
		spec := domain.SessionSpec{
			Name: "train", Owner: domain.Owner{UserID: "u1", AccessKey: "AKIA1"},
			Domain: "default", Project: "ml", ResourceGroup: "default",
			Type: domain.SessionBatch, Image: "cr.io/pytorch:2.4", Command: "true",
			Resources: domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: domain.Units(1 << 30)},
		}
		if _, err := h.RequestSession.Handle(ctx, commands.Metadata{Actor: "u1"}, commands.RequestSession{Spec: spec}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	if err := rebuild(ctx, "sqlite://"+path, []string{"nope"}); err == nil {
		t.Fatal("an unknown read model was rebuilt")
	}
	if err := rebuild(ctx, "sqlite://"+path, nil); err != nil {
		t.Fatal(err)
	}

	rstore, db, err := readmodels.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer rstore.Close()
	page, err := readmodels.New(db, nil).Sessions.ListSessions(ctx, sessions.Filter{Owner: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != n {
		t.Fatalf("rebuilt read model lists %d sessions, want %d", len(page.Sessions), n)
	}
	for _, s := range page.Sessions {
		if s.Status != domain.StatusPending {
			t.Errorf("session %s is %s, want PENDING", s.ID, s.Status)
		}
	}
}
