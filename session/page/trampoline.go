package page

import (
	"context"
	"errors"
	"strings"
)

// detached wraps an agent's function (or expression) so that Playwright's
// evaluate runs it from a stack of its own. Playwright calls it from its
// UtilityScript (UtilityScript.evaluate, and an async frame of the script
// awaiting a promise), and a page that reads an error stack — the
// function's own, or one that a page function it calls creates — sees those
// frames: the best-known tell of Playwright. The wrapper returns a thenable
// instead; Playwright's await calls its then, which starts an async arrow
// that evaluates and calls the source after an await. Nothing awaits that
// arrow (its result goes through then's resolve), so the stack holds the
// agent's frames and the arrow's, and V8's async stack trace ends there.
// The await of undefined and the thenable make no call the page can see
// (no global, no prototype method); a promise the function returns is
// awaited in the arrow as UtilityScript awaits it (no lookup of its then,
// which a page may have patched), so the value is the same, a throw or a
// rejection becomes the same error, and a dialog the function opens still
// opens during the call. What stays is the eval origin of the compiled
// source ("eval at evaluate"): Playwright compiles it with an eval inside
// UtilityScript.evaluate.
//
// The source goes in a parenthesised expression, so a statement list
// ("const x = 1; x", which Playwright's eval takes) does not parse:
// evaluateDetached then runs the plain source.
func detached(fn string) string {
	return "(...args) => ({ then(resolve, reject) { (async () => { await undefined; try { const f = (" + fn + "\n); resolve(await (typeof f === 'function' ? f(...args) : f)); } catch (e) { reject(e); } })(); } })"
}

// parsesScript tells, in the isolated world (no call the page sees),
// whether src parses as an expression: "yes", "no" (a SyntaxError), or
// another answer when the world could not tell (a CSP without eval).
const parsesScript = `(src) => { try { new Function('return (' + src + '\n)'); return 'yes'; } catch (e) { return e instanceof SyntaxError ? 'no' : 'unknown'; } }`

// evaluateDetached runs fn through run, wrapped by detached. A SyntaxError
// is the wrapped form's own only when that form does not parse (then
// nothing of it ran, and the plain source runs for its own result or its
// own message); one the function threw while running is its answer.
func (t *Tab) evaluateDetached(ctx context.Context, fn string, run func(src string) (any, error)) (any, error) {
	wrapped := detached(fn)
	v, err := run(wrapped)
	var pe *PageError
	if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, "SyntaxError") {
		return v, err
	}
	if ok, cerr := t.Read(ctx, parsesScript, wrapped); cerr != nil || ok != "no" {
		return v, err
	}
	return run(fn)
}
