package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEvaluateAnswersBeforeTheTaskItStarted: a function that returns at
// once but sets off an endless task with a zero timer gets its value back
// (the page's next task never ends, so an answer that waited for it would
// never come), on the page and on an element; the page is then reported
// busy, and a navigation recovers the tab. An element's function that
// settles after the first wait still gets its value.
func TestEvaluateAnswersBeforeTheTaskItStarted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Busy %s</title><button>Go</button>`, r.URL.Path)
	}))
	defer srv.Close()
	c, _ := inProcess(t)
	endless := `setTimeout(() => { for (;;) {} }, 0)`

	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/a"}, "Busy /a")
	out := must(t, c, "browser_evaluate", map[string]any{"function": `() => { ` + endless + `; return 'started on the page' }`}, "started on the page")
	t.Logf("page: %s", out)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/b"}, "Busy /b")

	snap := must(t, c, "browser_snapshot", map[string]any{}, "Go")
	ref := refFor(t, snap, `button "Go"`)
	// A promise that outlasts the first wait (a second) is taken from its
	// holder and waited for.
	must(t, c, "browser_evaluate", map[string]any{"element": "Go button", "ref": ref,
		"function": `async (el) => { await new Promise(r => setTimeout(r, 1500)); return 'late on ' + el.tagName }`}, "late on BUTTON")
	must(t, c, "browser_evaluate", map[string]any{"element": "Go button", "ref": ref,
		"function": `(el) => { ` + endless + `; return 'started on ' + el.tagName }`}, "started on BUTTON")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/c"}, "Busy /c")
}
