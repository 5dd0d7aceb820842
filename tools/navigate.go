package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"

	"github.com/mark3labs/mcp-go/mcp"
)

func navigateTools() []*Tool {
	return []*Tool{
		{Def: navigateDef(), Cap: "core", Handle: tabTool("browser_navigate", tabOpts{snapshot: snapFull, leavesModal: true}, navigate)},
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

// maxURL bounds a URL an agent navigates to: Chromium's own limit
// (url::kMaxURLChars, 2 MiB). A longer one would be refused by the browser
// after a round trip; data: URLs of a few hundred KB still fit.
const maxURL = 2 << 20

// allowedSchemes is what checkURL's refusals list.
const allowedSchemes = "http:, https:, about: and data: URLs (and file: with --allow-unrestricted-file-access)"

// checkURL normalises a URL an agent asked for and refuses what is not a
// web navigation: javascript:, browser-internal pages (chrome:, devtools:,
// view-source: — devtools:// pages can attach to any tab of the browser,
// chrome://inspect lists them), other schemes, and hosts that are not
// hostnames. file: URLs reach the local disk and need allowFile.
func checkURL(raw string, allowFile bool) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("url is empty: pass an http or https URL")
	}
	if len(s) > maxURL {
		return "", fmt.Errorf("url is %d characters long; the browser takes at most %d", len(s), maxURL)
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
	case strings.HasPrefix(low, "about:"), strings.HasPrefix(low, "data:"):
		return s, nil
	}
	if !strings.Contains(s, "://") && !hasScheme(low) {
		// Upstream adds https:// to bare hosts; keep loopback on http.
		if strings.HasPrefix(low, "localhost") || strings.HasPrefix(low, "127.") || strings.HasPrefix(low, "[::1]") {
			s = "http://" + s
		} else {
			s = "https://" + s
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("invalid URL %s: %w", clip.Quote(raw), urlErrCause(err))
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return "", fmt.Errorf("%s: URLs are not allowed (%s); this server navigates to %s", clip.Quote(u.Scheme), clip.Quote(raw), allowedSchemes)
	}
	if u.Host == "" {
		return "", fmt.Errorf("invalid URL %s: no host", clip.Quote(raw))
	}
	if err := checkHost(u.Hostname()); err != nil {
		return "", fmt.Errorf("invalid URL %s: %w", clip.Quote(raw), err)
	}
	return u.String(), nil
}

// hasScheme reports whether s starts with "scheme:" (RFC 3986), so a
// "view-source:…" or "mailto:…" is refused by name instead of being taken
// for a host. "localhost:8080" looks like one too: a scheme followed by
// digits is a host and port.
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		letter := r >= 'a' && r <= 'z'
		if !letter && (j == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	rest := s[i+1:]
	port := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		port = rest[:k]
	}
	if port != "" && strings.Trim(port, "0123456789") == "" {
		return false // host:port
	}
	return true
}

// checkHost refuses a host that no DNS lookup could resolve: longer than
// 253 characters, a label longer than 63, or characters a hostname never
// has. IP literals and internationalised names pass.
func checkHost(h string) error {
	if h == "" {
		return fmt.Errorf("no host")
	}
	if strings.HasPrefix(h, "[") || strings.Contains(h, ":") {
		return nil // IPv6 literal; url.Parse checked the brackets
	}
	if n := len(h); n > 253 {
		return fmt.Errorf("the host is %d characters long; a hostname has at most 253", n)
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if len(label) > 63 {
			return fmt.Errorf("the host has a label of %d characters; a hostname label has at most 63", len(label))
		}
		if label == "" {
			return fmt.Errorf("the host %s has an empty label", clip.Quote(h))
		}
		for _, r := range label {
			if r < 0x80 && !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("the host %s contains %q, which a hostname cannot", clip.Quote(h), r)
			}
		}
	}
	return nil
}

// urlErrCause is url.Parse's reason without the URL it quotes in full.
func urlErrCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
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
	nav, err := c.tab.Navigate(c.ctx, target)
	if nav.Tab != nil {
		c.tab = nav.Tab
	}
	reportLeaving(c, nav)
	if err != nil {
		c.resp.Error("Navigation to %s failed: %s", clip.Short(target), friendlyError(err))
		c.snapshot = snapNone
		return nil
	}
	c.resp.Code().Action(codegen.Action{Name: "navigate", URL: target})
	if nav.Status >= 400 {
		c.resp.Result("Navigated to %s (HTTP status %d)", clip.Short(target), nav.Status)
	}
	if !c.tab.Loaded() {
		if frames, requests := c.tab.StillLoading(); frames+requests > 0 {
			c.resp.Result("%s", stillLoading(frames, requests))
		}
	}
	return nil
}

// reportLeaving tells what leaving the previous page took: its dialogs
// dismissed, its page replaced (one line each).
func reportLeaving(c *tabCall, nav page.Navigation) {
	switch {
	case nav.Dismissed == 1:
		c.resp.Result("Dismissed the %s of the page left", nav.FirstDismissed)
	case nav.Dismissed > 1:
		c.resp.Result("Dismissed %d dialogs of the page left (the first: %s)", nav.Dismissed, nav.FirstDismissed)
	}
	if nav.Replaced != "" {
		c.resp.Result("The tab's page was replaced by a new one (%s): its page state (history, scripts, session storage) was lost", nav.Replaced)
	}
}

// stillLoading is the note of a navigation that returned once the document
// was usable while parts of it had not arrived.
func stillLoading(frames, requests int) string {
	var parts []string
	if frames > 0 {
		parts = append(parts, plural(frames, "frame", "frames")+" not loaded")
	}
	if requests > 0 {
		parts = append(parts, plural(requests, "request", "requests")+" pending")
	}
	return "The page is usable but still loading: " + strings.Join(parts, ", ") + " (snapshots do not wait for them)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// navigateBack goes back one entry, as upstream's page.goBack(). Playwright
// answers no response both when there is nothing to go back to and when the
// entry went back to needs none (about:blank, the page a tab starts on, or a
// same-document entry), so the URL tells which happened; the one line said
// agrees with the page shown below it.
func navigateBack(c *tabCall) error {
	from := c.tab.URL()
	moved, err := c.tab.GoBack(c.ctx)
	if err != nil {
		return fmt.Errorf("go back: %w", err)
	}
	c.resp.Code().Add("await page.goBack();")
	c.back = true
	switch to := c.tab.URL(); {
	case !moved && to == from:
		c.resp.Result("There is no previous page in this tab's history; the tab stays on %s", to)
	case to == "about:blank":
		c.resp.Result("Went back to about:blank, the empty page this tab started on")
	}
	return nil
}
