package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, wrappedAPIsPage)
	}))
	defer srv.Close()
	c, _ := inProcess(t, "--caps", "emulation,vision")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "Watcher")
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
