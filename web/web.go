package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
)

//go:embed dist
var dist embed.FS

// ContentSecurityPolicy is the policy of every Web-UI answer: nothing runs
// or loads from elsewhere, no inline script or style, no framing.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// UI serves the embedded Web-UI.
type UI struct {
	index  []byte
	assets map[string]asset
}

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// New reads the embedded build.
func New() (*UI, error) { return newUI(dist) }

func newUI(files fs.FS) (*UI, error) {
	root, err := fs.Sub(files, "dist")
	if err != nil {
		return nil, err
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		return nil, fmt.Errorf("web: the embedded build has no index.html (run make webui): %w", err)
	}
	u := &UI{index: index, assets: map[string]asset{}}
	err = fs.WalkDir(root, "assets", func(p string, d fs.DirEntry, err error) error {
		// The terminal page's assets are the app proxy's (TerminalPage).
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), terminalAssetPrefix) {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = fiber.MIMEOctetStream
		}
		u.assets["/"+p] = asset{body: body, contentType: ct, etag: etagOf(body)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// etagOf is a strong ETag of body: the start of its SHA-256.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

// Mount registers the Web-UI on app: /assets/* and every page path. Mount
// it after the API's routes: paths under /v1/, /healthz and /metrics are
// left to the routes that follow (a missing API route stays a JSON 404).
func (u *UI) Mount(app fiber.Router) {
	app.Get("/assets/*", u.asset)
	app.Get("/*", u.page)
}

// reserved are the path prefixes that are not pages.
var reserved = []string{"/v1/", "/v1", "/healthz", "/metrics", "/assets/"}

func securityHeaders(c *fiber.Ctx) {
	c.Set("Content-Security-Policy", ContentSecurityPolicy)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set("Cross-Origin-Opener-Policy", "same-origin")
}

func (u *UI) asset(c *fiber.Ctx) error {
	a, ok := u.assets[c.Path()]
	if !ok {
		return c.Next()
	}
	securityHeaders(c)
	c.Set(fiber.HeaderETag, a.etag)
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	if c.Get(fiber.HeaderIfNoneMatch) == a.etag {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, a.contentType)
	return c.Send(a.body)
}

func (u *UI) page(c *fiber.Ctx) error {
	p := c.Path()
	for _, r := range reserved {
		if p == r || strings.HasPrefix(p, r) {
			return c.Next()
		}
	}
	// A path with an extension is a file, and there is no such file. A
	// path other than / is a page only for a browser (which asks for
	// HTML): a script or API client that strays there gets the API's 404.
	if path.Ext(p) != "" || (p != "/" && !strings.Contains(c.Get(fiber.HeaderAccept), "text/html")) {
		return c.Next()
	}
	securityHeaders(c)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(u.index)
}
