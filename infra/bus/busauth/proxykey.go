package busauth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/domain"
)

// An app proxy run on its own (`cairn proxy`) signs its requests to
// agents with a key of its own, not with the Cairn account's key: the
// account key issues bus credentials for any agent, which no proxy
// needs. The account key signs a grant for the proxy's public key, valid
// until a time; the proxy sends the grant with each signature, and an
// agent that checks it (RequestVerifier.Delegated) lets such a request
// reach only the routes it says a proxy may call (its apps and
// terminals, not its logs). Nothing changes on the agents' side but
// that: they know the account key already.

// AppProxyKey is a proxy's signing key and the account's grant of it.
type AppProxyKey struct {
	key   nkeys.KeyPair
	grant string
}

// proxyGrant is what the account key signs: the proxy's public key and
// the grant's end, in Unix seconds.
type proxyGrant struct {
	Key     string `json:"k"`
	Expires int64  `json:"e"`
}

// proxyKeyFile is the file an AppProxyKey is kept in (0600).
type proxyKeyFile struct {
	Seed  string `json:"seed"`
	Grant string `json:"grant"`
}

func proxyGrantToSign(payload string) []byte {
	return []byte("cairn-app-proxy-grant-v1\n" + payload)
}

// IssueAppProxyKey makes a new proxy key and the account's grant of it,
// valid until expires, as the contents of the file LoadAppProxyKey reads.
// Keep the file as secret as a password: it signs app traffic to agents.
func (k *Keys) IssueAppProxyKey(expires time.Time) ([]byte, error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	pub, err := user.PublicKey()
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(proxyGrant{Key: pub, Expires: expires.Unix()})
	payload := base64.RawURLEncoding.EncodeToString(body)
	sig, err := k.Account.Sign(proxyGrantToSign(payload))
	if err != nil {
		return nil, fmt.Errorf("busauth: sign the app proxy's grant: %w", err)
	}
	seed, err := user.Seed()
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(proxyKeyFile{Seed: string(seed), Grant: payload + "." + base64.RawURLEncoding.EncodeToString(sig)}, "", "  ")
}

// LoadAppProxyKey reads a file IssueAppProxyKey made (readable by its
// owner only), and the grant's end.
func LoadAppProxyKey(path string) (*AppProxyKey, time.Time, error) {
	raw, err := ReadSecretFile(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	var f proxyKeyFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, time.Time{}, fmt.Errorf("busauth: %s is not an app proxy key (cairn bus app-proxy-key): %w", path, err)
	}
	kp, err := nkeys.FromSeed([]byte(f.Seed))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("busauth: %s: not an nkey seed: %w", path, err)
	}
	g, err := parseProxyGrant(f.Grant)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("busauth: %s: %w", path, err)
	}
	if pub, err := kp.PublicKey(); err != nil || pub != g.Key {
		return nil, time.Time{}, fmt.Errorf("busauth: %s: the grant is for another key", path)
	}
	return &AppProxyKey{key: kp, grant: f.Grant}, time.Unix(g.Expires, 0), nil
}

// parseProxyGrant decodes a grant without checking its signature.
func parseProxyGrant(grant string) (proxyGrant, error) {
	payload, _, ok := strings.Cut(grant, ".")
	body, err := base64.RawURLEncoding.DecodeString(payload)
	var g proxyGrant
	if !ok || err != nil || json.Unmarshal(body, &g) != nil || !nkeys.IsValidPublicUserKey(g.Key) {
		return proxyGrant{}, fmt.Errorf("a malformed app proxy grant")
	}
	return g, nil
}

// SignAgentRequest signs req, a request to agentID's HTTP endpoint, with
// the proxy's key, and adds the grant: ManagerSignatureHeader is then
// "t=<unix>,sig=<signature>,grant=<grant>".
func (p *AppProxyKey) SignAgentRequest(req *http.Request, agentID string, now time.Time) error {
	unix := now.Unix()
	sig, err := p.key.Sign(requestToSign(agentID, req.Method, req.URL.RequestURI(), unix))
	if err != nil {
		return fmt.Errorf("busauth: sign request: %w", err)
	}
	req.Header.Set(ManagerSignatureHeader, "t="+strconv.FormatInt(unix, 10)+",sig="+base64.RawURLEncoding.EncodeToString(sig)+",grant="+p.grant)
	return nil
}

// delegatedKey checks a grant against the account key issuer and returns
// the proxy key it grants, as of now.
func delegatedKey(op, issuer, grant string, now time.Time) (nkeys.KeyPair, error) {
	payload, sig64, _ := strings.Cut(grant, ".")
	g, err := parseProxyGrant(grant)
	if err != nil {
		return nil, domain.Errorf(op, domain.KindUnauthenticated, "%s: %v", ManagerSignatureHeader, err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(sig64)
	if err != nil {
		return nil, domain.Errorf(op, domain.KindUnauthenticated, "%s: bad grant signature encoding", ManagerSignatureHeader)
	}
	acct, err := nkeys.FromPublicKey(issuer)
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Message: "the manager's key", Err: err}
	}
	if err := acct.Verify(proxyGrantToSign(payload), sig); err != nil {
		return nil, domain.Errorf(op, domain.KindUnauthenticated, "the app proxy's grant is not the manager's")
	}
	if now.Unix() >= g.Expires {
		return nil, domain.Errorf(op, domain.KindUnauthenticated, "the app proxy's grant expired at %s (cairn bus app-proxy-key issues a new one)", time.Unix(g.Expires, 0).UTC().Format(time.RFC3339))
	}
	return nkeys.FromPublicKey(g.Key)
}
