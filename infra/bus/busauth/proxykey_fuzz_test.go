package busauth_test

import (
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// FuzzVerifySignatureHeader: whatever signature header a request to an
// agent carries, the verifier answers unauthenticated (or lets through a
// header it made itself), never panics nor errs otherwise.
func FuzzVerifySignatureHeader(f *testing.F) {
	keys, err := busauth.LoadOrCreateKeys(filepath.Join(f.TempDir(), "keys"))
	if err != nil {
		f.Fatal(err)
	}
	issuer, _ := keys.Account.PublicKey()
	now := time.Unix(1_800_000_000, 0)
	f.Add("t=1800000000,sig=AAAA")
	f.Add("t=1800000000,sig=AAAA,grant=eyJrIjoiVUEiLCJlIjoxfQ.AAAA")
	f.Add("grant=.,t=1,sig=")
	f.Add("t=1800000000,sig=AA,grant=eyJrIjoiVUFCQyIsImUiOjE5MDAwMDAwMDB9.x")
	f.Fuzz(func(t *testing.T, header string) {
		r, _ := http.NewRequest(http.MethodGet, "http://agent/kernels/k/apps/8080/", nil)
		r.Header.Set(busauth.ManagerSignatureHeader, header)
		v := busauth.RequestVerifier{AgentID: "a1", Issuer: issuer, Clock: func() time.Time { return now },
			Delegated: func(*http.Request) bool { return true }}
		if err := v.Verify(r); err != nil && !errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("%q: %v, want unauthenticated", header, err)
		}
	})
}
