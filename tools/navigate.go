package tools

import (
	"fmt"
	"net/url"
	"strings"
)

func navigateTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_navigate"), Cap: "core", Handle: tabTool("browser_navigate", tabOpts{snapshot: snapFull}, navigate)},
		{Def: upstreamDef("browser_navigate_back"), Cap: "core", Handle: tabTool("browser_navigate_back", tabOpts{snapshot: snapFull}, navigateBack)},
	}
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
	if !moved {
		c.resp.Result("There is no previous page in this tab's history")
	}
	return nil
}
