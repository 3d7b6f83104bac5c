package usage_test

import (
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/usage"
)

// TestQueriesSearchIndexes: on SQLite, every statement of every kind of
// query reads its tables through an index (SEARCH), never a whole table
// (SCAN), so a query costs what its range holds, not what the store holds.
func TestQueriesSearchIndexes(t *testing.T) {
	b := projectiontest.SQLite(t)
	if err := projections.Setup(ctx, b.DB, usage.New(b.DB)); err != nil {
		t.Fatal(err)
	}
	for _, g := range []usage.GroupBy{usage.ByUser, usage.ByProject, usage.ByDomain} {
		for _, f := range []usage.Query{{}, {Domain: "d"}, {Domain: "d", Project: "p"}, {UserID: "u"}, {UserID: "u", Domain: "d"}} {
			f.GroupBy, f.From, f.To = g, "2025-01-01", "2025-01-31"
			for _, st := range usage.DebugQueries(f) {
				rows, err := b.DB.Query(ctx, "EXPLAIN QUERY PLAN "+b.DB.SQL(st.SQL), st.Args...)
				if err != nil {
					t.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					var id, parent, unused int
					var detail string
					if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, detail)
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				for _, step := range plan {
					if strings.HasPrefix(step, "SCAN ") {
						t.Errorf("%s %+v: %q in the plan of\n%s\nplan: %v", g, f, step, st.SQL, plan)
					}
				}
			}
		}
	}
}
