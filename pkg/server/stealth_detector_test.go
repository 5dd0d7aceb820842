package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// detectorServer serves testdata/pages/detector.html under a CSP that lets
// only the page's own (nonced) scripts run, so a browser that bypasses CSP
// shows.
func detectorServer(t *testing.T) *httptest.Server {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pages", "detector.html"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "script-src 'nonce-n0'")
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// driveDetector uses the detector page with the tools an agent commonly
// uses and returns its detections (check → detail).
func driveDetector(t *testing.T, c *mcptest.Client, srv *httptest.Server) map[string]string {
	t.Helper()
	snap := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/"}, "Detector")
	snap += must(t, c, "browser_snapshot", map[string]any{})
	ref := func(what string) string { return refFor(t, snap, what) }
	must(t, c, "browser_click", map[string]any{"target": ref(`button "Press me"`)})
	must(t, c, "browser_type", map[string]any{"target": ref(`textbox "Name"`), "text": "Ada"})
	must(t, c, "browser_hover", map[string]any{"target": ref(`Hover here`)})
	must(t, c, "browser_fill_form", map[string]any{"fields": []any{
		map[string]any{"target": ref(`textbox "Email"`), "name": "Email", "type": "textbox", "value": "a@b.c"},
		map[string]any{"target": ref(`checkbox "Agree"`), "name": "Agree", "type": "checkbox", "value": "true"},
	}})
	must(t, c, "browser_find", map[string]any{"text": "Hover"})
	// Each snapshot mode's refs: the role mode's and the ARIA mode's reach
	// their elements in other ways than the AI mode's.
	for _, mode := range []string{"role", "aria"} {
		ms := must(t, c, "browser_snapshot", map[string]any{"mode": mode})
		must(t, c, "browser_click", map[string]any{"target": modeRef(t, ms, `button "Press me"`)})
	}
	must(t, c, "browser_take_screenshot", map[string]any{})
	must(t, c, "browser_evaluate", map[string]any{"function": "() => probe()"}, "probed")
	must(t, c, "browser_evaluate", map[string]any{"function": "(el) => probe()", "target": ref(`button "Press me"`)}, "probed")
	must(t, c, "browser_tabs", map[string]any{"action": "new"})
	must(t, c, "browser_tabs", map[string]any{"action": "list"})
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0})
	must(t, c, "browser_snapshot", map[string]any{}, "Detector")
	out := must(t, c, "browser_evaluate", map[string]any{"function": "() => __detector.report()"})
	hits := map[string]string{}
	if err := json.Unmarshal([]byte(evalResultString(t, out)), &hits); err != nil {
		t.Fatalf("detections: %v\n%s", err, out)
	}
	return hits
}

// knownDetections are the checks the detector still catches today, each
// with what is left to do. The test fails when one of them is no longer
// detected (flip it: delete its row) and when anything else is.
var knownDetections = map[string]string{
	// Playwright's own session of every page keeps the Runtime domain on
	// (its execution contexts, console messages and page errors come from
	// it), and this Chromium's V8 reads the name of an error the page logs
	// while the log call runs, to describe it to that session. Upstream is
	// caught the same way (the bench). No session of ours enables it: the
	// replay of a later Runtime.enable is what TestARIARefsLeaveNoConsoleReplay
	// keeps out. Ending it needs a driver that finds its contexts without
	// the domain (as the Patchright fork of Playwright does).
	"runtimeDomain": "Playwright's page session has the Runtime domain on",
	// Nothing else: browser_evaluate runs the agent's function over the
	// tab's CDP session (session/page's evaluateMain), so no frame of it
	// carries Playwright's "eval at evaluate" origin any more. Input
	// coordinates pass on Debian's Chromium: the screen coordinates of a
	// trusted click are not its client coordinates. Drop is not driven
	// here (browser_drop is not a common tool).
}

// racyDetections are the checks the detector catches only sometimes, on a
// busy machine, with the exact detail they then give and why. They
// are logged, not failed; any other detail of theirs (a detection at
// report time too) fails.
var racyDetections = map[string]struct{ detail, why string }{
	// A new renderer learns its window's screen rect in a message of its
	// own, after the navigation that made it: when the machine is busy a
	// small page's load event can run before it comes (5 of 90 and 6 of
	// 48 loads with three test processes on 2 cores). Waiting, before the first
	// navigation, until the blank page reads its size does not help (it
	// always did; the site's page, in a renderer of its own, still read
	// 0x0 at load in 4 of 96). A check after load sees the real size.
	"windowSize": {"load: outer 0x0", "the window's rect reached a new renderer after load"},
}

// TestStealthDetector: a page that runs the usual bot checks (identity,
// window, stacks, globals, wrapped APIs, Runtime.enable, CSP, input) sees
// nothing of the automation layer while an agent uses the common tools,
// on the shared browser and on one of the server's own, except the checks
// in knownDetections.
func TestStealthDetector(t *testing.T) {
	srv := detectorServer(t)
	for _, own := range []bool{false, true} {
		t.Run(map[bool]string{false: "shared browser", true: "own browser"}[own], func(t *testing.T) {
			c, _ := startInProcess(t, mcptest.Options{OwnBrowser: own})
			wantOnlyKnownDetections(t, driveDetector(t, c, srv))
		})
	}
}

// TestStealthDetectorCloakBrowserPath: the same detector through a server
// whose browser resolves as a CloakBrowser build (the cache layout,
// chromium-<pinned version>/chrome), so that its launch takes
// CloakBrowser's path: the binary's fingerprint flags, its own brands
// (no brands risk reported). CloakBrowser cannot be downloaded here; the
// build is a wrapper that runs Debian's Chromium with those flags (which it
// ignores), so this shows what the automation layer adds on that path, not
// what CloakBrowser's patches hide. Installing such a build from a signed
// archive is TestInstall*'s (pkg/cloakbrowser, pkg/cli).
func TestStealthDetectorCloakBrowserPath(t *testing.T) {
	srv := detectorServer(t)
	chromium := mcptest.Chromium(t)
	dir := filepath.Join(t.TempDir(), "chromium-"+cloakbrowser.PinnedVersion)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "chrome")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec "+chromium+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, _ := startInProcess(t, mcptest.Options{OwnBrowser: true}, "--executable-path", bin)
	info := must(t, c, "cloakbrowser_binary_info", map[string]any{})
	var v struct {
		Binary struct {
			Engine             string `json:"engine"`
			Stealth            bool   `json:"stealth"`
			StealthProtections struct {
				FingerprintPatches, BrandsRisk bool
			} `json:"stealthProtections"`
		} `json:"binary"`
	}
	if err := json.Unmarshal([]byte(info), &v); err != nil {
		t.Fatalf("%v:\n%s", err, info)
	}
	if b := v.Binary; b.Engine != cloakbrowser.EngineCloak || !b.Stealth || !b.StealthProtections.FingerprintPatches || b.StealthProtections.BrandsRisk {
		t.Fatalf("the wrapper did not resolve as a CloakBrowser build:\n%s", info)
	}
	wantOnlyKnownDetections(t, driveDetector(t, c, srv))
	if log := c.Stderr.String(); !strings.Contains(log, `"engine":"cloak"`) || !strings.Contains(log, "browser launched") {
		t.Errorf("no launch of the CloakBrowser build in the log:\n%s", mcptest.Tail(log, 3000))
	}
}

// wantOnlyKnownDetections fails t for a detection not in knownDetections
// (a racy one with its known detail is logged), and for a known one that
// is no longer detected.
func wantOnlyKnownDetections(t *testing.T, hits map[string]string) {
	t.Helper()
	var names []string
	for n := range hits {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("detections: %s", strings.Join(names, ", "))
	for _, n := range names {
		if r, racy := racyDetections[n]; racy && hits[n] == r.detail {
			t.Logf("detected %s (%s): %s", n, r.why, hits[n])
			continue
		}
		if _, known := knownDetections[n]; known {
			t.Logf("known %s: %q", n, hits[n])
		} else {
			t.Errorf("detected %s: %s", n, hits[n])
		}
	}
	for n, todo := range knownDetections {
		if _, ok := hits[n]; !ok {
			t.Errorf("%s is no longer detected (%s): delete it from knownDetections", n, todo)
		}
	}
}

// TestStealthDetectorCatches: the detector is no pushover: Playwright's
// fixed viewport, a synthetic click and a new global are detected.
func TestStealthDetectorCatches(t *testing.T) {
	srv := detectorServer(t)
	c, _ := inProcess(t, "--viewport-size", "1280x720")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/"}, "Detector")
	must(t, c, "browser_evaluate", map[string]any{"function": `() => { window.addedByAgent = 1; document.getElementById('press').dispatchEvent(new MouseEvent('click', {bubbles: true, detail: 1})) }`})
	out := must(t, c, "browser_evaluate", map[string]any{"function": "() => __detector.report()"})
	hits := map[string]string{}
	if err := json.Unmarshal([]byte(evalResultString(t, out)), &hits); err != nil {
		t.Fatalf("detections: %v\n%s", err, out)
	}
	for _, want := range []string{"viewport1280x720", "untrustedClick", "clickCoords", "noMousemove", "globals"} {
		if _, ok := hits[want]; !ok {
			t.Errorf("%s not detected: %v", want, hits)
		}
	}
}
