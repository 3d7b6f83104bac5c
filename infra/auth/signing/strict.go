package signing

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Mode is how a request is signed; the client chooses it with signMethod.
type Mode uint8

const (
	// ModeCompat is Backend.AI's signing (signMethod=HMAC-SHA256): the
	// signature covers no body and may be replayed within the skew window.
	ModeCompat Mode = iota
	// ModeStrict is Cairn's (signMethod=CAIRN1-HMAC-SHA256): the signature
	// also covers a nonce and the SHA-256 of the body, and the server
	// accepts it at most once.
	ModeStrict
)

func (m Mode) String() string {
	if m == ModeStrict {
		return "strict"
	}
	return "compat"
}

// Headers of strict mode.
const (
	// HeaderContentSHA256 carries the lower-case hex SHA-256 of the body
	// as sent (after transfer decoding, before any Content-Encoding is
	// undone); of the empty string for a request without a body.
	HeaderContentSHA256 = "X-Cairn-Content-SHA256"
	// HeaderNonce carries a client-chosen value, fresh for every request,
	// so that two identical requests signed at the same instant differ.
	HeaderNonce = "X-Cairn-Nonce"
)

const (
	minNonceLen = 16
	maxNonceLen = 64
)

// EmptyBodySHA256 is the hex SHA-256 of the empty string: the
// X-Cairn-Content-SHA256 of a request without a body.
const EmptyBodySHA256 = emptyBodyHash

// StringToSignStrict builds strict mode's canonical string, nine lines
// joined by "\n" without a final newline:
//
//	CAIRN1-HMAC-SHA256
//	METHOD
//	<path with query as sent>
//	<date as sent>
//	host:<host>
//	content-type:<media type, lower-cased, without parameters>
//	x-backendai-version:<version>
//	x-cairn-nonce:<nonce>
//	<X-Cairn-Content-SHA256: lower-case hex SHA-256 of the body>
//
// Its first line, and its nine lines against Backend.AI's seven (no field
// can hold a newline), keep a strict signature from ever verifying as a
// compat one or the reverse. The signing key is derived as in compat mode.
func StringToSignStrict(r Request) string {
	ct := CanonicalContentType(r.ContentType)
	var b strings.Builder
	b.Grow(len(MethodStrict) + len(r.Method) + len(r.PathQuery) + len(r.Date) + len(r.Host) + len(ct) +
		len(r.Version) + len(r.Nonce) + len(r.ContentSHA256) + 64)
	b.WriteString(MethodStrict)
	b.WriteByte('\n')
	writeRequestLines(&b, r, ct)
	b.WriteString("\nx-cairn-nonce:")
	b.WriteString(r.Nonce)
	b.WriteByte('\n')
	b.WriteString(r.ContentSHA256)
	return b.String()
}

// SignStrict returns the strict-mode Authorization header value for r:
// r.Nonce and r.ContentSHA256 must be set (see NewNonce, BodySHA256) and
// r.Date must parse.
func SignStrict(accessKey, secretKey string, r Request) (string, error) {
	r.Method = strings.ToUpper(r.Method)
	if err := checkNonce(r.Nonce); err != nil {
		return "", err
	}
	if _, err := parseContentSHA256(r.ContentSHA256); err != nil {
		return "", err
	}
	t, err := ParseDate(r.Date)
	if err != nil {
		return "", err
	}
	sig := hex.EncodeToString(hmacSHA256(signingKey(secretKey, signingDay(t), r.Host), StringToSignStrict(r)))
	return Credential{Method: MethodStrict, AccessKey: accessKey, Signature: sig}.String(), nil
}

// BodySHA256 is the X-Cairn-Content-SHA256 value of body.
func BodySHA256(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// NewNonce returns a fresh X-Cairn-Nonce: 128 random bits in hex.
func NewNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// SignHTTPStrict signs an outgoing net/http request in strict mode, in
// place: it sets Date (FormatDate(now)), X-BackendAI-Version (version,
// unless set), X-Cairn-Nonce (a new one), X-Cairn-Content-SHA256 and
// Authorization. The body's hash is taken from X-Cairn-Content-SHA256 when
// the caller set it (a large upload hashed beforehand); otherwise the body
// is read, from req.GetBody when there is one (http.NewRequest sets it for
// in-memory bodies), else whole into memory and put back.
func SignHTTPStrict(req *http.Request, accessKey, secretKey, version string, now time.Time) error {
	if req.URL == nil {
		return fmt.Errorf("signing: request has no URL")
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	sum := req.Header.Get(HeaderContentSHA256)
	if sum == "" {
		var err error
		if sum, err = hashRequestBody(req); err != nil {
			return err
		}
		req.Header.Set(HeaderContentSHA256, sum)
	}
	if req.Header.Get(HeaderVersion) == "" {
		req.Header.Set(HeaderVersion, version)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	date := FormatDate(now)
	nonce := NewNonce()
	req.Header.Set(HeaderDate, date)
	req.Header.Set(HeaderNonce, nonce)
	auth, err := SignStrict(accessKey, secretKey, Request{
		Method:        method,
		PathQuery:     req.URL.RequestURI(),
		Host:          host,
		ContentType:   req.Header.Get(HeaderContentType),
		Date:          date,
		Version:       req.Header.Get(HeaderVersion),
		Nonce:         nonce,
		ContentSHA256: sum,
	})
	if err != nil {
		return err
	}
	req.Header.Set(HeaderAuthorization, auth)
	return nil
}

// hashRequestBody hashes req's body without consuming it.
func hashRequestBody(req *http.Request) (string, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return EmptyBodySHA256, nil
	}
	h := sha256.New()
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return "", fmt.Errorf("signing: read the body to hash it: %w", err)
		}
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return "", fmt.Errorf("signing: read the body to hash it: %w", err)
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return "", fmt.Errorf("signing: read the body to hash it: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return BodySHA256(body), nil
}

// checkNonce: 16 to 64 characters of A-Z a-z 0-9 '-' '_' (hex, base32,
// base64url all fit).
func checkNonce(n string) error {
	if n == "" {
		return refuse(ReasonMissingNonce, "strict signing needs an "+HeaderNonce+" header, fresh for every request")
	}
	if len(n) < minNonceLen || len(n) > maxNonceLen {
		return refuse(ReasonMalformedHeader, fmt.Sprintf("%s must be %d to %d characters", HeaderNonce, minNonceLen, maxNonceLen))
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || c == '-' || c == '_') {
			return refuse(ReasonMalformedHeader, HeaderNonce+" may hold only A-Z, a-z, 0-9, '-' and '_'")
		}
	}
	return nil
}

// parseContentSHA256 decodes an X-Cairn-Content-SHA256 value: exactly 64
// lower-case hex digits, so that one body has one spelling.
func parseContentSHA256(v string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	if v == "" {
		return sum, refuse(ReasonMissingContentHash, "strict signing needs an "+HeaderContentSHA256+" header: the hex SHA-256 of the body")
	}
	if len(v) != 2*sha256.Size || strings.ToLower(v) != v {
		return sum, refuse(ReasonMalformedHeader, fmt.Sprintf("%s must be %d lower-case hex digits", HeaderContentSHA256, 2*sha256.Size))
	}
	if _, err := hex.Decode(sum[:], []byte(v)); err != nil {
		return sum, refuse(ReasonMalformedHeader, fmt.Sprintf("%s must be %d lower-case hex digits", HeaderContentSHA256, 2*sha256.Size))
	}
	return sum, nil
}
