package mcptest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// changesPage has one button per kind of change a page can make without
// navigating; each changes only that (and the page makes no request of its
// own after load: no favicon). The cross-site frame is served from
// "localhost" while the page is on 127.0.0.1: another site, so Chromium
// puts it in another renderer process.
const changesPage = `<!doctype html><title>Changes</title><link rel="icon" href="data:,">
<style>
.menu .sub { display: none }
.menu:hover .sub { display: block }
.late-hidden { }
#pop { }
#panel[data-shut] p { display: none }
.is-loaded { color: #111 }
#panel.faded p { opacity: .5; transition: opacity .2s }
#cpanel.lg\:shut p { display: none }
#moved { display: none }
#moved:target { display: block }
</style>
<script>
function noise() {
  const s = document.createElement('script'); s.type = 'application/json'; s.textContent = '{}';
  document.head.append(s);
  s.textContent = '{"n":1}';
  const l = document.createElement('link'); l.rel = 'dns-prefetch'; l.href = '//127.0.0.1';
  document.head.append(l);
  document.body.dataset.seen = String(Date.now());
  document.body.append(document.createComment('marker'));
  document.getElementById('panel').dataset.track = 'x';
  document.documentElement.classList.add('fonts-ready');
  document.body.classList.add('is-loaded');
  document.getElementById('panel').classList.add('faded');
}
const swapped = new CSSStyleSheet();
swapped.replaceSync('.never-used { color: red }');
document.adoptedStyleSheets = [swapped];
function swapSheet() {
  document.body.dataset.seen = String(Date.now());
  setTimeout(() => {
    swapped.replaceSync('#panel2[data-gone] p { display: none }');
    document.getElementById('panel2').dataset.gone = '1';
  }, 50);
}
</script>
<button id="noop" onclick="void 0">Nothing</button>
<button id="attr" onclick="document.getElementById('exp').setAttribute('aria-expanded', 'true')">Attribute</button>
<button id="exp" aria-expanded="false">Disclosure</button>
<button id="title" onclick="document.title = 'Retitled'">Title</button>
<button id="hash" onclick="location.hash = 'moved'">Hash</button>
<button id="route" onclick="history.pushState({}, '', '/route?tab=2'); history.replaceState({}, '', '/route?tab=3')">Route</button>
<p id="moved">Moved here</p>
<button id="value" onclick="document.getElementById('field').value = 'set by script'">Value</button>
<input id="field" aria-label="Field">
<button id="check" onclick="document.getElementById('agree').checked = true">Check</button>
<input id="agree" type="checkbox" aria-label="Agree">
<button id="focus" onclick="document.getElementById('other').focus()">Focus</button>
<input id="other" aria-label="Other">
<button id="same" onclick="frames[0].document.body.textContent = 'same-origin frame changed'">Same frame</button>
<button id="cross" onclick="frames[1].postMessage('change', '*')">Cross frame</button>
<button id="cssom" onclick="document.styleSheets[0].insertRule('.late-hidden { display: none }', 0)">Style rule</button>
<button id="popbtn" popovertarget="pop">Popover</button>
<div id="pop" popover>Popover body</div>
<p class="late-hidden">Visible until a rule hides it</p>
<div class="menu"><span>Menu</span><div class="sub"><a href="#">Hover item</a></div></div>
<button id="shadow" onclick="document.getElementById('host').shadowRoot.querySelector('p').textContent = 'shadow changed'">Shadow</button>
<div id="host"></div>
<button id="noise" onclick="noise()">Noise</button>
<button id="styled" onclick="document.getElementById('panel').dataset.shut = '1'">Styled data</button>
<button id="hostdata" onclick="document.getElementById('host2').dataset.dim = '1'">Host data</button>
<button id="classed" onclick="document.getElementById('cpanel').classList.add('lg:shut')">Styled class</button>
<div id="panel"><p>Panel text</p></div>
<div id="cpanel"><p>Class panel text</p></div>
<div id="host2"></div>
<button id="swap" onclick="swapSheet()">Swap sheet</button>
<div id="panel2"><p>Second panel text</p></div>
<button id="fetched" onclick="fetch('/items').then(r => r.json()).then(j => setTimeout(() => { document.getElementById('loaded').textContent = 'Loaded ' + j.items.join(',') }, 30))">Fetch</button><p id="loaded"></p>
<button id="deferred" onclick="const n = window.deferredClicks = (window.deferredClicks || 0) + 1; setTimeout(() => { document.getElementById('later').textContent = 'Deferred ' + n }, 0)">Deferred</button><p id="later"></p>
<script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<p>shadow text</p>';
document.getElementById('host2').attachShadow({mode: 'open'}).innerHTML = '<style>:host([data-dim]) p { display: none }</style><p>dimmable text</p>';</script>
<iframe srcdoc="<p>same-origin frame</p>" title="same"></iframe>
<iframe src="CROSS" title="cross"></iframe>
<label>Live <input id="live" oninput="document.getElementById('msg').textContent = this.value.length + ' chars'"></label><span id="msg"></span>
<label>Quiet <input id="quiet"></label>
`

const crossFrame = `<!doctype html><p>cross-site frame</p>
<script>addEventListener('message', () => { document.querySelector('p').textContent = 'cross-site frame changed' })</script>`

// ChangesPage serves changesPage at URL+"/" for the test's life and returns
// URL (http://127.0.0.1:port). Its buttons (by id): #noop, #attr, #title,
// #hash (a fragment a :target rule shows "Moved here" by), #route (a
// pushState and a replaceState to another path and query, which
// no rule shows), #value, #check, #focus, #same, #cross, #cssom, #popbtn, #shadow,
// #noise (changes no snapshot can show: a script and a resource hint in the
// head, data-* attributes no style sheet names, a comment, classes no rule
// names or whose rules only colour or fade), #styled (a data-* attribute a
// rule hides "Panel text" by), #classed (a class a rule hides "Class panel
// text" by, its name escaped in the rule: lg\:shut), #hostdata (one a shadow
// root's :host rule hides "dimmable text" by), #swap (an unstyled data-*
// attribute, then 50 ms later an adopted sheet's one rule replaced by one
// that hides "Second panel text" by a data-* attribute it then sets),
// #fetched (fetches /items, then renders "Loaded alpha,beta" 30 ms later),
// #deferred (its handler leaves "Deferred N", N its clicks, to a zero timer);
// hovering the text "Menu" shows "Hover item"; #live echoes its length
// ("3 chars") as it is typed into, #quiet does nothing.
func ChangesPage(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	var base string
	mux.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"items":["alpha","beta"]}`) })
	mux.HandleFunc("/frame", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, crossFrame) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Replace(changesPage, "CROSS", strings.Replace(base, "127.0.0.1", "localhost", 1)+"/frame", 1))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	return base
}
