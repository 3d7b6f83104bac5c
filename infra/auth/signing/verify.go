package signing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// DefaultMaxSkew is how far a request's date may be from the server's
// clock: dates 15 minutes or more away are refused, as on Backend.AI.
const DefaultMaxSkew = 15 * time.Minute

// Secret is what the server knows of an access key.
type Secret struct {
	SecretKey string
	Active    bool
}

// Lookup finds the secret of an access key; found is false when there is
// no such key. An error means the lookup itself failed (store unavailable):
// Verify passes it on wrapped, never as a refusal.
type Lookup func(ctx context.Context, accessKey string) (secret Secret, found bool, err error)

// Incoming is a received request, as plain values so that any HTTP stack
// fits: with fiber, Method: c.Method(), PathQuery: string(c.Request().RequestURI()),
// Host: c.Get("Host"), Header: c.Get; with net/http, r.Method, r.RequestURI,
// r.Host, r.Header.Get.
type Incoming struct {
	Method    string
	PathQuery string                   // raw path and query as received
	Host      string                   // Host header as received; "" reads Header("Host")
	Header    func(name string) string // returns "" for an absent header
	// Body is the request body as received, when it has been read whole
	// (strict mode checks its SHA-256). When BodyStreamed is set the body
	// is still to be read: Verify checks the signature over the claimed
	// hash, and the caller reads the body through VerifyBody with
	// Result.ContentSHA256, committing nothing before it reaches the end.
	Body         []byte
	BodyStreamed bool
}

// Result is what Verify learnt. AccessKey is set as soon as the
// Authorization header parsed, even when Verify refuses the request, so the
// audit record of a denied request can name the key it claimed.
type Result struct {
	AccessKey string
	Date      time.Time // the request's date, in the zone it was written in
	Mode      Mode
	// ContentSHA256 is the body hash a strict signature covers (for a
	// streamed body, what VerifyBody must find).
	ContentSHA256 [sha256.Size]byte
}

// Verifier checks signed requests. Lookup is required; Now defaults to
// time.Now and MaxSkew to DefaultMaxSkew. Replay is required to accept
// strict-mode requests (without it they fail with an error that is not a
// refusal). A Verifier is safe for concurrent use if Lookup is.
type Verifier struct {
	Lookup  Lookup
	Now     func() time.Time
	MaxSkew time.Duration
	Replay  *ReplayCache
	// StrictOnly refuses Backend.AI-compatible signatures
	// (unsupported-method): for servers without Backend.AI clients, so
	// that no replayable signature is accepted.
	StrictOnly bool
}

// Verify authenticates in. Checks run cheapest first and the first failing
// one is reported: Authorization header, date (missing, invalid, skew),
// version header, in strict mode the nonce and content hash headers,
// access key (unknown), signature (bad, compared in constant time),
// whether the key is active — so only a caller who holds the secret learns
// that a key is deactivated — and in strict mode last the body's hash
// (unless streamed) and the replay cache, so that only a request valid in
// every other way uses up its signature. Every refusal is an *Error
// (KindUnauthenticated); any other error comes from Lookup or a missing
// replay cache.
func (v *Verifier) Verify(ctx context.Context, in Incoming) (Result, error) {
	if v.Lookup == nil || in.Header == nil {
		return Result{}, errors.New("signing: Verifier.Lookup and Incoming.Header are required")
	}
	cred, err := ParseAuthorization(in.Header(HeaderAuthorization))
	if err != nil {
		return Result{}, err
	}
	// A copy: with fiber, header strings point into buffers reused after
	// the handler returns, and the caller may keep the key (audit records).
	res := Result{AccessKey: strings.Clone(cred.AccessKey), Mode: cred.Mode()}
	if v.StrictOnly && res.Mode != ModeStrict {
		return res, refuse(ReasonUnsupportedMethod, "this server accepts only strict signing: signMethod="+MethodStrict)
	}

	rawDate := in.Header(HeaderDate)
	if rawDate == "" {
		rawDate = in.Header(HeaderBackendAIDate)
	}
	if rawDate == "" {
		return res, refuse(ReasonMissingDate, "send a Date or X-BackendAI-Date header (ISO 8601)")
	}
	date, err := ParseDate(rawDate)
	if err != nil {
		return res, err
	}
	res.Date = date
	if err := v.checkSkew(date); err != nil {
		return res, err
	}

	version := in.Header(HeaderVersion)
	if version == "" {
		return res, refuse(ReasonMissingVersion, "send an X-BackendAI-Version header")
	}
	host := in.Host
	if host == "" {
		host = in.Header(HeaderHost)
	}
	req := Request{
		Method:      in.Method,
		PathQuery:   in.PathQuery,
		Host:        host,
		ContentType: in.Header(HeaderContentType),
		Date:        rawDate,
		Version:     version,
	}
	if res.Mode == ModeStrict {
		req.Nonce = in.Header(HeaderNonce)
		if err := checkNonce(req.Nonce); err != nil {
			return res, err
		}
		req.ContentSHA256 = in.Header(HeaderContentSHA256)
		if res.ContentSHA256, err = parseContentSHA256(req.ContentSHA256); err != nil {
			return res, err
		}
		if v.Replay == nil {
			return res, errors.New("signing: strict-mode requests need Verifier.Replay")
		}
	}

	secret, found, err := v.Lookup(ctx, cred.AccessKey)
	if err != nil {
		return res, fmt.Errorf("signing: look up access key: %w", err)
	}
	if !found {
		return res, refuse(ReasonUnknownKey, "access key "+quote(cred.AccessKey)+" is not known")
	}
	given, err := hex.DecodeString(cred.Signature) // validated by ParseAuthorization
	if err != nil {
		return res, refuse(ReasonMalformedHeader, "signature is not hex")
	}
	var want []byte
	if res.Mode == ModeStrict {
		want = hmacSHA256(signingKey(secret.SecretKey, signingDay(date), host), StringToSignStrict(req))
	} else {
		want = signature(secret.SecretKey, signingDay(date), req)
	}
	if !hmac.Equal(given, want) {
		return res, refuse(ReasonBadSignature, "the signature does not match the request")
	}
	if !secret.Active {
		return res, refuse(ReasonInactiveKey, "access key "+quote(cred.AccessKey)+" is deactivated")
	}
	if res.Mode == ModeCompat {
		return res, nil
	}
	if !in.BodyStreamed && sha256.Sum256(in.Body) != res.ContentSHA256 {
		return res, errBodyMismatch()
	}
	if err := v.Replay.Accept([sha256.Size]byte(want), date, v.now().Add(-v.maxSkew())); err != nil {
		return res, err
	}
	return res, nil
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew <= 0 {
		return DefaultMaxSkew
	}
	return v.MaxSkew
}

// checkSkew refuses a date at MaxSkew or more from now (Backend.AI accepts
// now-15m < date < now+15m, bounds excluded).
func (v *Verifier) checkSkew(date time.Time) error {
	now, maxSkew := v.now(), v.maxSkew()
	off := date.Sub(now)
	if off > -maxSkew && off < maxSkew {
		return nil
	}
	dir := "ahead of"
	if off < 0 {
		dir, off = "behind", -off
	}
	return refuse(ReasonDateSkew, fmt.Sprintf("the request date is %s %s the server clock (allowed: less than %s); check the client's clock",
		off.Round(time.Second), dir, maxSkew))
}
