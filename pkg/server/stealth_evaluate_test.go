package server_test

import (
	"strings"
	"testing"
)

// TestEvaluateValuesAsUpstream: browser_evaluate over the tab's CDP session
// (no Playwright evaluate) answers values as Playwright returns them.
func TestEvaluateValuesAsUpstream(t *testing.T) {
	srv := toolPages(t)
	c, _ := inProcess(t)
	snap := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/detector.html"}, "Detector")
	cases := []struct{ fn, want string }{
		{"() => 42", "42"},
		{"() => 1.5", "1.5"},
		{"() => 'hi'", `"hi"`},
		{"() => true", "true"},
		{"() => null", "null"},
		{"() => undefined", "null"},
		{"() => NaN", "NaN"},
		{"() => -Infinity", "-Infinity"},
		{"() => [1, 'a', null, [true]]", "[\n  1,\n  \"a\",\n  null,\n  [\n    true\n  ]\n]"},
		{"() => ({b: 1, a: {c: 'x'}, u: undefined, f() {}})", "{\n  \"a\": {\n    \"c\": \"x\"\n  },\n  \"b\": 1\n}"},
		{"() => new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))", `"2024-01-02T03:04:05.006Z"`},
		{"() => document.body", `"ref: \u003cNode\u003e"`},
		{"() => document", `"ref: \u003cDocument\u003e"`},
		{"async () => { await new Promise(r => setTimeout(r, 10)); return 'later' }", `"later"`},
		{"document.title", `"Detector"`},
		{"function () { return 7 }", "7"},
		{"async function named() { return 8 }", "8"},
		{"Promise.resolve(9)", "9"},
		{"() => { const o = {}; o.self = o; o.n = 1; return o }", "{\n  \"n\": 1,"},
	}
	for _, tc := range cases {
		out := must(t, c, "browser_evaluate", map[string]any{"function": tc.fn})
		if !strings.Contains(out, "### Result\n"+tc.want) {
			t.Errorf("%s: want %q in:\n%s", tc.fn, tc.want, out)
		}
	}
	fails(t, c, "browser_evaluate", map[string]any{"function": "() => { throw new Error('nope') }"}, "Error: nope")
	fails(t, c, "browser_evaluate", map[string]any{"function": "async () => { throw new TypeError('later nope') }"}, "TypeError: later nope")
	fails(t, c, "browser_evaluate", map[string]any{"function": "() => {"}, "SyntaxError")
	must(t, c, "browser_evaluate", map[string]any{"function": "(el) => el.textContent", "target": refFor(t, snap, `button "Press me"`)}, `"Press me"`)
	must(t, c, "browser_evaluate", map[string]any{"function": "(el) => el.textContent", "target": refFor(t, snap, `button "Shadow button"`)}, `"Shadow button"`)
	must(t, c, "browser_evaluate", map[string]any{"function": "(el) => el.id", "target": "#email"}, `"email"`)
}
