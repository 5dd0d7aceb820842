package session

import (
	"context"
	"net/url"
	"path"
	"strings"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// OriginFilter decides which requests the browser may make, as upstream's
// --allowed-origins / --blocked-origins: the blocklist is checked first;
// with an allowlist, everything not on it is blocked. An entry is an origin
// ("https://example.com"), an origin with any port ("http://localhost:*")
// or a host pattern ("example.com", "*.example.com", "localhost:8080").
//
// It is not a security boundary: it does not apply to redirects, and pages
// can reach other origins by means Playwright does not route.
type OriginFilter struct {
	Allowed, Blocked []string
}

// Blocks reports whether a request to rawURL is blocked.
func (f OriginFilter) Blocks(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
		// data:, blob:, about:, chrome-extension: … are not origins to filter.
		return false
	}
	for _, o := range f.Blocked {
		if originMatches(o, u) {
			return true
		}
	}
	if len(f.Allowed) == 0 {
		return false
	}
	for _, o := range f.Allowed {
		if originMatches(o, u) {
			return false
		}
	}
	return true
}

// originMatches follows upstream's originOrHostGlob.
func originMatches(pattern string, u *url.URL) bool {
	pattern = strings.TrimSpace(pattern)
	if base, ok := strings.CutSuffix(pattern, ":*"); ok && (strings.HasPrefix(base, "http://") || strings.HasPrefix(base, "https://")) {
		p, err := url.Parse(base)
		return err == nil && p.Scheme == u.Scheme && strings.EqualFold(p.Hostname(), u.Hostname())
	}
	if p, err := url.Parse(pattern); err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" {
		return p.Scheme == u.Scheme && strings.EqualFold(hostPort(p), hostPort(u))
	}
	ok, _ := path.Match(strings.ToLower(pattern), strings.ToLower(u.Host))
	return ok
}

// hostPort is the URL's host with its scheme's default port made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch u.Scheme {
	case "https", "wss":
		return u.Hostname() + ":443"
	default:
		return u.Hostname() + ":80"
	}
}

// originFilter is the session's --allowed-origins / --blocked-origins.
func (g *Generation) originFilter() OriginFilter {
	o := g.s.cfg.Context
	return OriginFilter{Allowed: o.AllowedOrigins, Blocked: o.BlockedOrigins}
}

// active reports whether f blocks anything (it has a list).
func (f OriginFilter) active() bool { return len(f.Allowed) > 0 || len(f.Blocked) > 0 }

// filterOrigins installs the session's origin filter on the generation's
// context: one route for every URL that aborts blocked requests and passes
// the others on (Fallback) to routes added earlier. Routes added later
// (browser_route mocks) are consulted first, as in upstream.
func (g *Generation) filterOrigins(ctx context.Context) error {
	f := g.originFilter()
	if !f.active() {
		return nil
	}
	g.noteRouted()
	handler := func(r playwright.Route) {
		_ = page.Run(context.Background(), g.Context, "filter a request by origin", func() error {
			if f.Blocks(r.Request().URL()) {
				return r.Abort("blockedbyclient")
			}
			return r.Fallback()
		})
	}
	return page.Run(ctx, g.Context, "install the origin filter", func() error { return g.bc.Route("**", handler) })
}
