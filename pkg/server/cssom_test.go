package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// cssomPage has two style rules a script edits in place, as JSS sets its
// dynamic values (rule.style.display = 'none'): no DOM change, the same
// rule count (the second button also adds a rule at the sheet's end). Its
// buttons sit above what the edits hide, so the element under the pointer
// stays the same.
const cssomPage = `<!doctype html><title>CSSOM</title><style>.x { color: red } .y { color: blue }</style>
<main><h1>Rules</h1>
<button onclick="setTimeout(() => { document.styleSheets[0].cssRules[0].style.display = 'none'; }, 1000)">One</button>
<button onclick="setTimeout(() => { const s = document.styleSheets[0]; s.cssRules[1].style.display = 'none'; s.insertRule('.z { color: green }', s.cssRules.length); }, 1000)">Two</button>
<ul><li class="x">Secret one</li><li class="y">Secret two</li><li>Other item</li></ul></main>`

// TestSnapshotSeesARuleEditedInPlace: a style rule a script edits in place
// after a click's answer hides an item; a snapshot after it no longer shows
// the item (it was served unchanged before the watch read the rules' text).
func TestSnapshotSeesARuleEditedInPlace(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, cssomPage)
	}))
	defer ts.Close()
	c, _ := inProcess(t)
	c.MustCall(t, "browser_navigate", map[string]any{"url": ts.URL})
	for _, tc := range []struct{ button, gone string }{{"One", "Secret one"}, {"Two", "Secret two"}} {
		snap := c.MustCall(t, "browser_snapshot", map[string]any{})
		if !strings.Contains(snap, tc.gone) {
			t.Fatalf("%q not shown before the edit:\n%s", tc.gone, snap)
		}
		c.MustCall(t, "browser_click", map[string]any{"target": refFor(t, snap, `button "`+tc.button+`"`)})
		c.MustCall(t, "browser_snapshot", map[string]any{})
		time.Sleep(2 * time.Second)
		if snap := c.MustCall(t, "browser_snapshot", map[string]any{}); strings.Contains(snap, tc.gone) {
			t.Errorf("after %s's rule edit the snapshot still shows %q:\n%s", tc.button, tc.gone, snap)
		}
	}
}
