package session

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Route is a request route of a generation: requests whose whole URL
// matches Pattern are answered with a mock response (Fulfill) or continue
// to the server with their headers edited.
type Route struct {
	// Pattern is a Playwright URL glob matched against the whole URL.
	Pattern string
	// Fulfill answers matching requests with a mock response; otherwise
	// they continue to the server.
	Fulfill bool
	// Status is the mock response's status (Fulfill only); if zero, 200.
	Status int
	// Body is the mock response's body (Fulfill only).
	Body string
	// ContentType is the mock response's Content-Type (Fulfill only); if
	// empty, Playwright's default.
	ContentType string
	// Headers are response headers (Fulfill) or request headers set on the
	// way to the server, in order.
	Headers [][2]string
	// RemoveHeaders are request headers removed on the way to the server,
	// compared case-insensitively (not with Fulfill).
	RemoveHeaders []string
	// Hits counts the requests the route answered (set by ListRoutes).
	Hits int64
}

// Routes are the request routes (mocks, header edits) installed in a
// generation (browser_route and friends), in the order added.
//
// The table is the truth: a route's handler stays registered with
// Playwright until an unroute call reaches the browser, but once the route
// is out of the table its handler passes requests on untouched (Fallback).
// So no lock is held across a browser call, and a route added or removed
// concurrently never acts while unlisted.
type Routes struct {
	mu      sync.Mutex
	entries []*routeEntry
}

type routeEntry struct {
	spec    Route
	handler func(playwright.Route)
	hits    atomic.Int64
	removed atomic.Bool
}

// routes returns the generation's route table, creating it on first use.
func (g *Generation) routes() *Routes {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.routes == nil {
		g.state.routes = &Routes{}
	}
	return g.state.routes
}

// AddRoute installs r for every page of the generation. It lives as long as
// the browser, or until removed.
func (g *Generation) AddRoute(ctx context.Context, r Route) error {
	if r.Status == 0 {
		r.Status = 200
	}
	r.Hits = 0
	e := &routeEntry{spec: r}
	e.handler = func(pr playwright.Route) { g.answer(e, pr) }
	rt := g.routes()
	// Listed first: an unroute that runs meanwhile takes it along.
	rt.mu.Lock()
	rt.entries = append(rt.entries, e)
	rt.mu.Unlock()
	defer g.noteRouted()
	err := page.Run(ctx, g.Context, "route "+r.Pattern, func() error { return g.bc.Route(r.Pattern, e.handler) })
	if err != nil {
		rt.take(func(x *routeEntry) bool { return x == e })
		return err
	}
	return nil
}

// noteRouted tells the pages whether their requests are intercepted: a
// route is listed or the session filters origins.
func (g *Generation) noteRouted() {
	rt := g.routes()
	rt.mu.Lock()
	n := len(rt.entries)
	rt.mu.Unlock()
	g.Context.SetRouted(n > 0 || g.originFilter().active())
}

// answer handles one request matching e. Playwright waits for the handler
// on its own route goroutine; the door keeps a panic or a lost browser from
// taking it down.
func (g *Generation) answer(e *routeEntry, pr playwright.Route) {
	_ = page.Run(context.Background(), g.Context, "answer a routed request", func() error {
		if e.removed.Load() {
			// Unrouted, but the unroute has not reached the browser (yet).
			return pr.Fallback()
		}
		e.hits.Add(1)
		s := &e.spec
		if s.Fulfill {
			h := map[string]string{}
			for _, kv := range s.Headers {
				h[kv[0]] = kv[1]
			}
			opts := playwright.RouteFulfillOptions{Status: playwright.Int(s.Status), Body: s.Body, Headers: h}
			if s.ContentType != "" {
				opts.ContentType = playwright.String(s.ContentType)
			}
			return pr.Fulfill(opts)
		}
		h, err := pr.Request().AllHeaders()
		if err != nil {
			h = pr.Request().Headers()
		}
		out := make(map[string]string, len(h)+len(s.Headers))
		for k, v := range h {
			out[k] = v
		}
		for _, k := range s.RemoveHeaders {
			for hk := range out {
				if strings.EqualFold(hk, k) {
					delete(out, hk)
				}
			}
		}
		for _, kv := range s.Headers {
			out[kv[0]] = kv[1]
		}
		return pr.Continue(playwright.RouteContinueOptions{Headers: out})
	})
}

// ListRoutes returns the active routes in the order added, with their hit
// counts.
func (g *Generation) ListRoutes() []Route {
	rt := g.routes()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]Route, len(rt.entries))
	for i, e := range rt.entries {
		out[i] = e.spec
		out[i].Hits = e.hits.Load()
	}
	return out
}

// take removes the entries for which drop holds from the table and makes
// their handlers pass requests on; it returns how many it removed.
func (rt *Routes) take(drop func(*routeEntry) bool) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var keep []*routeEntry
	n := 0
	for _, e := range rt.entries {
		if drop(e) {
			e.removed.Store(true)
			n++
		} else {
			keep = append(keep, e)
		}
	}
	rt.entries = keep
	return n
}

// RemoveRoutes removes the routes whose pattern is pattern and returns how
// many there were (0 makes no browser call). Once it returns they no longer
// act, even when the browser call to unregister them failed (err).
func (g *Generation) RemoveRoutes(ctx context.Context, pattern string) (int, error) {
	rt := g.routes()
	n := rt.take(func(e *routeEntry) bool { return e.spec.Pattern == pattern })
	if n == 0 {
		return 0, nil
	}
	defer g.noteRouted()
	if err := page.Run(ctx, g.Context, "unroute "+pattern, func() error { return g.bc.Unroute(pattern) }); err != nil {
		return n, err
	}
	// Playwright unregisters every handler of the pattern: put back those
	// of routes added with it meanwhile.
	if err := g.reinstall(ctx, func(e *routeEntry) bool { return e.spec.Pattern == pattern }); err != nil {
		return n, err
	}
	if pattern == "**" {
		// Unroute("**") took the session's origin filter (origins.go) along.
		return n, g.filterOrigins(ctx)
	}
	return n, nil
}

// RemoveAllRoutes removes every route and returns how many there were.
// Once it returns they no longer act, even when the browser call to
// unregister them failed (err).
func (g *Generation) RemoveAllRoutes(ctx context.Context) (int, error) {
	rt := g.routes()
	n := rt.take(func(*routeEntry) bool { return true })
	defer g.noteRouted()
	if err := page.Run(ctx, g.Context, "unroute", func() error { return g.bc.UnrouteAll() }); err != nil {
		return n, err
	}
	if err := g.reinstall(ctx, func(*routeEntry) bool { return true }); err != nil {
		return n, err
	}
	// UnrouteAll took the session's origin filter (origins.go) along.
	return n, g.filterOrigins(ctx)
}

// reinstall registers again the handlers of listed routes that match,
// after an unroute call that may have unregistered them. Most of the time
// there are none.
func (g *Generation) reinstall(ctx context.Context, match func(*routeEntry) bool) error {
	rt := g.routes()
	rt.mu.Lock()
	var again []*routeEntry
	for _, e := range rt.entries {
		if match(e) {
			again = append(again, e)
		}
	}
	rt.mu.Unlock()
	for _, e := range again {
		if err := page.Run(ctx, g.Context, "route "+e.spec.Pattern, func() error { return g.bc.Route(e.spec.Pattern, e.handler) }); err != nil {
			return err
		}
	}
	return nil
}
