package readmodels

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnhq/cairn/eventstore/sqlite"
)

func TestNamesMatchTheSet(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cairn.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	db, err := OpenSQLite(store, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set := New(db, store)
	var got []string
	for _, p := range set.All() {
		got = append(got, p.Name())
	}
	if !slices.Equal(got, Names()) {
		t.Fatalf("projections %v, Names() %v", got, Names())
	}
	sel, err := set.Select([]string{Names()[1]})
	if err != nil || len(sel) != 1 || sel[0].Name() != Names()[1] {
		t.Fatalf("Select = %v, %v", sel, err)
	}
	if _, err := set.Select([]string{"nope"}); err == nil {
		t.Fatal("an unknown read model was selected")
	}
}
