// Package httpapi assembles Cairn's HTTP server (fiber): RFC 9457
// problem+json errors mapped from domain error kinds, strict JSON decoding
// that names the offending field, body limits (413), request ids, bearer
// authentication, structured access logs and Prometheus metrics. Its
// listener (NewListener) refuses connections over a global and a per-client
// limit at once and retries failed accepts (EMFILE) instead of stopping;
// request headers and whole bodies are read under a total deadline, streamed
// uploads under an idle timeout (BodyStream, 408 when one stalls). The
// command and query routes themselves live in readapi.
package httpapi
