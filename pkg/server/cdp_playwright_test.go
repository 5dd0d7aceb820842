package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// TestCDPPlaywright: Playwright's connectOverCDP works through the
// capability URL and the proxy's allowlist: it sees the MCP client's page,
// opens its own, navigates, clicks, evaluates, takes a screenshot and
// closes it; the MCP client's page stays usable, also once Playwright has
// disconnected. Its default download
// directory (a temp dir) is refused with an error that says to set
// artifactsDir, and works with artifactsDir set to the session's directory.
func TestCDPPlaywright(t *testing.T) {
	portRange, _ := freePorts(t, 1)
	srv := pages(t)
	c, out := inProcess(t, "--cdp-enabled", "--cdp-port-range", portRange)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "- Page Title: Lab")
	discovery := *readyCDP(t, c).DiscoveryURL

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	pw, err := mcptest.SharedDriver(t).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	timeout := 30000.0
	if _, err := pw.Chromium.ConnectOverCDP(discovery, playwright.BrowserTypeConnectOverCDPOptions{Timeout: &timeout}); err == nil ||
		!strings.Contains(err.Error(), "artifactsDir") {
		t.Fatalf("connectOverCDP with Playwright's own download dir: %v; want a refusal that names artifactsDir", err)
	}
	browser, err := pw.Chromium.ConnectOverCDP(discovery, playwright.BrowserTypeConnectOverCDPOptions{Timeout: &timeout, ArtifactsDir: &out})
	if err != nil {
		t.Fatalf("connectOverCDP: %v", err)
	}
	defer browser.Close() // a second Close is a no-op
	contexts := browser.Contexts()
	if len(contexts) != 1 {
		t.Fatalf("%d contexts", len(contexts))
	}
	found := false
	for _, p := range contexts[0].Pages() {
		found = found || p.URL() == srv.URL+"/lab.html"
	}
	if !found {
		t.Fatal("Playwright does not see the MCP client's page")
	}
	page, err := contexts[0].NewPage()
	if err != nil {
		t.Fatalf("new page: %v", err)
	}
	if _, err := page.Goto(srv.URL + "/forms.html"); err != nil {
		t.Fatalf("goto: %v", err)
	}
	if err := page.Locator("body").Click(); err != nil {
		t.Fatalf("click: %v", err)
	}
	if v, err := page.Evaluate(`() => document.title`); err != nil || v == "" {
		t.Fatalf("evaluate: %v %v", v, err)
	}
	if b, err := page.Screenshot(); err != nil || len(b) == 0 {
		t.Fatalf("screenshot: %v", err)
	}
	if err := page.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	// Disconnecting leaves the browser to the MCP session.
	if err := browser.Close(); err != nil {
		t.Fatalf("disconnect: %v", err)
	}
	must(t, c, "browser_snapshot", nil, "- Page Title: Lab")
}
