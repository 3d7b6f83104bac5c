package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestToken(t *testing.T) {
	base := tokenIssued()
	spec := TokenSpec{ID: tokenA, UserID: userA, Domain: "acme", Kind: TokenBearer, Digest: digestA, Description: "ci", ExpiresAt: at(3600)}
	issue := func(s TokenSpec) func(*Token) ([]Event, error) {
		return func(tk *Token) ([]Event, error) { return tk.Issue(s, at(0)) }
	}
	revoked := TokenRevoked{At: at(5)}
	revoke := func(tk *Token) ([]Event, error) { return tk.Revoke(at(5)) }
	runCases(t, RehydrateToken, []aggCase[*Token]{
		{
			name: "issued",
			when: issue(spec),
			then: []Event{base},
			check: func(t *testing.T, tk *Token) {
				if !tk.Exists() || tk.ID() != tokenA || tk.UserID() != userA || tk.Domain() != "acme" || tk.Kind() != TokenBearer ||
					tk.Digest() != digestA || !tk.ExpiresAt().Equal(at(3600)) || !tk.IssuedAt().Equal(at(0)) || tk.Revoked() {
					t.Fatalf("%+v", tk)
				}
			},
		},
		{name: "issued twice", given: []Event{base}, when: issue(spec), err: ErrConflict},
		{
			name: "every problem at once",
			when: issue(TokenSpec{Domain: "no space", Kind: "cookie", Digest: strings.ToUpper(digestA),
				Description: strings.Repeat("x", 300), ExpiresAt: at(0)}),
			err:    ErrInvalid,
			fields: []string{"id", "user_id", "domain", "kind", "digest", "description", "expires_at"},
		},
		{
			name:   "too long a life",
			when:   issue(TokenSpec{ID: tokenA, UserID: userA, Domain: "acme", Kind: TokenLogin, Digest: digestA, ExpiresAt: at(0).Add(MaxTokenLifetime + time.Second)}),
			err:    ErrInvalid,
			fields: []string{"expires_at"},
		},
		{name: "revoked", given: []Event{base}, when: revoke, then: []Event{revoked},
			check: func(t *testing.T, tk *Token) {
				if !tk.Revoked() || !tk.Exists() {
					t.Fatalf("%+v", tk)
				}
			}},
		{name: "revoked again", given: []Event{base, revoked}, when: revoke},
		{name: "revoking a token never issued", when: revoke, err: ErrNotFound},
	})
}

func TestTokenFoldRefusesForeignStreams(t *testing.T) {
	for name, events := range map[string][]Event{
		"revoked before issue": {TokenRevoked{At: at(1)}},
		"issued twice":         {tokenIssued(), tokenIssued()},
		"not a token event":    {tokenIssued(), ImageForgotten{At: at(1)}},
	} {
		if _, err := RehydrateToken(recorded(events)); err == nil {
			t.Errorf("%s: folded", name)
		}
	}
	if _, err := RehydrateToken(nil); err != nil {
		t.Fatal(err)
	}
	var zero Token
	if zero.ID() != uuid.Nil {
		t.Fatal("zero token has an id")
	}
}
