package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// wrappedAPIsPage counts every call a script of the page's own world makes
// to the APIs the server's reads use (the user agent, the window size, Intl,
// DOM creation and queries), as a page that looks for automation does.
const wrappedAPIsPage = `<!doctype html><title>Watcher</title>
<h1>Watcher</h1><button>Press</button>
<script>
window.__ours = [];
const note = name => window.__ours.push(name);
const wrapGetter = (obj, prop) => {
  const d = Object.getOwnPropertyDescriptor(obj, prop);
  Object.defineProperty(obj, prop, {configurable: true, get() { note(prop); return d.get.call(this); }});
};
wrapGetter(Navigator.prototype, 'userAgent');
for (const p of ['innerWidth', 'innerHeight', 'scrollX', 'scrollY']) {
  const d = Object.getOwnPropertyDescriptor(window, p);
  Object.defineProperty(window, p, {configurable: true, get() { note(p); return d.get.call(window); }});
}
const DTF = Intl.DateTimeFormat;
Intl.DateTimeFormat = function (...a) { note('Intl.DateTimeFormat'); return new DTF(...a); };
for (const [obj, fn] of [[Document.prototype, 'createElement'], [Document.prototype, 'querySelectorAll'], [Node.prototype, 'appendChild']]) {
  const orig = obj[fn];
  obj[fn] = function (...a) { note(fn); return orig.apply(this, a); };
}
</script>`

// TestServerReadsStayOutOfThePagesWorld: the server's own reads of a page
// (the user agent for a locale, a timezone's validity, the window size and
// the label overlay of a labelled screenshot) run in an isolated world: a
// page that wraps those APIs in its own world sees none of them.
func TestServerReadsStayOutOfThePagesWorld(t *testing.T) {
	url := htmlPage(t, wrappedAPIsPage)
	c, _ := inProcess(t, "--caps", "emulation,vision")
	must(t, c, "browser_navigate", map[string]any{"url": url}, "Watcher")
	must(t, c, "browser_set_locale", map[string]any{"locale": "de-DE"})
	must(t, c, "browser_set_timezone", map[string]any{"timezoneId": "Europe/Berlin"})
	must(t, c, "browser_take_labeled_screenshot", map[string]any{})
	out := must(t, c, "browser_evaluate", map[string]any{"function": "() => JSON.stringify(window.__ours)"})
	if !strings.Contains(out, `"[]"`) {
		t.Fatalf("the page's own world saw calls of the server's:\n%s", out)
	}
	// The wrappers work: a call from the page's world is seen.
	out = must(t, c, "browser_evaluate", map[string]any{"function": "() => { navigator.userAgent; return JSON.stringify(window.__ours) }"})
	if !strings.Contains(out, `userAgent`) {
		t.Fatalf("the page's wrappers do not count calls:\n%s", out)
	}
}

// timerIDsPage runs a chain of timers and counts the ids it did not make:
// a window's worlds share its timer ids, so a page sees a timer of another
// world as a gap between its own.
const timerIDsPage = `<!doctype html><title>Timers</title>
<button onclick="document.getElementById('out').textContent = 'Pressed ' + (++window.presses)">Press</button>
<p id="out">Not pressed</p>
<input aria-label="Name"><select aria-label="Pick"><option>a</option><option>b</option></select>
<label><input type="checkbox"> Agree</label>
<script>
window.presses = 0; window.gaps = 0;
let last = setTimeout(function tick() {
  const id = setTimeout(tick, 10);
  if (id !== last + 1) window.gaps += id - last - 1;
  last = id;
}, 10);
</script>`

// TestServerLeavesNoTimerIDs: the server's actions, reads and snapshots
// make no timer of the page's window (its read after an action yields to
// the page's queued tasks through a message channel of its own world). A
// page that checks its timer ids follow one another sees no gap; a timer
// of anyone else's is seen.
func TestServerLeavesNoTimerIDs(t *testing.T) {
	url := htmlPage(t, timerIDsPage)
	c, _ := inProcess(t)
	snap := must(t, c, "browser_navigate", map[string]any{"url": url}, "Timers")
	for i := 1; i <= 3; i++ {
		must(t, c, "browser_click", map[string]any{"element": "Press", "target": refFor(t, snap, `button "Press"`)}, fmt.Sprintf("Pressed %d", i))
	}
	must(t, c, "browser_type", map[string]any{"element": "Name", "target": refFor(t, snap, `textbox "Name"`), "text": "Ada"})
	must(t, c, "browser_hover", map[string]any{"element": "Press", "target": refFor(t, snap, `button "Press"`)})
	must(t, c, "browser_select_option", map[string]any{"element": "Pick", "target": refFor(t, snap, `combobox "Pick"`), "values": []any{"b"}})
	must(t, c, "browser_click", map[string]any{"element": "Agree", "target": refFor(t, snap, `checkbox "Agree"`)})
	must(t, c, "browser_press_key", map[string]any{"key": "Tab"})
	must(t, c, "browser_snapshot", map[string]any{})
	gaps := func() string {
		t.Helper()
		time.Sleep(50 * time.Millisecond) // a tick or more after the last call
		return must(t, c, "browser_evaluate", map[string]any{"function": "() => 'gaps=' + window.gaps"})
	}
	if out := gaps(); !strings.Contains(out, "gaps=0") {
		t.Fatalf("the page's timer ids skip ids the server's calls took:\n%s", out)
	}
	// The count works: one timer of the page's own, outside its chain.
	must(t, c, "browser_evaluate", map[string]any{"function": "() => { setTimeout(() => {}, 0) }"})
	if out := gaps(); !strings.Contains(out, "gaps=1") {
		t.Fatalf("the page does not see a timer outside its chain:\n%s", out)
	}
}

// htmlPage serves html at the URL it returns, for the test's life.
func htmlPage(t *testing.T, html string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, html)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
