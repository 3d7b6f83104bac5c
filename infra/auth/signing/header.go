package signing

import (
	"encoding/hex"
	"fmt"
	"strings"
)

const (
	// Scheme is the Authorization scheme of signed requests.
	Scheme = "BackendAI"
	// MethodHMACSHA256 is Backend.AI's signMethod (compared without
	// regard to ASCII case, as Backend.AI does): ModeCompat.
	MethodHMACSHA256 = "HMAC-SHA256"
	// MethodStrict is the signMethod of Cairn's strict mode (ModeStrict):
	// the signature covers the body and a nonce, and is accepted once.
	MethodStrict = "CAIRN1-HMAC-SHA256"

	maxHeaderLen    = 1024 // far above any real header; refuses junk early
	maxAccessKeyLen = 128
	signatureLen    = 64 // hex digits of a SHA-256 HMAC
)

// Credential is a parsed Authorization header:
//
//	Authorization: BackendAI signMethod=HMAC-SHA256, credential=<ACCESS_KEY>:<SIGNATURE>
type Credential struct {
	Method    string // signMethod as sent (HMAC-SHA256 or CAIRN1-HMAC-SHA256, in any ASCII case)
	AccessKey string
	Signature string // 64 hex digits as sent
}

// String renders the header value; ParseAuthorization(c.String()) == c for
// every c that ParseAuthorization returned.
func (c Credential) String() string {
	return Scheme + " signMethod=" + c.Method + ", credential=" + c.AccessKey + ":" + c.Signature
}

// Mode is the signing mode the credential's signMethod names.
func (c Credential) Mode() Mode {
	if asciiEqualFold(c.Method, MethodStrict) {
		return ModeStrict
	}
	return ModeCompat
}

// HasScheme reports whether an Authorization header value uses the
// BackendAI scheme, so a server can send other schemes (Bearer) elsewhere.
func HasScheme(header string) bool {
	scheme, _, _ := strings.Cut(strings.TrimSpace(header), " ")
	return scheme == Scheme
}

// ParseAuthorization parses an Authorization header value. Parameters are
// comma-separated key=value pairs with optional spaces around them, in any
// order; unknown parameters are ignored (as Backend.AI does), a repeated
// one is refused. Every failure is an *Error whose Reason says what is
// wrong: missing header, malformed header, unsupported scheme or method,
// missing credential. The signMethod chooses the mode (Credential.Mode).
func ParseAuthorization(header string) (Credential, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return Credential{}, refuse(ReasonMissingHeader, "send Authorization: BackendAI signMethod=HMAC-SHA256, credential=<access key>:<signature>")
	}
	if len(header) > maxHeaderLen {
		return Credential{}, refuse(ReasonMalformedHeader, fmt.Sprintf("longer than %d bytes", maxHeaderLen))
	}
	scheme, rest, _ := strings.Cut(header, " ")
	if scheme != Scheme {
		return Credential{}, refuse(ReasonUnsupportedScheme, fmt.Sprintf("scheme %s; signed requests use %s", quote(scheme), Scheme))
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return Credential{}, refuse(ReasonMalformedHeader, fmt.Sprintf("parameter %s is not key=value", quote(strings.TrimSpace(p))))
		}
		if _, dup := params[key]; dup {
			return Credential{}, refuse(ReasonMalformedHeader, fmt.Sprintf("parameter %s repeated", quote(key)))
		}
		params[key] = value
	}
	method, ok := params["signMethod"]
	if !ok {
		return Credential{}, refuse(ReasonMalformedHeader, "no signMethod parameter")
	}
	if !asciiEqualFold(method, MethodHMACSHA256) && !asciiEqualFold(method, MethodStrict) {
		return Credential{}, refuse(ReasonUnsupportedMethod, fmt.Sprintf("signMethod %s; use %s or %s", quote(method), MethodStrict, MethodHMACSHA256))
	}
	cred, ok := params["credential"]
	if !ok {
		return Credential{}, refuse(ReasonMissingCredential, "no credential parameter")
	}
	accessKey, signature, ok := strings.Cut(cred, ":")
	if !ok || accessKey == "" || signature == "" {
		return Credential{}, refuse(ReasonMissingCredential, "credential must be <access key>:<signature>")
	}
	if !validAccessKey(accessKey) {
		return Credential{}, refuse(ReasonMalformedHeader, fmt.Sprintf("access key must be 1 to %d printable ASCII characters", maxAccessKeyLen))
	}
	if len(signature) != signatureLen || !isHex(signature) {
		return Credential{}, refuse(ReasonMalformedHeader, fmt.Sprintf("signature must be %d hex digits", signatureLen))
	}
	return Credential{Method: method, AccessKey: accessKey, Signature: signature}, nil
}

// validAccessKey: printable ASCII without space or comma (which the header
// syntax would split on).
func validAccessKey(s string) bool {
	if len(s) > maxAccessKeyLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' || c == ',' {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// asciiEqualFold compares without regard to ASCII case only (strings.EqualFold
// would also fold Unicode letters such as U+017F into ASCII ones).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// quote renders client input in an error detail, shortened.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}
