package signing

import (
	"context"
	"crypto/hmac"
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
}

// Result is what Verify learnt. AccessKey is set as soon as the
// Authorization header parsed, even when Verify refuses the request, so the
// audit record of a denied request can name the key it claimed.
type Result struct {
	AccessKey string
	Date      time.Time // the request's date, in the zone it was written in
}

// Verifier checks signed requests. Lookup is required; Now defaults to
// time.Now and MaxSkew to DefaultMaxSkew. A Verifier is safe for concurrent
// use if Lookup is.
type Verifier struct {
	Lookup  Lookup
	Now     func() time.Time
	MaxSkew time.Duration
}

// Verify authenticates in. Checks run cheapest first and the first failing
// one is reported: Authorization header, date (missing, invalid, skew),
// version header, access key (unknown), signature (bad, compared in
// constant time), and last whether the key is active — so only a caller
// who holds the secret learns that a key is deactivated. Every refusal is
// an *Error (KindUnauthenticated); any other error comes from Lookup.
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
	res := Result{AccessKey: strings.Clone(cred.AccessKey)}

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
	want := signature(secret.SecretKey, signingDay(date), Request{
		Method:      in.Method,
		PathQuery:   in.PathQuery,
		Host:        host,
		ContentType: in.Header(HeaderContentType),
		Date:        rawDate,
		Version:     version,
	})
	if !hmac.Equal(given, want) {
		return res, refuse(ReasonBadSignature, "the signature does not match the request")
	}
	if !secret.Active {
		return res, refuse(ReasonInactiveKey, "access key "+quote(cred.AccessKey)+" is deactivated")
	}
	return res, nil
}

// checkSkew refuses a date at MaxSkew or more from now (Backend.AI accepts
// now-15m < date < now+15m, bounds excluded).
func (v *Verifier) checkSkew(date time.Time) error {
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	maxSkew := v.MaxSkew
	if maxSkew <= 0 {
		maxSkew = DefaultMaxSkew
	}
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
