package tools

import (
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// networkTools are upstream's --caps=network tools: routes that mock or edit
// requests (they live as long as the browser) and the offline switch.
func networkTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: upstreamDef("browser_route"),
			Cap: "network", Handle: tabTool("browser_route", quiet, route)},
		{Def: upstreamDef("browser_route_list"),
			Cap: "network", Handle: tabTool("browser_route_list", quiet, routeList)},
		{Def: upstreamDef("browser_unroute"),
			Cap: "network", Handle: tabTool("browser_unroute", quiet, unroute)},
		{Def: upstreamDef("browser_network_state_set"),
			Cap: "network", Handle: tabTool("browser_network_state_set", quiet, networkState)},
	}
}

// checkGlob says what is wrong with a route pattern, or nil. Playwright
// matches URL globs (*, **, {a,b}, \ escapes) against the whole URL; a
// regular expression or a relative path would be taken literally and
// silently never match, and unbalanced braces break the matcher.
func checkGlob(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("pattern is empty: pass a URL glob such as **/api/users")
	}
	regexHint := fmt.Errorf("pattern %s looks like a regular expression, not a URL glob: use * (within a path segment), ** (across segments) and {a,b}, e.g. **/api/users or https://example.com/*.json (escape a literal character with \\)", clip.Quote(p))
	depth := 0
	runes := []rune(p)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == '\\':
			if i+1 >= len(runes) {
				return fmt.Errorf("pattern %s ends with a lone backslash", clip.Quote(p))
			}
			next := runes[i+1]
			if strings.ContainsRune("dDwWsSbB", next) {
				return regexHint
			}
			i++
		case r == '{':
			if depth > 0 {
				return fmt.Errorf("pattern %s nests {…} groups; globs allow one level, e.g. **/*.{png,jpg}", clip.Quote(p))
			}
			depth++
		case r == '}':
			if depth == 0 {
				return fmt.Errorf("pattern %s has a } without {", clip.Quote(p))
			}
			depth--
		case r == '(' || r == ')' || r == '|' || r == '[' || r == ']' || r == '^':
			return regexHint
		case r == '$' && i == len(runes)-1:
			return regexHint
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			return fmt.Errorf("pattern %s contains whitespace; URLs do not", clip.Quote(p))
		}
	}
	if depth != 0 {
		return fmt.Errorf("pattern %s has a { without }", clip.Quote(p))
	}
	// A glob matches the whole URL, so it must start like one.
	low := strings.ToLower(p)
	if !strings.HasPrefix(p, "*") && !strings.Contains(low, "://") && !strings.HasPrefix(low, "data:") && !strings.HasPrefix(low, "about:") && !strings.HasPrefix(low, "blob:") {
		return fmt.Errorf("pattern %s would never match: a URL glob matches the whole URL, so start it with ** or a scheme, e.g. **/%s", clip.Quote(p), clip.Short(strings.TrimLeft(p, "/")))
	}
	return nil
}

func parseHeaderLines(lines []string) ([][2]string, error) {
	var out [][2]string
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header %s must be \"Name: Value\"", clip.Quote(l))
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
	r := session.Route{Pattern: pattern, Headers: hdrs, Body: c.args.String("body", ""), ContentType: c.args.String("contentType", "")}
	r.Fulfill = c.args.Has("status") || c.args.Has("body") || c.args.Has("contentType")
	status := c.args.Number("status", 200)
	if status != math.Trunc(status) || status < 100 || status > 599 {
		return fmt.Errorf("status=%v is not an HTTP status: pass a whole number from 100 to 599", status)
	}
	r.Status = int(status)
	for _, h := range strings.Split(c.args.String("removeHeaders", ""), ",") {
		if h = strings.TrimSpace(h); h != "" {
			r.RemoveHeaders = append(r.RemoveHeaders, strings.ToLower(h))
		}
	}
	if r.Fulfill && len(r.RemoveHeaders) > 0 {
		return fmt.Errorf("removeHeaders edits requests that continue to the server; it cannot be combined with status, body or contentType (a mocked response)")
	}
	if !r.Fulfill && len(r.Headers) == 0 && len(r.RemoveHeaders) == 0 {
		return fmt.Errorf("the route would do nothing: pass status, body or contentType to mock a response, or headers/removeHeaders to edit requests")
	}
	if err := c.gen.AddRoute(c.ctx, r); err != nil {
		return fmt.Errorf("route %s: %w", pattern, err)
	}
	c.code("await page.context().route(" + codegen.Quote(pattern) + ", async route => { /* route handler */ });")
	c.resp.Result("Route added: %s", routeLine(r))
	return nil
}

func routeLine(r session.Route) string {
	var b strings.Builder
	b.WriteString(r.Pattern)
	if r.Fulfill {
		fmt.Fprintf(&b, " → mock %d %s", r.Status, http.StatusText(r.Status))
		if r.ContentType != "" {
			b.WriteString(" " + r.ContentType)
		}
		fmt.Fprintf(&b, ", %d-byte body", len(r.Body))
	} else {
		b.WriteString(" → continue")
		if len(r.RemoveHeaders) > 0 {
			b.WriteString(", remove " + strings.Join(r.RemoveHeaders, ", "))
		}
	}
	for _, kv := range r.Headers {
		fmt.Fprintf(&b, ", %s: %s", kv[0], kv[1])
	}
	fmt.Fprintf(&b, " (%d hits)", r.Hits)
	return b.String()
}

func routeList(c *tabCall) error {
	routes := c.gen.ListRoutes()
	if len(routes) == 0 {
		c.resp.Result("No active routes")
		return nil
	}
	for _, r := range routes {
		c.resp.Result("- %s", routeLine(r))
	}
	return nil
}

func unroute(c *tabCall) error {
	pattern := c.args.String("pattern", "")
	if pattern == "" {
		n, err := c.gen.RemoveAllRoutes(c.ctx)
		if err != nil {
			return fmt.Errorf("unroute: %w", err)
		}
		c.resp.Result("Removed all %d route(s)", n)
		return nil
	}
	n, err := c.gen.RemoveRoutes(c.ctx, pattern)
	if err != nil {
		return fmt.Errorf("unroute %s: %w", pattern, err)
	}
	if n == 0 {
		var active []string
		for _, r := range c.gen.ListRoutes() {
			active = append(active, r.Pattern)
		}
		if len(active) == 0 {
			c.resp.Result("Removed 0 route(s): there are no active routes")
		} else {
			c.resp.Result("Removed 0 route(s) for pattern: %s (active: %s)", pattern, strings.Join(active, ", "))
		}
		return nil
	}
	c.resp.Result("Removed %d route(s) for pattern: %s", n, pattern)
	return nil
}

func networkState(c *tabCall) error {
	offline := c.args.String("state", "") == "offline"
	if err := c.gen.SetOffline(c.ctx, offline); err != nil {
		return fmt.Errorf("set network state: %w", err)
	}
	c.code(fmt.Sprintf("await page.context().setOffline(%t);", offline))
	if offline {
		c.resp.Result("The browser is offline: every request fails until browser_network_state_set online")
	} else {
		c.resp.Result("The browser is online")
	}
	return nil
}
