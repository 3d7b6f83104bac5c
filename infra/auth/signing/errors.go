package signing

import (
	"errors"
	"fmt"

	"github.com/cairnhq/cairn/domain"
)

// Reason says why a signed request was refused. Callers branch on it
// (errors.Is with the Err* sentinels, or ReasonOf) and may show its String
// to the client: every reason is something the client can fix or must know.
// Append-only: new reasons go at the end.
type Reason uint8

const (
	ReasonNone               Reason = iota // not a signing error
	ReasonMissingHeader                    // no Authorization header
	ReasonMalformedHeader                  // the header does not parse
	ReasonUnsupportedScheme                // not "BackendAI ..." (e.g. a Bearer token)
	ReasonUnsupportedMethod                // signMethod is not HMAC-SHA256
	ReasonMissingCredential                // no credential=<access key>:<signature>
	ReasonMissingDate                      // neither Date nor X-BackendAI-Date
	ReasonInvalidDate                      // the date does not parse
	ReasonDateSkew                         // the date is 15 minutes or more away from the server's clock
	ReasonMissingVersion                   // no X-BackendAI-Version
	ReasonUnknownKey                       // no such access key
	ReasonInactiveKey                      // the key exists and the signature is right, but the key is deactivated
	ReasonBadSignature                     // the signature does not match
	ReasonMissingContentHash               // strict mode without X-Cairn-Content-SHA256
	ReasonBodyMismatch                     // strict mode: the body's SHA-256 is not the signed one
	ReasonMissingNonce                     // strict mode without X-Cairn-Nonce
	ReasonReplayed                         // strict mode: this signature was already accepted
	ReasonReplayWindow                     // strict mode: older than the oldest signature the server still remembers
)

var reasonNames = [...]string{
	"none", "missing-header", "malformed-header", "unsupported-scheme", "unsupported-method",
	"missing-credential", "missing-date", "invalid-date", "date-skew", "missing-version",
	"unknown-key", "inactive-key", "bad-signature", "missing-content-sha256", "body-mismatch",
	"missing-nonce", "replayed", "replay-window",
}

// String is the reason's stable wire name (e.g. "bad-signature").
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// Error is a refused signature: its reason and a detail for humans. It is
// a domain.KindUnauthenticated error (errors.Is(err, domain.ErrUnauthenticated)
// holds and domain.KindOf reports it), so the HTTP layer answers 401.
type Error struct {
	Reason Reason
	Detail string
}

// Sentinels for errors.Is: errors.Is(err, signing.ErrBadSignature).
var (
	ErrMissingHeader      = &Error{Reason: ReasonMissingHeader}
	ErrMalformedHeader    = &Error{Reason: ReasonMalformedHeader}
	ErrUnsupportedScheme  = &Error{Reason: ReasonUnsupportedScheme}
	ErrUnsupportedMethod  = &Error{Reason: ReasonUnsupportedMethod}
	ErrMissingCredential  = &Error{Reason: ReasonMissingCredential}
	ErrMissingDate        = &Error{Reason: ReasonMissingDate}
	ErrInvalidDate        = &Error{Reason: ReasonInvalidDate}
	ErrDateSkew           = &Error{Reason: ReasonDateSkew}
	ErrMissingVersion     = &Error{Reason: ReasonMissingVersion}
	ErrUnknownKey         = &Error{Reason: ReasonUnknownKey}
	ErrInactiveKey        = &Error{Reason: ReasonInactiveKey}
	ErrBadSignature       = &Error{Reason: ReasonBadSignature}
	ErrMissingContentHash = &Error{Reason: ReasonMissingContentHash}
	ErrBodyMismatch       = &Error{Reason: ReasonBodyMismatch}
	ErrMissingNonce       = &Error{Reason: ReasonMissingNonce}
	ErrReplayed           = &Error{Reason: ReasonReplayed}
	ErrReplayWindow       = &Error{Reason: ReasonReplayWindow}
)

func (e *Error) Error() string {
	msg := "request signature: " + e.Reason.String()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is matches the sentinels by reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Detail == "" && t.Reason == e.Reason
}

// Unwrap makes every signing error a KindUnauthenticated domain error.
func (e *Error) Unwrap() error { return domain.ErrUnauthenticated }

// ReasonOf returns the reason of the first *Error in err's chain, or
// ReasonNone when err is not a signing refusal (e.g. the key lookup failed).
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ReasonNone
}

func refuse(r Reason, detail string) *Error { return &Error{Reason: r, Detail: detail} }
