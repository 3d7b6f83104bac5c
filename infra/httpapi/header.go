package httpapi

import (
	"net/http"
	"strings"
)

// HeaderHasToken reports whether one of the comma-separated values of
// header name is token, ignoring case (Connection: keep-alive, Upgrade).
func HeaderHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}
