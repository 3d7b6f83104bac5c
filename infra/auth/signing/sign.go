package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Header names read and written by signing.
const (
	HeaderAuthorization = "Authorization"
	HeaderDate          = "Date"
	HeaderBackendAIDate = "X-BackendAI-Date"
	HeaderVersion       = "X-BackendAI-Version"
	HeaderContentType   = "Content-Type"
	HeaderHost          = "Host"
)

// DefaultContentType is what the string to sign carries for a request
// without a Content-Type header (aiohttp's default, which Backend.AI's
// manager signs with).
const DefaultContentType = "application/octet-stream"

// emptyBodyHash is the hex SHA-256 of the empty string: since API version
// v4.20181215 Backend.AI signs no body, whatever the request carries.
const emptyBodyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Request holds the values a signature covers, exactly as they travel.
type Request struct {
	Method      string // e.g. "GET", as sent
	PathQuery   string // raw request target: path and query as sent, e.g. "/v1/sessions?limit=10"
	Host        string // the Host header as sent, with its port when it has one
	ContentType string // the Content-Type header as sent; "" when absent
	Date        string // the Date (or X-BackendAI-Date) header as sent
	Version     string // the X-BackendAI-Version header, e.g. "v8.20240915"
	// Strict mode only (StringToSignStrict); compat mode ignores them.
	Nonce         string // the X-Cairn-Nonce header
	ContentSHA256 string // the X-Cairn-Content-SHA256 header: hex SHA-256 of the body
}

// StringToSign builds the canonical string:
//
//	METHOD\n<path with query>\n<date as sent>\nhost:<host>\ncontent-type:<type>\nx-backendai-version:<version>\n<hex sha256 of "">
//
// where <type> is the media type of the Content-Type header, lower-cased
// and without parameters (see CanonicalContentType).
func StringToSign(r Request) string {
	var b strings.Builder
	ct := CanonicalContentType(r.ContentType)
	b.Grow(len(r.Method) + len(r.PathQuery) + len(r.Date) + len(r.Host) + len(ct) + len(r.Version) + 64 + 48)
	writeRequestLines(&b, r, ct)
	b.WriteByte('\n')
	b.WriteString(emptyBodyHash)
	return b.String()
}

// writeRequestLines writes the lines both modes sign: method, path and
// query, date, host, content type (ct, canonical) and API version.
func writeRequestLines(b *strings.Builder, r Request, ct string) {
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(r.PathQuery)
	b.WriteByte('\n')
	b.WriteString(r.Date)
	b.WriteString("\nhost:")
	b.WriteString(r.Host)
	b.WriteString("\ncontent-type:")
	b.WriteString(ct)
	b.WriteString("\nx-backendai-version:")
	b.WriteString(r.Version)
}

// CanonicalContentType is the content type as Backend.AI's manager reads
// it (aiohttp's Request.content_type): the media type without parameters,
// lower-cased; DefaultContentType when the header is absent; "text/plain"
// when it is present but not of the form type/subtype (Python's email
// parser default).
func CanonicalContentType(header string) string {
	if header == "" {
		return DefaultContentType
	}
	media, _, _ := strings.Cut(header, ";")
	media = strings.ToLower(strings.TrimSpace(media))
	typ, sub, ok := strings.Cut(media, "/")
	if !ok || typ == "" || sub == "" || strings.Contains(sub, "/") {
		return "text/plain"
	}
	return media
}

// signingKey derives HMAC-SHA256(HMAC-SHA256(secret, yyyymmdd), host).
func signingKey(secretKey, day, host string) []byte {
	m := hmac.New(sha256.New, []byte(secretKey))
	m.Write([]byte(day))
	k := m.Sum(nil)
	m = hmac.New(sha256.New, k)
	m.Write([]byte(host))
	return m.Sum(nil)
}

// signature computes the raw HMAC of r's string to sign, day being the
// yyyymmdd the key is derived from.
func signature(secretKey, day string, r Request) []byte {
	return hmacSHA256(signingKey(secretKey, day, r.Host), StringToSign(r))
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Signature returns the hex signature of r under secretKey. r.Date must
// parse (ParseDate): the signing key is derived from its calendar day.
func Signature(secretKey string, r Request) (string, error) {
	t, err := ParseDate(r.Date)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(signature(secretKey, signingDay(t), r)), nil
}

// Sign returns the Authorization header value for r, as a Backend.AI
// client would send it. r.Method is upper-cased first, as the Python
// client does; r.Date must parse.
func Sign(accessKey, secretKey string, r Request) (string, error) {
	r.Method = strings.ToUpper(r.Method)
	sig, err := Signature(secretKey, r)
	if err != nil {
		return "", err
	}
	return Credential{Method: MethodHMACSHA256, AccessKey: accessKey, Signature: sig}.String(), nil
}

// SignHTTP signs an outgoing net/http request in place, for clients and
// tests: it sets Date (FormatDate(now)), X-BackendAI-Version (version,
// unless already set) and Authorization. The host is req.Host, or
// req.URL.Host when empty, which is what net/http sends as Host.
func SignHTTP(req *http.Request, accessKey, secretKey, version string, now time.Time) error {
	if req.URL == nil {
		return fmt.Errorf("signing: request has no URL")
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get(HeaderVersion) == "" {
		req.Header.Set(HeaderVersion, version)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet // what net/http sends for an empty Method
	}
	date := FormatDate(now)
	req.Header.Set(HeaderDate, date)
	auth, err := Sign(accessKey, secretKey, Request{
		Method:      method,
		PathQuery:   req.URL.RequestURI(),
		Host:        host,
		ContentType: req.Header.Get(HeaderContentType),
		Date:        date,
		Version:     req.Header.Get(HeaderVersion),
	})
	if err != nil {
		return err
	}
	req.Header.Set(HeaderAuthorization, auth)
	return nil
}
