package web

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// TerminalContentSecurityPolicy is the policy of the terminal's page and
// its assets. It is the Web-UI's policy but for style-src, which allows
// inline styles: xterm.js sizes and colours the terminal with <style>
// elements it adds at run time. Scripts stay 'self' only, and images,
// fonts and connections stay 'self', so injected CSS cannot load or send
// anything anywhere else. connect-src 'self' covers the page's WebSocket
// (ws: or wss: to the page's own host and port).
const TerminalContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// terminalAssetPrefix names the terminal page's assets in dist/assets.
const terminalAssetPrefix = "terminal-"

// TerminalPage serves the terminal's page (xterm.js, built from
// web/ui/src/terminal) for the app proxy, which mounts it under each
// session's terminal path and strips that path: the handler answers "/"
// with the page (never cached) and "/assets/terminal-*" with its script
// and stylesheet (named by their content, cached for good); anything else
// is 404. The page refers to its assets and to its WebSocket ("socket")
// relative to its own URL, so it works under any prefix.
func TerminalPage() http.Handler {
	h, err := newTerminalPage(dist)
	if err != nil {
		// The embedded build is fixed when the binary is built, and
		// web/build_test.go checks it; say what is wrong rather than
		// failing the whole proxy.
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		})
	}
	return h
}

type terminalPage struct {
	page   []byte
	etag   string
	assets map[string]terminalAsset
}

type terminalAsset struct {
	name string
	body []byte
	etag string
}

func newTerminalPage(files fs.FS) (*terminalPage, error) {
	root, err := fs.Sub(files, "dist")
	if err != nil {
		return nil, err
	}
	page, err := fs.ReadFile(root, "terminal.html")
	if err != nil {
		return nil, fmt.Errorf("web: the embedded build has no terminal.html (run make webui): %w", err)
	}
	t := &terminalPage{page: page, etag: etagOf(page), assets: map[string]terminalAsset{}}
	names, err := fs.Glob(root, "assets/"+terminalAssetPrefix+"*")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		body, err := fs.ReadFile(root, n)
		if err != nil {
			return nil, err
		}
		t.assets["/"+n] = terminalAsset{name: n, body: body, etag: etagOf(body)}
	}
	return t, nil
}

func (t *terminalPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", TerminalContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the terminal's page is read with GET", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/" {
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("ETag", t.etag)
		http.ServeContent(w, r, "terminal.html", time.Time{}, bytes.NewReader(t.page))
		return
	}
	if a, ok := t.assets[r.URL.Path]; ok && strings.HasPrefix(r.URL.Path, "/assets/"+terminalAssetPrefix) {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
		return
	}
	http.NotFound(w, r)
}
