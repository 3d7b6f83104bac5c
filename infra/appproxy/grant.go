package appproxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Kinds of grant.
const (
	// KindTicket is a one-use grant carried once in a URL (the query
	// parameter TicketParam): short-lived, exchanged for a cookie or used
	// to open one WebSocket.
	KindTicket = "ticket"
	// KindCookie is the grant the proxy sets as an HttpOnly cookie scoped
	// to the app's path after a ticket was exchanged.
	KindCookie = "cookie"
)

// TerminalApp is the name a grant for a session's terminal carries.
const TerminalApp = "terminal"

// Grant is what a sealed ticket or app cookie lets its bearer do: reach
// one app of one session, as one user, until Expires. The API mints
// tickets after its own authorization (POST /v1/sessions/{id}/apps/{app});
// the proxy checks the seal and re-reads the route, so a grant never
// outlives its session.
type Grant struct {
	User    uuid.UUID `json:"u"`
	Session uuid.UUID `json:"s"`
	App     string    `json:"a"`
	Kind    string    `json:"k"`
	// Expires is in Unix seconds.
	Expires int64 `json:"e"`
	// Nonce makes every ticket unique, so a used one is recognised.
	Nonce string `json:"n"`
}

// Keyring seals and opens grants with an HMAC-SHA256 key shared by the
// API that mints tickets and the proxies that accept them. Nothing else
// is shared: a proxy keeps no session of its own.
type Keyring struct {
	key []byte
}

// KeySize is the length of a keyring's key in bytes.
const KeySize = 32

// NewKeyring returns a keyring over key, which must be KeySize bytes or
// more.
func NewKeyring(key []byte) (*Keyring, error) {
	if len(key) < KeySize {
		return nil, fmt.Errorf("appproxy: the key has %d bytes, want at least %d", len(key), KeySize)
	}
	return &Keyring{key: append([]byte(nil), key...)}, nil
}

// LoadOrCreateKey reads the hex key in the file at path, or creates the
// file (0600, its directory 0700) with a new random key.
func LoadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < KeySize {
			return nil, fmt.Errorf("appproxy: %s does not hold a %d-byte hex key", path, KeySize)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("appproxy: read key: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("appproxy: key directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) { // created meanwhile by another process
			return LoadOrCreateKey(path)
		}
		return nil, fmt.Errorf("appproxy: create key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("appproxy: write key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("appproxy: write key: %w", err)
	}
	return key, nil
}

// Seal returns g as a string safe in a URL and a cookie:
// base64url(JSON) "." base64url(HMAC). A grant without a nonce gets one.
func (k *Keyring) Seal(g Grant) string {
	if g.Nonce == "" {
		var n [12]byte
		_, _ = rand.Read(n[:])
		g.Nonce = base64.RawURLEncoding.EncodeToString(n[:])
	}
	body, _ := json.Marshal(g)
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + base64.RawURLEncoding.EncodeToString(k.mac(payload))
}

func (k *Keyring) mac(payload string) []byte {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte("cairn-app-grant-v1\n"))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// errBadGrant is every reason a sealed grant is refused; the proxy
// answers them all alike (404), so the reason is only logged.
var errBadGrant = errors.New("appproxy: bad grant")

// Open checks the seal and the expiry of a sealed grant.
func (k *Keyring) Open(sealed string, now time.Time) (Grant, error) {
	payload, sig, ok := strings.Cut(sealed, ".")
	if !ok || len(sealed) > 1024 {
		return Grant{}, fmt.Errorf("%w: malformed", errBadGrant)
	}
	want, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(want, k.mac(payload)) {
		return Grant{}, fmt.Errorf("%w: seal does not match", errBadGrant)
	}
	body, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Grant{}, fmt.Errorf("%w: malformed", errBadGrant)
	}
	var g Grant
	if err := json.Unmarshal(body, &g); err != nil {
		return Grant{}, fmt.Errorf("%w: malformed", errBadGrant)
	}
	if now.Unix() >= g.Expires {
		return Grant{}, fmt.Errorf("%w: expired", errBadGrant)
	}
	if g.Kind != KindTicket && g.Kind != KindCookie {
		return Grant{}, fmt.Errorf("%w: kind %q", errBadGrant, g.Kind)
	}
	return g, nil
}
