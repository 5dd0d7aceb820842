package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// evalValueCases are functions whose browser_evaluate answers are pinned
// in testdata/golden/evaluate.values.txt: however the function is run (by
// Playwright's evaluate from a stack of its own today, session/page's
// detached; over the tab's CDP session is planned, issue 24), its result
// and errors read the same.
var evalValueCases = []struct{ name, fn string }{
	{"integer", `() => 6 * 7`},
	{"large integer", `() => 2 ** 53`},
	{"float", `() => 1.5`},
	{"string", `() => 'a"b\n'`},
	{"undefined", `() => undefined`},
	{"null", `() => null`},
	{"NaN", `() => NaN`},
	{"Infinity", `() => [Infinity, -Infinity]`},
	{"negative zero", `() => -0`},
	{"bool", `() => true`},
	{"date", `() => new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 678))`},
	{"nested", `() => ({b: [1, {c: 'x'}], a: null, u: undefined})`},
	{"async", `async () => { await new Promise(r => setTimeout(r, 10)); return 'later' }`},
	{"promise", `() => Promise.resolve(7)`},
	{"expression", `document.title`},
	{"function keyword", `function () { return 1 + 1 }`},
	{"async function keyword", `async function () { return 3 }`},
	{"empty object", `() => ({})`},
	{"empty array", `() => []`},
	{"function value", `() => () => 1`},
	{"bigint", `() => 10n ** 20n`},
	{"regexp", `() => /a+b/i`},
	{"map", `() => new Map([['k', 1]])`},
	{"set", `() => new Set([1])`},
	{"error value", `() => new Error('boom')`},
	{"node", `() => document.body`},
	{"shared", `() => { const s = {k: 1}; return [s, s] }`},
	{"cycle", `() => { const o = {n: 1}; o.self = o; return o }`},
	{"symbol", `() => Symbol('s')`},
	{"url", `() => new URL('https://example.com/x')`},
	{"typed array", `() => new Uint8Array([1, 2])`},
	{"toJSON", `() => ({toJSON() { return 'j' }, x: 1})`},
	{"getter", `() => ({get g() { return 5 }})`},
	{"throws", `() => { throw new Error('nope') }`},
	{"throws string", `() => { throw 'plain' }`},
	{"rejects", `async () => { throw new TypeError('bad type') }`},
	{"syntax error", `() => {`},
	{"reference error", `() => notDefinedAnywhere`},
	// Statements are not an expression: the wrapped form does not parse,
	// and the plain source runs (once).
	{"statements", `window.__runs = (window.__runs || 0) + 1; const x = 2; x * 3`},
	{"trailing line comment", `() => 4 // the answer`},
	// A SyntaxError the function throws while running is its answer: it
	// is not run again.
	{"syntax error thrown", `() => { window.__runs = (window.__runs || 0) + 1; JSON.parse('{') }`},
	{"each ran once", `() => window.__runs`},
}

// TestEvaluateValuesGolden: browser_evaluate's answers (the Result
// section, or the error) for evalValueCases match the golden file.
func TestEvaluateValuesGolden(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Eval</title><p id=p>text</p>`)
	}))
	defer srv.Close()
	c, _ := inProcess(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "Eval")
	var b strings.Builder
	for _, tc := range evalValueCases {
		res := c.Call(t, "browser_evaluate", map[string]any{"function": tc.fn})
		out := mcptest.Text(res)
		if _, rest, ok := strings.Cut(out, "### Result\n"); ok {
			out = rest
		}
		if i := strings.Index(out, "\n### "); i >= 0 {
			out = out[:i]
		}
		fmt.Fprintf(&b, "== %s (error %v): %s\n%s\n", tc.name, res.IsError, tc.fn, strings.TrimRight(out, "\n"))
	}
	golden(t, "evaluate.values.txt", strings.TrimRight(b.String(), "\n"))
}
