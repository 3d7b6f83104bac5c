package devserver

import (
	"bytes"
	"crypto/ed25519"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/auditheads"
	"github.com/cairnhq/cairn/infra/await"
)

// TestRunSignsAuditHeads: with a key and a file sink, the server signs the
// audit chain's head as requests are sealed, answers it on
// GET /v1/audit/heads/latest.
func TestRunSignsAuditHeads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key, err := auditheads.WriteKey(filepath.Join(dir, "head.key"))
	if err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	keys := audit.Keyring{audit.KeyID(pub): pub}
	heads := filepath.Join(dir, "heads", "audit-heads.ndjson")
	if err := os.MkdirAll(filepath.Dir(heads), 0o750); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(filepath.Join(dir, "data"))
	cfg.AuditHeadKey, cfg.AuditHeadSinks, cfg.AuditHeadEvery, cfg.AuditHeadInterval = filepath.Join(dir, "head.key"), []string{"file:" + heads}, 1, time.Hour
	r := start(t, cfg)

	signed := func() []audit.Head {
		data, err := os.ReadFile(heads)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		got, err := audit.VerifyHeads(bytes.NewReader(data), keys)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	r.get(t, "/v1/sessions", true)
	await.Until(t, time.Minute, "a signed head in the file", func() bool { return len(signed()) > 0 })
	code, body := r.get(t, "/v1/audit/heads/latest", true)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/audit/heads/latest: %d %s", code, body)
	}
	latest, err := audit.VerifyHeads(bytes.NewReader(body), keys)
	if err != nil || len(latest) != 1 || latest[0].Seq == 0 {
		t.Fatalf("the latest head %s: %v", body, err)
	}
	r.stop(t)
	if got := signed(); got[len(got)-1].Seq < latest[0].Seq {
		t.Fatalf("the file's last head %v is behind the one answered, %v", got[len(got)-1], latest[0])
	}
}

// TestRunWithoutAuditHeadKey: no signing, said once at start; the route
// answers 404.
func TestRunWithoutAuditHeadKey(t *testing.T) {
	t.Parallel()
	r := start(t, testConfig(t.TempDir()))
	if code, body := r.get(t, "/v1/audit/heads/latest", true); code != http.StatusNotFound {
		t.Fatalf("GET /v1/audit/heads/latest without a key: %d %s", code, body)
	}
	if n := strings.Count(r.logs.String(), "no audit head key configured"); n != 1 {
		t.Fatalf("the warning is logged %d times", n)
	}
}
