// Package httpapi assembles Cairn's HTTP server (fiber): RFC 9457
// problem+json errors mapped from domain error kinds, strict JSON decoding
// that names the offending field, body limits (413), request ids, bearer
// authentication, structured access logs and Prometheus metrics. The
// command and query routes themselves live in readapi.
package httpapi
