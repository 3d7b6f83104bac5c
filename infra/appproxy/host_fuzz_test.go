package appproxy

import (
	"testing"

	"github.com/google/uuid"
)

// FuzzOnHost: whatever Host a request carries, a host the proxy takes
// for an app's is exactly that app's label under the domain.
func FuzzOnHost(f *testing.F) {
	const d = "apps.example.test"
	f.Add("port-8080--0b9d3c1e58f24a3e9d551f6f0a6c2b7d.apps.example.test:8081")
	f.Add("PORT-8080--0B9D3C1E58F24A3E9D551F6F0A6C2B7D.apps.example.test.")
	f.Add("x.apps.example.test")
	f.Add("apps.example.test")
	f.Add("a--b--0b9d3c1e58f24a3e9d551f6f0a6c2b7d.apps.example.test")
	f.Fuzz(func(t *testing.T, host string) {
		session, app, ok, under := onHost(host, d)
		if ok && !under {
			t.Fatalf("%q: an app's host that is not under the domain", host)
		}
		if !ok {
			return
		}
		label, lok := HostLabel(session, app)
		if !lok {
			t.Fatalf("%q: took app %q of %s, which has no label", host, app, session)
		}
		if s2, a2, ok2 := parseHostLabel(label); !ok2 || s2 != session || a2 != app {
			t.Fatalf("%q: label %q does not round-trip", host, label)
		}
		if session == uuid.Nil && app == "" {
			t.Fatalf("%q: an empty route", host)
		}
	})
}
