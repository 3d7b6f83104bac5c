package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// SQLSTATE 53100 (disk_full), by its code, becomes the store's disk-full
// error; other codes do not.
func TestTranslateDiskFull(t *testing.T) {
	s := &Store{}
	full := fmt.Errorf("append: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"})
	err := s.translate(context.Background(), "append", full)
	var pgErr *pgconn.PgError
	if domain.KindOf(err) != domain.KindUnavailable || !errors.Is(err, eventstore.ErrStorageFull) || !errors.As(err, &pgErr) {
		t.Fatalf("translate(53100) = %v (kind %s)", err, domain.KindOf(err))
	}
	other := s.translate(context.Background(), "append", &pgconn.PgError{Code: "53200", Message: "out of memory"})
	if errors.Is(other, eventstore.ErrStorageFull) || domain.KindOf(other) == domain.KindUnavailable {
		t.Errorf("translate(53200) = %v: not a full disk", other)
	}
}
