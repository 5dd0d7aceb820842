package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDiffBaseLost: an action whose diff base is gone answers with the page
// as new (a whole snapshot), never with a diff against another page: when
// the action closed its tab (the answer is about the tab now current), and
// after the browser was closed and opened again.
func TestDiffBaseLost(t *testing.T) {
	c, _ := inProcess(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/first":
			fmt.Fprint(w, `<title>first</title><h1>First page</h1><button onclick="window.open('/second')">Open</button><p>shared line</p>`)
		case "/second":
			fmt.Fprint(w, `<title>second</title><h1>Second page</h1><button onclick="window.close()">Close me</button><p>shared line</p>`)
		}
	}))
	t.Cleanup(srv.Close)

	t.Run("the action closed its tab", func(t *testing.T) {
		nav := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/first"}, "First page")
		must(t, c, "browser_click", map[string]any{"target": lineRef(t, nav, `button "Open"`)}, "second")
		must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 1}, "(current) [second]")
		out := must(t, c, "browser_click", map[string]any{"target": lineRef(t, must(t, c, "browser_snapshot", nil), `button "Close me"`)})
		snap := section(out, "Snapshot")
		if !strings.Contains(snap, "```yaml") || strings.Contains(snap, "```diff") || !strings.Contains(snap, `heading "First page"`) {
			t.Fatalf("closing the tab is not answered with the now current tab as a new page:\n%s", out)
		}
	})

	t.Run("the browser was closed", func(t *testing.T) {
		nav := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/second"}, "Second page")
		lineRef(t, nav, `button "Close me"`)
		must(t, c, "browser_close", nil)
		out := must(t, c, "browser_press_key", map[string]any{"key": "Tab"})
		if snap := section(out, "Snapshot"); strings.Contains(snap, "```diff") || strings.Contains(snap, "Second page") || strings.Contains(snap, "Changes") {
			t.Fatalf("an action after the browser closed is answered as a diff against the page before:\n%s", out)
		}
	})
}

// TestNavigateBackSeenPage: browser_navigate_back to a large page the agent
// was shown answers without its outline again, and says how to see more;
// a page it was not shown gets the outline.
func TestNavigateBackSeenPage(t *testing.T) {
	c, _ := inProcess(t)
	base := benchPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": base + "/news.html"}, "- Outline (")
	must(t, c, "browser_navigate", map[string]any{"url": base + "/docs.html"}, "- Outline (")
	out := must(t, c, "browser_navigate_back", nil, "- Page URL: "+base+"/news.html", "Back on a page seen before", "browser_find")
	if strings.Contains(out, "Outline of") || len(out) > 500 {
		t.Fatalf("navigate_back to a page seen gave %d chars, with its outline again:\n%s", len(out), out)
	}
	// What it points to works: browser_find finds the page's elements.
	must(t, c, "browser_find", map[string]any{"text": "Email address"}, `textbox "Email address"`)
}
