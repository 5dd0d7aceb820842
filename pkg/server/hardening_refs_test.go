package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// TestHardeningRefOfClosedTab (issue 29, item 11): tab 1's snapshot has e2
// (button "tab1btn"), tab 0's older one an e2 too (heading "disk"); after
// tab 1 is closed, browser_click e2 fails naming the closed tab and clicks
// nothing on tab 0. A snapshot of tab 0 taken afterwards makes its e2 the
// heading again.
func TestHardeningRefOfClosedTab(t *testing.T) {
	c, _ := inProcess(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/zero":
			fmt.Fprint(w, `<title>zero</title><h1 onclick="document.title='clicked'">disk</h1>`)
		case "/one":
			fmt.Fprint(w, `<title>one</title><button onclick="document.title='clicked'">tab1btn</button>`)
		}
	}))
	t.Cleanup(srv.Close)

	ref0 := lineRef(t, must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/zero"}, "zero"), `heading "disk"`)
	must(t, c, "browser_tabs", map[string]any{"action": "new", "url": srv.URL + "/one"}, "one")
	ref1 := lineRef(t, must(t, c, "browser_snapshot", nil, "tab1btn"), `button "tab1btn"`)
	if ref0 != ref1 {
		t.Fatalf("the fixture's refs differ (%s on tab 0, %s on tab 1): the test needs one ref on both tabs", ref0, ref1)
	}
	must(t, c, "browser_tabs", map[string]any{"action": "close"}, "zero")

	res := c.Call(t, "browser_click", map[string]any{"target": ref1})
	text := mcptest.Text(res)
	if !res.IsError || !strings.Contains(text, "closed") || !strings.Contains(text, "tab 1") {
		t.Fatalf("browser_click %s of the closed tab: isError=%v:\n%s", ref1, res.IsError, text)
	}
	if title := must(t, c, "browser_evaluate", map[string]any{"function": "() => document.title"}); !strings.Contains(title, `"zero"`) {
		t.Fatalf("the click acted on tab 0: title is now\n%s", title)
	}

	ref := lineRef(t, must(t, c, "browser_snapshot", nil, "disk"), `heading "disk"`)
	must(t, c, "browser_click", map[string]any{"target": ref})
	must(t, c, "browser_evaluate", map[string]any{"function": "() => document.title"}, `"clicked"`)
}
