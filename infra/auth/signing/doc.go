// Package signing implements HMAC request signing in two modes, chosen by
// the client with signMethod: Backend.AI-compatible signing (ModeCompat),
// so that existing Backend.AI clients (the Python SDK and CLI, the Web-UI's
// JavaScript client) can sign requests to Cairn with their keypairs, and
// Cairn's strict mode (ModeStrict), which Cairn's own clients use.
//
// A Backend.AI-signed request carries
//
//	Authorization: BackendAI signMethod=HMAC-SHA256, credential=<ACCESS_KEY>:<SIGNATURE>
//	Date: 2024-05-01T12:34:56.789012+00:00    (or X-BackendAI-Date)
//	X-BackendAI-Version: v8.20240915
//
// and SIGNATURE = hex HMAC-SHA256(signing key, string to sign) with
//
//	signing key    = HMAC-SHA256(HMAC-SHA256(secret key, yyyymmdd), host)
//	string to sign = METHOD\n<path with query>\n<date as sent>\nhost:<host>\n
//	                 content-type:<type>\nx-backendai-version:<version>\n<hex SHA-256 of "">
//
// Its signature covers no body and nothing unique: anyone who sees a
// signed request may send it again, with another body, until its date is
// 15 minutes old. Strict mode closes both:
//
//	Authorization: BackendAI signMethod=CAIRN1-HMAC-SHA256, credential=<ACCESS_KEY>:<SIGNATURE>
//	Date, X-BackendAI-Version                 as above
//	X-Cairn-Nonce: <16 to 64 of A-Za-z0-9-_, fresh for every request>
//	X-Cairn-Content-SHA256: <lower-case hex SHA-256 of the body as sent>
//
// with the same signing key and StringToSignStrict's string (a first line
// naming the mode, then the lines above plus the nonce and the body hash).
// The server checks the body against the hash (a streamed body as it is
// read: BodyReader) and accepts each signature once (ReplayCache).
//
// Sign and SignHTTP (SignStrict and SignHTTPStrict) build signatures
// (clients, tests); Verifier.Verify
// checks them on the server from plain values (method, raw path and query,
// host, a header getter, a secret lookup), so it works with fiber and
// net/http alike. Each refusal is an *Error with a Reason (bad signature,
// unknown or inactive key, date skew, missing or invalid date, malformed
// header, body mismatch, replayed...), of kind domain.KindUnauthenticated.
//
// # What the reference implementation does, and what Cairn follows
//
// The algorithm is Backend.AI's; where its description is silent, Cairn follows
// Backend.AI's code (lablup/backend.ai: the client's
// src/ai/backend/client/auth.py generate_signature and request.py
// Request.fetch, the manager's src/ai/backend/manager/api/auth.py
// _extract_auth_params, check_date and sign_request):
//
//   - Date header: the manager reads Date, and X-BackendAI-Date only when
//     Date is absent or empty. The value goes into the string to sign
//     byte for byte as sent. The Python client sends
//     datetime.now(tzutc()).isoformat() in Date (FormatDate renders the
//     same). The manager parses it with dateutil, which accepts nearly
//     anything; Cairn accepts ISO 8601 (extended or basic, 'T' or space,
//     fraction, zone Z/±HH:MM/±HHMM/±HH or none) and RFC 1123 with GMT, UTC
//     or a numeric zone. A date without a zone is UTC.
//   - yyyymmdd: the manager formats the parsed date with strftime("%Y%m%d")
//     without converting it to UTC, so the day is the calendar day in the
//     zone the client wrote (a client at 2024-05-02T01:00:00+09:00 signs
//     with 20240502 although it is still May 1st in UTC). The Python client
//     always sends UTC, so both agree; Cairn does as the manager does.
//   - Clock skew: accepted when now-15m < date < now+15m, bounds excluded.
//   - Host: the client signs its endpoint URL's authority (yarl's
//     raw_authority: host, plus ":port" when the URL names one); the manager
//     signs aiohttp's request.host, the Host header as received. Both carry
//     the port exactly when the client's URL does. The host is used both in
//     the key derivation and in the string to sign. The manager also honours
//     an X-Forwarded-URL header (path and host taken from it) for its own
//     web proxy; Cairn does not, since any client could set it.
//   - Path: the manager signs aiohttp's request.raw_path, the request target
//     as received (path and query, not decoded); the client signs the
//     relative URL it sends.
//   - Content type: the client signs its content type lower-cased (it sends
//     application/json, text/plain or multipart/form-data, the last with a
//     boundary parameter added by aiohttp); the manager signs aiohttp's
//     request.content_type, the media type lower-cased without parameters,
//     "application/octet-stream" when the header is absent. CanonicalContentType
//     does the manager's reading.
//   - Body: clients and manager hash the body only for API versions before
//     v4.20181215; every current client signs the SHA-256 of the empty
//     string, which is all Cairn accepts (older clients are not supported).
//   - Authorization header: scheme "BackendAI" (the legacy "Sorna" scheme and
//     X-Sorna-* headers are not supported); parameters split on commas,
//     key=value trimmed, unknown ones ignored; signMethod compared without
//     ASCII case; credential split at the first ':'. The manager supports
//     any hashlib algorithm (HMAC-SHA1, HMAC-MD5...); Cairn only HMAC-SHA256.
//   - The manager compares signatures with secrets.compare_digest (exact
//     string); Cairn compares the decoded bytes with hmac.Equal, so an
//     upper-case hex signature is accepted too.
//   - The manager refuses an inactive key as "not found" before checking the
//     signature; Cairn checks the signature first and then says the key is
//     inactive, so only the holder of the secret learns it.
//   - The signature example in Backend.AI's docs/manager/common-api/auth.rst
//     (022ae894...) cannot be reproduced by the documented algorithm nor by
//     the code (its string to sign also says x-sorna-version); the test
//     vectors here come from the code's algorithm.
package signing
