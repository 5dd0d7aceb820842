package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// TestWaitForBoundedByActionTimeout: browser_wait_for {"text":"Nope",
// "time":1} sleeps its second, then waits for the text only up to the action
// timeout (5 s by default, --timeout-action), as upstream does — not 30 s.
func TestWaitForBoundedByActionTimeout(t *testing.T) {
	t.Run("default action timeout", func(t *testing.T) {
		c, _ := inProcess(t)
		must(t, c, "browser_navigate", map[string]any{"url": pages(t).URL + "/lab.html"})
		start := time.Now()
		res := c.Call(t, "browser_wait_for", map[string]any{"text": "Nope", "time": 1})
		took := time.Since(start)
		out := mcptest.Text(res)
		if !res.IsError || !strings.Contains(out, `text "Nope" did not appear within 5s`) || !strings.Contains(out, "--timeout-action") {
			t.Fatalf("want an error naming the 5 s action timeout, got isError=%v:\n%s", res.IsError, out)
		}
		// The bound: 1 s of sleep plus the 5 s action timeout, with
		// slack for a loaded machine (the old wait took 31 s).
		t.Logf("browser_wait_for took %v", took.Round(time.Millisecond))
		if took < time.Second || took > 1*time.Second+5*time.Second+5*time.Second {
			t.Fatalf("browser_wait_for took %v, want about 6 s", took)
		}
	})
	t.Run("--timeout-action bounds textGone", func(t *testing.T) {
		c, _ := inProcess(t, "--timeout-action", "1000")
		must(t, c, "browser_navigate", map[string]any{"url": pages(t).URL + "/lab.html"})
		fails(t, c, "browser_wait_for", map[string]any{"textGone": "Press me"}, `text "Press me" did not disappear within 1s (the action timeout, --timeout-action)`)
	})
}

// TestNavigateBackFirstPage: browser_navigate_back says one thing, and the
// page it then shows agrees with it: on a tab's first entry it stays where
// it is; from the first page navigated to it goes back to about:blank (the
// page the tab started on), and says so rather than "no previous page".
func TestNavigateBackFirstPage(t *testing.T) {
	c, _ := inProcess(t)
	const noPrevious = "There is no previous page in this tab's history; the tab stays on about:blank"
	const toBlank = "Went back to about:blank, the empty page this tab started on"
	back := func(want, not string) {
		t.Helper()
		out := must(t, c, "browser_navigate_back", nil, want, "- Page URL: about:blank")
		if strings.Contains(out, not) {
			t.Fatalf("browser_navigate_back says both %q and %q:\n%s", want, not, out)
		}
	}
	back(noPrevious, toBlank) // a fresh tab
	must(t, c, "browser_navigate", map[string]any{"url": pages(t).URL + "/lab.html"})
	back(toBlank, "There is no previous page") // from the first page navigated to
	back(noPrevious, toBlank)                  // and now nothing is before it

	must(t, c, "browser_tabs", map[string]any{"action": "new"})
	back(noPrevious, toBlank)
	must(t, c, "browser_navigate", map[string]any{"url": pages(t).URL + "/lab.html"})
	back(toBlank, "There is no previous page")
}
