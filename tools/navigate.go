package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"

	"github.com/mark3labs/mcp-go/mcp"
)

func navigateTools() []*Tool {
	return []*Tool{
		{Def: navigateDef(), Cap: "core", Handle: tabTool("browser_navigate", tabOpts{snapshot: snapFull}, navigate)},
		{Def: upstreamDef("browser_navigate_back"), Cap: "core", Handle: tabTool("browser_navigate_back", tabOpts{snapshot: snapFull}, navigateBack)},
	}
}

// navigateDef is upstream's browser_navigate plus find: the words an agent
// is looking for on the new page, answered with the matching elements
// instead of the page's outline.
func navigateDef() mcp.Tool {
	def := upstreamDef("browser_navigate")
	var s map[string]any
	_ = json.Unmarshal(def.RawInputSchema, &s)
	s["properties"].(map[string]any)["find"] = map[string]any{"type": "string", "description": "Text you are looking for: list matching elements with refs instead of the page outline"}
	def.RawInputSchema, _ = json.Marshal(s)
	return def
}

// maxFindText bounds browser_find's text and browser_navigate's find.
const maxFindText = 1000

// checkFindText refuses an empty or oversized search text.
func checkFindText(arg, s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("%s is empty: pass a few words of the element's name or text", arg)
	case len(s) > maxFindText:
		return fmt.Errorf("%s is %d characters long (at most %d): pass a few words of the element's name or text", arg, len(s), maxFindText)
	}
	return nil
}

// checkURL normalises a URL an agent asked for and refuses schemes that are
// not navigation (javascript:) or reach the local disk (file:) unless allowed.
func checkURL(raw string, allowFile bool) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("url is empty")
	}
	low := strings.ToLower(s)
	switch {
	case strings.HasPrefix(low, "javascript:"):
		return "", fmt.Errorf("javascript: URLs are not navigations; use browser_evaluate to run code in the page")
	case strings.HasPrefix(low, "file:"):
		if !allowFile {
			return "", fmt.Errorf("file: URLs are blocked; start the server with --allow-unrestricted-file-access to allow them")
		}
		return s, nil
	case strings.HasPrefix(low, "about:"), strings.HasPrefix(low, "data:"), strings.HasPrefix(low, "chrome:"):
		return s, nil
	}
	if !strings.Contains(s, "://") {
		// Upstream adds https:// to bare hosts; keep loopback on http.
		if strings.HasPrefix(low, "localhost") || strings.HasPrefix(low, "127.") || strings.HasPrefix(low, "[::1]") {
			s = "http://" + s
		} else {
			s = "https://" + s
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return "", fmt.Errorf("unsupported URL scheme %q in %q: use http or https", u.Scheme, raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("invalid URL %q: no host", raw)
	}
	return u.String(), nil
}

func navigate(c *tabCall) error {
	if c.args.Has("find") {
		if err := checkFindText("find", c.args.String("find", "")); err != nil {
			c.resp.Error("%v", err)
			c.snapshot = snapNone
			return nil
		}
	}
	target, err := checkURL(c.args.String("url", ""), c.env.AllowUnrestrictedFileAccess)
	if err != nil {
		c.resp.Error("%v", err)
		c.snapshot = snapNone
		return nil
	}
	status, err := c.tab.Navigate(c.ctx, target)
	if err != nil {
		c.resp.Error("Navigation to %s failed: %s", target, friendlyError(err))
		c.snapshot = snapNone
		return nil
	}
	c.resp.Code().Action(codegen.Action{Name: "navigate", URL: target})
	if status >= 400 {
		c.resp.Result("Navigated to %s (HTTP status %d)", target, status)
	}
	return nil
}

func navigateBack(c *tabCall) error {
	moved, err := c.tab.GoBack(c.ctx)
	if err != nil {
		return fmt.Errorf("go back: %w", err)
	}
	c.resp.Code().Add("await page.goBack();")
	if !moved {
		c.resp.Result("There is no previous page in this tab's history")
	}
	return nil
}
