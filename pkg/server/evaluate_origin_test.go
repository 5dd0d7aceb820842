package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// originPage has a button in the document, one in an open shadow root and
// one in a same-origin iframe.
const originPage = `<!doctype html><title>Origins</title>
<button id="main">Main button</button>
<div id="host"></div>
<iframe src="/frame" title="inner"></iframe>
<script>
const r = document.getElementById('host').attachShadow({mode: 'open'});
r.innerHTML = '<button id="shadow">Shadow button</button>';
</script>`

const originFrame = `<!doctype html><title>Frame</title><button id="inner">Framed button</button>`

// whoRan names the element it is called on and whether a frame of the
// call's stack is Playwright's (its evaluate's "eval at" origin or its
// UtilityScript), as a page that wraps an API the agent's function calls
// sees it.
const whoRan = `(el) => el.id + ':' + (/UtilityScript|eval at/.test(new Error().stack) ? 'playwright' : 'clean')`

// TestEvaluateOnElementsLeavesNoOrigin: browser_evaluate on an element of
// the document or of an open shadow root runs on that element with no
// Playwright frame in its stack; on an element of an iframe (which keeps
// Playwright's path) it still runs on the right element.
func TestEvaluateOnElementsLeavesNoOrigin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/frame" {
			fmt.Fprint(w, originFrame)
			return
		}
		fmt.Fprint(w, originPage)
	}))
	defer srv.Close()
	c, _ := inProcess(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "Origins")
	snap := must(t, c, "browser_snapshot", map[string]any{}, "Framed button")

	out := must(t, c, "browser_evaluate", map[string]any{
		"function": `() => /UtilityScript|eval at/.test(new Error().stack) ? 'playwright' : 'clean'`,
	})
	if !strings.Contains(out, `"clean"`) {
		t.Errorf("page evaluate: a Playwright frame in the stack:\n%s", out)
	}
	for _, tc := range []struct{ name, want string }{
		{"Main button", `"main:clean"`},
		{"Shadow button", `"shadow:clean"`},
		{"Framed button", `"inner:`},
	} {
		out := must(t, c, "browser_evaluate", map[string]any{
			"function": whoRan, "element": tc.name, "target": refFor(t, snap, tc.name),
		})
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: want %s in:\n%s", tc.name, tc.want, out)
		}
	}

	// What the function throws and gives back still reads as before.
	fails(t, c, "browser_evaluate", map[string]any{
		"function": `(el) => { throw new TypeError('no ' + el.id) }`, "element": "Main button", "target": refFor(t, snap, "Main button"),
	}, "TypeError: no main")
	out = must(t, c, "browser_evaluate", map[string]any{
		"function": `async (el) => { await new Promise(r => setTimeout(r, 50)); return {id: el.id, n: [1, 2.5]} }`,
		"element":  "Shadow button", "target": refFor(t, snap, "Shadow button"),
	})
	if !strings.Contains(out, `"id": "shadow"`) || !strings.Contains(out, `2.5`) {
		t.Errorf("an awaited object from the shadow element:\n%s", out)
	}
	// A promise that takes longer than one wait for it (awaitChunk, 1 s)
	// is waited for again until it settles.
	out = must(t, c, "browser_evaluate", map[string]any{
		"function": `async () => { await new Promise(r => setTimeout(r, 1600)); return 'settled late' }`,
	})
	if !strings.Contains(out, `"settled late"`) {
		t.Errorf("a promise settling after 1.6 s:\n%s", out)
	}
}
