package projectiontest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/projections"
)

// Dump returns every row of table, ordered by orderBy, one string per row
// with its ncols columns: what a rebuild must reproduce exactly.
func Dump(t testing.TB, db *projections.DB, table string, ncols int, orderBy string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, db.SQL("SELECT * FROM {schema}."+table+" ORDER BY "+orderBy))
	if err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, ncols)
		ptrs := make([]any, ncols)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		parts := make([]string, ncols)
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			parts[i] = fmt.Sprintf("%v", v)
		}
		out = append(out, strings.Join(parts, " | "))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	if err := rows.Close(); err != nil {
		t.Fatalf("dump %s: %v", table, err)
	}
	return out
}

// DiffRows reports the first rows where want and got differ, for a test
// failure message; "" when they are equal.
func DiffRows(want, got []string) string {
	var b strings.Builder
	if len(want) != len(got) {
		fmt.Fprintf(&b, "%d rows, want %d\n", len(got), len(want))
	}
	shown := 0
	for i := 0; i < max(len(want), len(got)) && shown < 5; i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "row %d:\n  got  %s\n  want %s\n", i, g, w)
			shown++
		}
	}
	return b.String()
}
