// Package token makes and checks the opaque bearer tokens of Cairn: login
// tokens the Web-UI gets for an email and password, long-lived tokens
// for scripts, and one-time agent enrollment tokens (which authenticate no
// API request: only POST /v1/agent-enrollments takes them).
//
// A token is a kind prefix and 32 random bytes in base64url without
// padding (cairn_l_…, cairn_b_… or cairn_e_…, 51 characters). The server stores only
// its SHA-256 Digest with the token's kind and expiry (Token), so a leaked
// store or backup gives no usable token. On each request the server parses
// the presented string (Parse), finds the stored Token by digest, and checks
// it (Token.Verify: digest compared in constant time, then expiry against
// the clock it is given). Looking a digest up in an index is safe: the
// digest of a 256-bit random secret reveals nothing about the secret.
//
// Every refusal is a domain.KindUnauthenticated error (ErrMalformed,
// ErrMismatch, ErrExpired), so the HTTP layer answers 401.
package token
