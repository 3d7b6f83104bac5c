// Package httpauth authenticates every /v1 request of Cairn's HTTP API and
// resolves who is calling into an httpapi.Principal: user id, e-mail,
// role, domain, access key and the projects the user belongs to.
//
// Two kinds of credentials are accepted, told apart by the Authorization
// scheme:
//
//   - BackendAI: a request signed with a keypair (infra/auth/signing),
//     verified against the secret key the tenancy read model holds for the
//     access key. The raw request target and the Host header are used as
//     received. The keypair must be active and its owner active. In strict
//     mode (signMethod=CAIRN1-HMAC-SHA256) the body must be the signed one
//     — a body read whole is checked here, a streamed upload as the handler
//     reads it through httpapi.BodyStream, the request answered 401 if it
//     is not — and each signature is accepted once: the Authenticator
//     holds one signing.ReplayCache (Config.ReplayCacheSize), whose refusals
//     are counted in cairn_auth_replays_refused_total.
//     Config.StrictSigningOnly refuses Backend.AI's mode altogether.
//   - Bearer: a login token (the Web-UI's, from POST /v1/auth/login) or a
//     script's bearer token (POST /v1/auth/tokens), both made by
//     infra/auth/token. Only their SHA-256 digests are stored (token.issued
//     events, projected into the tenancy read model); a request's token is
//     looked up by digest, then checked for revocation and expiry, and its
//     holder must be active.
//
// The Web-UI's login token may come instead in the login cookie
// (CookieName), used only when there is no Authorization header; a
// cookie-authenticated write must carry the CSRF token (cookie.go).
//
// Each refusal is a 401 problem+json whose detail says why (missing or
// malformed header, bad signature, unknown or inactive key, clock skew,
// body mismatch, replayed signature,
// unknown, revoked or expired token, inactive user). The access key a
// refused signed request claimed is handed to the audit trail
// (accesslog.ClaimAccessKey), so the record of a denied request names it.
//
// Lookups go to the read model (two indexed queries per request) unless
// Config.Freshness turns on the cache, which keeps the read model's
// answers only until it applies another tenancy event: an answer read
// when the projector had committed position p is used while no tenancy
// event after p has been applied (committed or not). So a deactivated
// key, a rotated secret, a revoked token or a changed membership takes
// effect exactly as soon as the projector has applied it, cache or not;
// token expiry is checked on every request. Measured (infra/commandapi's
// BenchmarkSignedRequests, 2 cores, client included): the two SQLite
// lookups are about 40% of the CPU of a signed request without the cache.
package httpauth
