package tools

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// networkTools are upstream's --caps=network tools: routes that mock or edit
// requests (they live as long as the browser) and the offline switch.
func networkTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: optDef("browser_route", "Mock network requests", "Set up a route to mock network requests matching a URL pattern. With status, body or contentType it answers with a mock response (headers are response headers); otherwise the request continues to the server with headers added (headers) or removed (removeHeaders).", false,
			props{
				"pattern":       pStr(`URL glob to match the whole URL (e.g., "**/api/users", "**/*.{png,jpg}", "https://example.com/*")`),
				"status":        map[string]any{"type": "number", "minimum": 100, "maximum": 599, "description": "HTTP status code to return (default: 200)"},
				"body":          pStr("Response body (text or JSON string)"),
				"contentType":   pStr(`Content-Type header (e.g., "application/json", "text/html")`),
				"headers":       pStrings(`Headers to add in "Name: Value" format`),
				"removeHeaders": pStr("Comma-separated list of header names to remove from request"),
			}, "pattern"),
			Cap: "network", Handle: tabTool("browser_route", quiet, route)},
		{Def: optDef("browser_route_list", "List network routes", "List all active network routes", true, props{}),
			Cap: "network", Handle: tabTool("browser_route_list", quiet, routeList)},
		{Def: optDef("browser_unroute", "Remove network routes", "Remove network routes matching a pattern (or all routes if no pattern specified)", false,
			props{"pattern": pStr("URL pattern to unroute (omit to remove all routes)")}),
			Cap: "network", Handle: tabTool("browser_unroute", quiet, unroute)},
		{Def: optDef("browser_network_state_set", "Set network state", "Sets the browser network state to online or offline. When offline, all network requests will fail.", false,
			props{"state": pEnum(`Set to "offline" to simulate offline mode, "online" to restore network connectivity`, "online", "offline")}, "state"),
			Cap: "network", Handle: tabTool("browser_network_state_set", quiet, networkState)},
	}
}

const keyRoutes = "tools.routes"

type routeEntry struct {
	pattern       string
	fulfill       bool
	status        int
	body          string
	contentType   string
	headers       [][2]string
	removeHeaders []string
	hits          atomic.Int64
}

// routeTable is one browser generation's routes, in the order added.
type routeTable struct {
	mu      sync.Mutex
	entries []*routeEntry
}

var routeTablesMu sync.Mutex

func routesOf(g *session.Generation) *routeTable {
	routeTablesMu.Lock()
	defer routeTablesMu.Unlock()
	t, _ := g.Value(keyRoutes).(*routeTable)
	if t == nil {
		t = &routeTable{}
		g.SetValue(keyRoutes, t)
	}
	return t
}

// checkGlob says what is wrong with a route pattern, or nil. Playwright
// matches URL globs (*, **, {a,b}, \ escapes) against the whole URL; a
// regular expression or a relative path would be taken literally and
// silently never match, and unbalanced braces break the matcher.
func checkGlob(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("pattern is empty: pass a URL glob such as **/api/users")
	}
	regexHint := fmt.Errorf("pattern %q looks like a regular expression, not a URL glob: use * (within a path segment), ** (across segments) and {a,b}, e.g. **/api/users or https://example.com/*.json (escape a literal character with \\)", p)
	depth := 0
	runes := []rune(p)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == '\\':
			if i+1 >= len(runes) {
				return fmt.Errorf("pattern %q ends with a lone backslash", p)
			}
			next := runes[i+1]
			if strings.ContainsRune("dDwWsSbB", next) {
				return regexHint
			}
			i++
		case r == '{':
			if depth > 0 {
				return fmt.Errorf("pattern %q nests {…} groups; globs allow one level, e.g. **/*.{png,jpg}", p)
			}
			depth++
		case r == '}':
			if depth == 0 {
				return fmt.Errorf("pattern %q has a } without {", p)
			}
			depth--
		case r == '(' || r == ')' || r == '|' || r == '[' || r == ']' || r == '^':
			return regexHint
		case r == '$' && i == len(runes)-1:
			return regexHint
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			return fmt.Errorf("pattern %q contains whitespace; URLs do not", p)
		}
	}
	if depth != 0 {
		return fmt.Errorf("pattern %q has a { without }", p)
	}
	// A glob matches the whole URL, so it must start like one.
	low := strings.ToLower(p)
	if !strings.HasPrefix(p, "*") && !strings.Contains(low, "://") && !strings.HasPrefix(low, "data:") && !strings.HasPrefix(low, "about:") && !strings.HasPrefix(low, "blob:") {
		return fmt.Errorf("pattern %q would never match: a URL glob matches the whole URL, so start it with ** or a scheme, e.g. **/%s", p, strings.TrimLeft(p, "/"))
	}
	return nil
}

func parseHeaderLines(lines []string) ([][2]string, error) {
	var out [][2]string
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header %q must be \"Name: Value\"", l)
		}
		out = append(out, [2]string{name, strings.TrimSpace(value)})
	}
	return out, nil
}

func route(c *tabCall) error {
	pattern := c.args.String("pattern", "")
	if err := checkGlob(pattern); err != nil {
		return err
	}
	hdrs, err := parseHeaderLines(c.args.Strings("headers"))
	if err != nil {
		return err
	}
	e := &routeEntry{pattern: pattern, headers: hdrs, body: c.args.String("body", ""), contentType: c.args.String("contentType", "")}
	e.fulfill = c.args.Has("status") || c.args.Has("body") || c.args.Has("contentType")
	e.status = int(c.args.Number("status", 200))
	for _, h := range strings.Split(c.args.String("removeHeaders", ""), ",") {
		if h = strings.TrimSpace(h); h != "" {
			e.removeHeaders = append(e.removeHeaders, strings.ToLower(h))
		}
	}
	if e.fulfill && len(e.removeHeaders) > 0 {
		return fmt.Errorf("removeHeaders edits requests that continue to the server; it cannot be combined with status, body or contentType (a mocked response)")
	}
	if !e.fulfill && len(e.headers) == 0 && len(e.removeHeaders) == 0 {
		return fmt.Errorf("the route would do nothing: pass status, body or contentType to mock a response, or headers/removeHeaders to edit requests")
	}
	handler := func(r playwright.Route) {
		e.hits.Add(1)
		if e.fulfill {
			h := map[string]string{}
			for _, kv := range e.headers {
				h[kv[0]] = kv[1]
			}
			opts := playwright.RouteFulfillOptions{Status: playwright.Int(e.status), Body: e.body, Headers: h}
			if e.contentType != "" {
				opts.ContentType = playwright.String(e.contentType)
			}
			_ = r.Fulfill(opts)
			return
		}
		h, err := r.Request().AllHeaders()
		if err != nil {
			h = r.Request().Headers()
		}
		out := make(map[string]string, len(h)+len(e.headers))
		for k, v := range h {
			out[k] = v
		}
		for _, k := range e.removeHeaders {
			for hk := range out {
				if strings.EqualFold(hk, k) {
					delete(out, hk)
				}
			}
		}
		for _, kv := range e.headers {
			out[kv[0]] = kv[1]
		}
		_ = r.Continue(playwright.RouteContinueOptions{Headers: out})
	}
	if err := c.gen.Context.Route(pattern, handler); err != nil {
		return fmt.Errorf("route %s: %s", pattern, friendlyError(err))
	}
	t := routesOf(c.gen)
	t.mu.Lock()
	t.entries = append(t.entries, e)
	t.mu.Unlock()
	c.resp.Result("Route added: %s", routeLine(e))
	return nil
}

func routeLine(e *routeEntry) string {
	var b strings.Builder
	b.WriteString(e.pattern)
	if e.fulfill {
		fmt.Fprintf(&b, " → mock %d %s", e.status, http.StatusText(e.status))
		if e.contentType != "" {
			b.WriteString(" " + e.contentType)
		}
		fmt.Fprintf(&b, ", %d-byte body", len(e.body))
	} else {
		b.WriteString(" → continue")
		if len(e.removeHeaders) > 0 {
			b.WriteString(", remove " + strings.Join(e.removeHeaders, ", "))
		}
	}
	for _, kv := range e.headers {
		fmt.Fprintf(&b, ", %s: %s", kv[0], kv[1])
	}
	fmt.Fprintf(&b, " (%d hits)", e.hits.Load())
	return b.String()
}

func routeList(c *tabCall) error {
	t := routesOf(c.gen)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.entries) == 0 {
		c.resp.Result("No active routes")
		return nil
	}
	for _, e := range t.entries {
		c.resp.Result("- %s", routeLine(e))
	}
	return nil
}

func unroute(c *tabCall) error {
	pattern := c.args.String("pattern", "")
	t := routesOf(c.gen)
	t.mu.Lock()
	defer t.mu.Unlock()
	if pattern == "" {
		if err := c.gen.Context.UnrouteAll(); err != nil {
			return fmt.Errorf("unroute: %s", friendlyError(err))
		}
		n := len(t.entries)
		t.entries = nil
		c.resp.Result("Removed all %d route(s)", n)
		return nil
	}
	var keep []*routeEntry
	n := 0
	for _, e := range t.entries {
		if e.pattern == pattern {
			n++
		} else {
			keep = append(keep, e)
		}
	}
	if n == 0 {
		var active []string
		for _, e := range t.entries {
			active = append(active, e.pattern)
		}
		if len(active) == 0 {
			c.resp.Result("Removed 0 route(s): there are no active routes")
		} else {
			c.resp.Result("Removed 0 route(s) for pattern: %s (active: %s)", pattern, strings.Join(active, ", "))
		}
		return nil
	}
	if err := c.gen.Context.Unroute(pattern); err != nil {
		return fmt.Errorf("unroute %s: %s", pattern, friendlyError(err))
	}
	t.entries = keep
	c.resp.Result("Removed %d route(s) for pattern: %s", n, pattern)
	return nil
}

func networkState(c *tabCall) error {
	offline := c.args.String("state", "") == "offline"
	if err := c.gen.Context.SetOffline(offline); err != nil {
		return fmt.Errorf("set network state: %s", friendlyError(err))
	}
	if offline {
		c.resp.Result("The browser is offline: every request fails until browser_network_state_set online")
	} else {
		c.resp.Result("The browser is online")
	}
	return nil
}
