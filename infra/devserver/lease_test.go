package devserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/maintenance"
	"github.com/cairnhq/cairn/infra/pgtest"
)

// On PostgreSQL, the five singletons run under epoch leases: GET
// /v1/system shows each held here at the epoch the leases table has, the
// metrics say so; when another holder takes the scheduler's lease over,
// this server's scheduler steps down (held here no more, the table names
// the new holder) and the server keeps serving.
func TestLeasesOnPostgres(t *testing.T) {
	t.Parallel()
	url, schema := pgtest.Schema(t)
	cfg := testConfig(filepath.Join(t.TempDir(), "data"))
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	cfg.Store = url + sep + "schema=" + schema
	cfg.LeaseTTL = 2 * time.Second
	r := start(t, cfg)

	system := func() maintenance.System {
		t.Helper()
		code, body := r.get(t, "/v1/system", true)
		if code != http.StatusOK {
			t.Fatalf("GET /v1/system = %d %s", code, body)
		}
		var sys maintenance.System
		if err := json.Unmarshal(body, &sys); err != nil {
			t.Fatal(err)
		}
		return sys
	}
	singletons := []string{"audit sequencer", "scheduler", "session limits", "vfolder jobs", "vfolder orphans"}
	var sys maintenance.System
	await.Until(t, time.Minute, "every singleton's lease held here", func() bool {
		sys = system()
		held := 0
		for _, l := range sys.Leases {
			if l.HeldHere && l.Epoch > 0 && l.Current != nil && l.Current.Epoch == l.Epoch && l.Current.Live {
				held++
			}
		}
		return held == len(singletons)
	})
	holder := ""
	for i, l := range sys.Leases {
		if l.Name != singletons[i] {
			t.Fatalf("leases %+v, want %v", sys.Leases, singletons)
		}
		if holder == "" {
			holder = l.Current.Holder
		}
		if l.Current.Holder != holder {
			t.Fatalf("lease %s held by %q, %s by %q: one process, one holder", l.Name, l.Current.Holder, sys.Leases[0].Name, holder)
		}
	}
	if _, metrics := r.get(t, "/metrics", false); !bytes.Contains(metrics, []byte(`cairn_lease_held{lease="scheduler"} 1`)) ||
		!bytes.Contains(metrics, []byte(`cairn_lease_epoch{lease="scheduler"} 1`)) {
		t.Fatalf("/metrics lacks the scheduler's lease:\n%s", metrics)
	}

	// Another holder takes the scheduler's lease (made to expire first),
	// for long enough to see this server follow.
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(t.Context(), `UPDATE `+q+`.leases SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'scheduler'`); err != nil {
		t.Fatal(err)
	}
	var took bool
	if err := conn.QueryRow(t.Context(), `SELECT out_acquired FROM `+q+`.lease_acquire('scheduler', 'intruder', interval '1 hour')`).Scan(&took); err != nil || !took {
		t.Fatalf("the intruder's takeover: %v, %v", took, err)
	}
	await.Until(t, time.Minute, "the scheduler to step down", func() bool {
		for _, l := range system().Leases {
			if l.Name == "scheduler" {
				return !l.HeldHere && l.Current != nil && l.Current.Holder == "intruder" && l.Current.Epoch == 2
			}
		}
		return false
	})
	if _, metrics := r.get(t, "/metrics", false); !bytes.Contains(metrics, []byte(`cairn_lease_held{lease="scheduler"} 0`)) ||
		!bytes.Contains(metrics, []byte(`cairn_lease_step_downs_total{lease="scheduler",reason="taken"} 1`)) {
		t.Fatalf("/metrics after the takeover:\n%s", metrics)
	}
	select {
	case err := <-r.done:
		t.Fatalf("the server stopped after losing a lease: %v", err)
	default:
	}
	if code, body := r.get(t, "/healthz", false); code != http.StatusOK {
		t.Fatalf("GET /healthz = %d %s", code, body)
	}
}
