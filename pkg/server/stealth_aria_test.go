package server_test

import (
	"testing"
)

// ariaRefsPage has a button in the document, one in an open and one in a
// closed shadow root, each of which writes its name when clicked; at load
// it logs an error whose name and stack note any reader after the log
// call (a DevTools client that enables the Runtime domain later gets the
// message replayed, and reads them then). Reads during the call are
// kept apart: Playwright's own session of the page, which has the Runtime
// domain on from the start, reads the error's name there.
const ariaRefsPage = `<!doctype html><title>ARIA refs</title>
<p id="out">none</p>
<button onclick="document.getElementById('out').textContent = 'clicked doc'">Doc button</button>
<div id="open"></div><div id="closed"></div>
<script>
window.__reads = []; window.__atLog = [];
let logging = false;
for (const [id, mode] of [['open', 'open'], ['closed', 'closed']]) {
  const r = document.getElementById(id).attachShadow({mode});
  const b = document.createElement('button');
  b.textContent = id[0].toUpperCase() + id.slice(1) + ' button';
  b.onclick = () => { document.getElementById('out').textContent = 'clicked ' + id; };
  r.appendChild(b);
}
const e = new Error('logged at load');
Object.defineProperty(e, 'stack', {configurable: true, get() { (logging ? window.__atLog : window.__reads).push('stack'); return 'Error: logged at load'; }});
const nameDesc = Object.getOwnPropertyDescriptor(Error.prototype, 'name');
Object.defineProperty(Error.prototype, 'name', {configurable: true, get() { (logging ? window.__atLog : window.__reads).push('name'); return nameDesc.value; }});
logging = true;
console.error(e);
logging = false;
</script>`

// TestARIARefsLeaveNoConsoleReplay: a click by an ARIA-mode ref (ax12)
// lands on its element in the document, an open shadow root and a closed
// one; for the first two the node is handed over with no Runtime.enable,
// so the error the page logged at load is not read again.
func TestARIARefsLeaveNoConsoleReplay(t *testing.T) {
	url := htmlPage(t, ariaRefsPage)
	c, _ := inProcess(t)
	must(t, c, "browser_navigate", map[string]any{"url": url}, "ARIA refs")
	reads := func() string {
		return evalResultString(t, must(t, c, "browser_evaluate", map[string]any{"function": "() => window.__reads.join(',')"}))
	}
	if out := reads(); out != "" {
		t.Fatalf("the logged error was read before the agent did anything:\n%s", out)
	}
	aria := must(t, c, "browser_snapshot", map[string]any{"mode": "aria"}, "Closed button")
	for _, b := range []struct{ name, want string }{
		{"Doc button", "clicked doc"},
		{"Open button", "clicked open"},
	} {
		must(t, c, "browser_click", map[string]any{"target": modeRef(t, aria, `button "`+b.name+`"`)})
		must(t, c, "browser_snapshot", map[string]any{}, b.want)
	}
	if out := reads(); out != "" {
		t.Errorf("a click by ARIA ref read the error the page logged (a Runtime.enable replay):\n%s", out)
	}
	// A closed shadow root's node still goes the old way: it is clicked.
	must(t, c, "browser_click", map[string]any{"target": modeRef(t, aria, `button "Closed button"`)})
	must(t, c, "browser_snapshot", map[string]any{}, "clicked closed")
	t.Logf("after the closed root's click, the page saw reads: %s", reads())
	t.Logf("reads during the log call: %s", evalResultString(t, must(t, c, "browser_evaluate", map[string]any{"function": "() => window.__atLog.join(',')"})))
}
