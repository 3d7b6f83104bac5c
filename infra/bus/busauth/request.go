package busauth

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/domain"
)

// ManagerSignatureHeader carries the manager's signature of a request to
// an agent's HTTP endpoint: "t=<unix seconds>,sig=<base64url signature>".
const ManagerSignatureHeader = "Cairn-Manager-Signature"

// DefaultRequestSkew is how far a signed request's time may be from the
// agent's clock.
const DefaultRequestSkew = time.Minute

// requestToSign is what the manager signs: a version tag, the agent the
// request is for, its method, path and query, and the time. A signature is
// good for that one request, to that one agent, within the skew.
func requestToSign(agentID, method, pathAndQuery string, unix int64) []byte {
	return fmt.Appendf(nil, "cairn-agent-request-v1\n%s\n%s\n%s\n%d", agentID, method, pathAndQuery, unix)
}

// SignAgentRequest signs req, a request to agentID's HTTP endpoint, with
// the Cairn account's key: the key every agent's credentials name as
// their issuer (CredentialsIssuer), so each agent can check that the
// request comes from the manager that issued them.
func (k *Keys) SignAgentRequest(req *http.Request, agentID string, now time.Time) error {
	unix := now.Unix()
	sig, err := k.Account.Sign(requestToSign(agentID, req.Method, req.URL.RequestURI(), unix))
	if err != nil {
		return fmt.Errorf("busauth: sign request: %w", err)
	}
	req.Header.Set(ManagerSignatureHeader, "t="+strconv.FormatInt(unix, 10)+",sig="+base64.RawURLEncoding.EncodeToString(sig))
	return nil
}

// CredentialsIssuer is the public key of the account that signed the
// credentials in the .creds file at path: the key the manager signs its
// requests to the agent with.
func CredentialsIssuer(path string) (string, error) {
	contents, err := ReadSecretFile(path)
	if err != nil {
		return "", err
	}
	token, err := jwt.ParseDecoratedJWT(contents)
	if err != nil {
		return "", fmt.Errorf("busauth: %s: %w", path, err)
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return "", fmt.Errorf("busauth: %s: %w", path, err)
	}
	issuer := uc.Issuer
	if uc.IssuerAccount != "" {
		issuer = uc.IssuerAccount
	}
	if !nkeys.IsValidPublicAccountKey(issuer) {
		return "", fmt.Errorf("busauth: %s: issuer %q is not an account key", path, issuer)
	}
	return issuer, nil
}

// RequestVerifier checks the manager's signature on requests to one
// agent's HTTP endpoint.
type RequestVerifier struct {
	AgentID string
	// Issuer is the manager's account key (CredentialsIssuer).
	Issuer string
	// Skew bounds the distance between the request's time and Clock's
	// (default DefaultRequestSkew).
	Skew  time.Duration
	Clock func() time.Time
	// Delegated says which requests an app proxy's own key (granted by
	// the account key: IssueAppProxyKey) may sign; nil: none.
	Delegated func(r *http.Request) bool
}

// Verify reports why r is not a request the manager signed for this
// agent, as domain.ErrUnauthenticated; nil when it is.
func (v RequestVerifier) Verify(r *http.Request) error {
	const op = "agent.authenticate"
	h := r.Header.Get(ManagerSignatureHeader)
	if h == "" {
		return domain.Errorf(op, domain.KindUnauthenticated, "%s is missing: only the manager may call this endpoint", ManagerSignatureHeader)
	}
	var unix int64
	var sig []byte
	var grant string
	for part := range strings.SplitSeq(h, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return domain.Errorf(op, domain.KindUnauthenticated, "%s: bad time %q", ManagerSignatureHeader, val)
			}
			unix = n
		case "sig":
			b, err := base64.RawURLEncoding.DecodeString(val)
			if err != nil {
				return domain.Errorf(op, domain.KindUnauthenticated, "%s: bad signature encoding", ManagerSignatureHeader)
			}
			sig = b
		case "grant":
			grant = val
		}
	}
	if unix == 0 || sig == nil {
		return domain.Errorf(op, domain.KindUnauthenticated, "%s: want t=<unix seconds>,sig=<signature>", ManagerSignatureHeader)
	}
	skew, clock := v.Skew, v.Clock
	if skew <= 0 {
		skew = DefaultRequestSkew
	}
	if clock == nil {
		clock = time.Now
	}
	if d := clock().Sub(time.Unix(unix, 0)); d > skew || d < -skew {
		return domain.Errorf(op, domain.KindUnauthenticated, "the request's time is %s away from this agent's clock (at most %s)", d.Round(time.Second), skew)
	}
	var pub nkeys.KeyPair
	var err error
	if grant != "" {
		if v.Delegated == nil || !v.Delegated(r) {
			return domain.Errorf(op, domain.KindUnauthenticated, "an app proxy's key may not call %s %s", r.Method, r.URL.Path)
		}
		if pub, err = delegatedKey(op, v.Issuer, grant, clock()); err != nil {
			return err
		}
	} else if pub, err = nkeys.FromPublicKey(v.Issuer); err != nil {
		return &domain.Error{Op: op, Kind: domain.KindInternal, Message: "the manager's key", Err: err}
	}
	if err := pub.Verify(requestToSign(v.AgentID, r.Method, r.URL.RequestURI(), unix), sig); err != nil {
		return domain.Errorf(op, domain.KindUnauthenticated, "the signature is not the manager's for this request to agent %s", v.AgentID)
	}
	return nil
}
