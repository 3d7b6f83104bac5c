package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

// quietLogger drops logs: tests assert on behaviour, not on log lines.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// openTestStore opens a store on a fresh file in t.TempDir and closes it
// at the end of the test.
func openTestStore(t testing.TB, opts Options) *Store {
	t.Helper()
	return openStoreAt(t, filepath.Join(t.TempDir(), "cairn.db"), opts)
}

func openStoreAt(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger
	}
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func event(typ string, n int) eventstore.EventData {
	return eventstore.EventData{
		ID:      eventstore.NewEventID(),
		Type:    typ,
		Version: 1,
		Data:    json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
	}
}

func events(typ string, n int) []eventstore.EventData {
	out := make([]eventstore.EventData, n)
	for i := range out {
		out[i] = event(typ, i)
	}
	return out
}

// readAllEvents reads the whole log in pages.
func readAllEvents(t testing.TB, s *Store) []eventstore.RecordedEvent {
	t.Helper()
	var all []eventstore.RecordedEvent
	var after uint64
	for {
		page, err := s.ReadAll(context.Background(), after, 500)
		if err != nil {
			t.Fatalf("ReadAll(%d): %v", after, err)
		}
		all = append(all, page...)
		if len(page) < 500 {
			return all
		}
		after = page[len(page)-1].Position
	}
}

func mustAppend(t testing.TB, s *Store, stream string, expected eventstore.ExpectedRevision, evs ...eventstore.EventData) eventstore.AppendResult {
	t.Helper()
	res, err := s.Append(context.Background(), stream, expected, evs...)
	if err != nil {
		t.Fatalf("Append(%s, %s): %v", stream, expected, err)
	}
	return res
}

// asError is errors.As returning the target.
func asError[E error](t testing.TB, err error) E {
	t.Helper()
	var target E
	if !errors.As(err, &target) {
		t.Fatalf("error %v (%T) is not a %T", err, err, target)
	}
	return target
}
