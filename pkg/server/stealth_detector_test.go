package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// detectorLine reads the detector page's summary line, through a snapshot
// (the server's own read, which the page cannot see).
var detectorLine = regexp.MustCompile(`automation detections: (\d+) \[([^\]]*)\] stealthl: \[([^\]]*)\] identity: \[([^\]]*)\] known: \[([^\]]*)\]`)

// detectorResult is what the detector page (testdata/pages/detector.html)
// caught.
type detectorResult struct {
	automation, stealthl, identity, known []string
}

func readDetector(t *testing.T, c *mcptest.Client) detectorResult {
	t.Helper()
	var m []string
	for range 20 {
		snap := c.MustCall(t, "browser_snapshot", map[string]any{})
		if m = detectorLine.FindStringSubmatch(snap); m != nil {
			break
		}
	}
	if m == nil {
		t.Fatal("the detector page shows no summary")
	}
	return detectorResult{strings.Fields(m[2]), strings.Fields(m[3]), strings.Fields(m[4]), strings.Fields(m[5])}
}

// driveDetector opens the detector page and uses on it every tool an agent
// commonly uses.
func driveDetector(t *testing.T, c *mcptest.Client, url, dir string) {
	t.Helper()
	snap := must(t, c, "browser_navigate", map[string]any{"url": url}, "Detector")
	ref := func(what string) string { return refFor(t, snap, what) }
	must(t, c, "browser_snapshot", map[string]any{})
	must(t, c, "browser_evaluate", map[string]any{"function": "() => window.detectorProbe('page')"}, "probed:page")
	must(t, c, "browser_evaluate", map[string]any{"function": "(el) => window.detectorProbe(el.id && 'element')", "target": ref(`paragraph`)}, "probed:element")
	must(t, c, "browser_evaluate", map[string]any{"function": "async () => { await null; return window.detectorProbe('async') }"}, "probed:async")
	must(t, c, "browser_click", map[string]any{"target": ref(`button "Press me"`)}, "Pressed")
	must(t, c, "browser_type", map[string]any{"target": ref(`textbox "Name"`), "text": "Ada", "slowly": true})
	must(t, c, "browser_type", map[string]any{"target": ref(`textbox "Name"`), "text": "Lovelace"})
	must(t, c, "browser_fill_form", map[string]any{"fields": []any{
		map[string]any{"target": ref(`textbox "Email"`), "name": "Email", "type": "textbox", "value": "ada@example.com"},
		map[string]any{"target": ref(`checkbox "Agree"`), "name": "Agree", "type": "checkbox", "value": "true"},
	}})
	must(t, c, "browser_hover", map[string]any{"target": ref(`button "Shadow button"`)})
	must(t, c, "browser_click", map[string]any{"target": ref(`button "Shadow button"`)})
	must(t, c, "browser_press_key", map[string]any{"key": "Tab"})
	must(t, c, "browser_find", map[string]any{"text": "Probe target"}, "Probe target")
	must(t, c, "browser_take_screenshot", map[string]any{})
	f := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(f, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, c, "browser_drop", map[string]any{"target": ref(`region "Drop zone"`), "paths": []any{f}, "data": map[string]any{"text/plain": "hi"}}, "Dropped hi")
	// An ARIA-mode ref: its element is handed to Playwright without a
	// mark on the page.
	aria := must(t, c, "browser_snapshot", map[string]any{"mode": "aria"})
	if m := regexp.MustCompile(`Pressed[^\n]*\[ref=(ax\d+)\]`).FindStringSubmatch(aria); m != nil {
		must(t, c, "browser_click", map[string]any{"target": m[1]})
	} else {
		t.Errorf("no ARIA ref for the pressed button in:\n%s", aria)
	}
	must(t, c, "browser_wait_for", map[string]any{"time": 0.2})
	must(t, c, "browser_tabs", map[string]any{"action": "new", "url": url + "#second-tab"})
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0})
}

// TestDetectorSeesNoAutomation drives the detector page through the MCP
// server with the tools agents use and asserts that it caught nothing of
// the automation: navigator.webdriver, Playwright's frames in the stacks
// of calls the agent's scripts make, calls of the server's own in the
// page's world, globals, attributes, a bypassed CSP, untrusted input, a
// click without a mousemove, keys without codes, the Runtime.enable side
// effect. The launch-level checks (the 1280×720 viewport, a headless user
// agent) are another change's: logged until they pass; the binary's brands
// are its identity, reported.
func TestDetectorSeesNoAutomation(t *testing.T) {
	srv := toolPages(t)
	dir := t.TempDir()
	c, _ := inProcess(t, "--allow-unrestricted-file-access")
	driveDetector(t, c, srv.URL+"/detector.html", dir)
	r := readDetector(t, c)
	out := c.MustCall(t, "browser_evaluate", map[string]any{"function": "() => JSON.stringify(window.detector.report().found)"})
	if len(r.automation) > 0 {
		t.Errorf("the detector caught the automation: %v\n%s", r.automation, out)
	}
	for _, s := range r.stealthl {
		t.Logf("pending stealthl: the detector caught %s", s)
	}
	for _, s := range r.known {
		t.Logf("known, not avoided: the detector caught %s", s)
	}
	if len(r.identity) > 0 {
		t.Logf("the binary's identity: %v (reported, not spoofed)", r.identity)
	}
	t.Logf("detector details: %s", out)
}
