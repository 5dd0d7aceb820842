package session_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// splicePage is a page as apps are: a cart list with buttons, a table whose
// rows are named by their cells, a form with labels and a fieldset, cards a
// class hides, a list a framework re-renders whole, a link, a disclosure,
// a counter in the header, items added first in a list or two at once in
// the middle of one, style rules added as CSS-in-JS libraries add them (at
// the end of a sheet; one put first too); its Mutate button (in the footer, so focus moves
// there) makes one or two of those changes, picked by a seeded generator.
const splicePage = `<!doctype html><title>Splice</title>
<style>.gone { display: none } .tip::after { content: " (new)" } li.sel { font-weight: bold }</style><style id="emo"></style>
<header><nav aria-label="Main"><a href="/a">Home</a> <a href="/b">Docs</a></nav><span id="count">0 items</span></header>
<main>
<h1>Shop</h1>
<section aria-label="Cart"><h2>Cart</h2><ul id="cart"><li>Apple <button>Remove</button></li><li>Pear <button>Remove</button></li></ul></section>
<section aria-label="Prices"><table id="tbl"><caption>Prices</caption><tr><th>Item</th><th>Price</th></tr><tr><td>Apple</td><td>1</td></tr><tr><td>Pear</td><td>2</td></tr></table></section>
<form aria-label="Order"><label>Name <input id="name"></label><label><input type="checkbox" id="gift"> Gift</label>
<fieldset><legend>Ship</legend><div id="ship"><p>Standard</p></div></fieldset></form>
<div id="cards"><div class="card"><h3>Card one</h3><p>Text one</p><a href="/x">More one</a></div><div class="card"><h3>Card two</h3><p>Text two</p></div></div>
<ol id="steps"><li>One</li><li>Two</li><li>Three</li></ol>
<details id="det"><summary>More</summary><p>Hidden body</p></details>
<div id="app"><ul id="todos"><li>none yet</li></ul></div>
</main>
<footer><p id="status">Ready</p><button id="mutate">Mutate</button></footer>
<script>
let seed = SEED;
const rnd = n => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return (seed >>> 16) % n; };
const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa'];
const $ = id => document.getElementById(id);
const ops = [
  () => { const li = document.createElement('li'); li.innerHTML = words[rnd(6)] + ' <button>Remove</button>'; $('cart').append(li); },
  () => { const l = $('cart').children; if (l.length > 1) l[rnd(l.length)].remove(); },
  () => { const tds = $('tbl').querySelectorAll('td'); tds[rnd(tds.length)].textContent = String(rnd(100)); },
  () => { const r = $('tbl').insertRow(); r.innerHTML = '<td>' + words[rnd(6)] + '</td><td>' + rnd(9) + '</td>'; },
  () => { $('count').textContent = rnd(10) + ' items'; },
  () => { $('ship').innerHTML = '<p>' + words[rnd(6)] + '</p>'; },
  () => { const c = $('cards').children[rnd(2)]; c.classList.toggle('gone'); },
  () => { $('cards').querySelector('h3').textContent = 'Card ' + words[rnd(6)]; },
  () => { $('todos').innerHTML = Array.from({length: 1 + rnd(4)}, (_, i) => '<li><input type=checkbox> ' + words[(i + rnd(6)) % 6] + '</li>').join(''); },
  () => { const l = $('steps').children; l[rnd(l.length)].classList.toggle('tip'); },
  () => { document.querySelector('nav a').textContent = words[rnd(6)]; },
  () => { $('det').open = !$('det').open; },
  () => { $('status').textContent = 'Step ' + rnd(50); },
  () => { $('gift').checked = !$('gift').checked; },
  () => { $('name').value = words[rnd(6)]; },
  () => { const l = $('steps').children; l[rnd(l.length)].textContent = words[rnd(6)]; },
  () => { const li = document.createElement('li'); li.textContent = 'First ' + words[rnd(6)]; $('steps').prepend(li); },
  () => { const l = $('cart').children, mk = () => { const li = document.createElement('li'); li.innerHTML = words[rnd(6)] + ' <button>Remove</button>'; return li; };
    l[rnd(l.length)].before(mk(), mk()); },
  () => { const s = $('emo').sheet, k = 'css-' + rnd(1000); s.insertRule('.' + k + ' { display: none }', s.cssRules.length);
    const l = $('cart').children; l[rnd(l.length)].classList.add(k); },
  () => { const s = $('emo').sheet; s.insertRule('#steps li.tip { font-style: italic; visibility: ' + (rnd(2) ? 'hidden' : 'visible') + ' }', s.cssRules.length); },
  () => { const s = $('emo').sheet; s.insertRule('#count { color: red }', 0); },
  () => { const s = $('emo').sheet; if (s.cssRules.length) s.deleteRule(0); $('status').textContent = 'Step ' + rnd(50); },
  () => { for (const td of $('tbl').querySelectorAll('td')) td.textContent = String(rnd(100)); },
  () => { for (const li of $('steps').children) li.textContent = words[rnd(6)] + ' step'; },
];
window.done = [];
$('mutate').onclick = () => {
  if (window.only !== undefined) { ops[window.only](); done.push(String(window.only)); return; }
  const k = 1 + rnd(2); const did = []; for (let i = 0; i < k; i++) { const j = rnd(ops.length); did.push(j); ops[j](); } done.push(did.join('+'));
};
</script>`

// spliceHostilePage has what a part walk must not miss: a node moved from
// one list to another, text nodes changed in place, a clickable card (its
// pointer cursor reaches its content), names taken by aria-labelledby and by
// a label's for from elsewhere, a web component with a shadow root and a
// slot, a :has() rule a checkbox drives, a sibling's ::before a class sets,
// a select, the hidden attribute, aria-hidden, a keyed list a framework
// reorders by moving its nodes, focus moved into a field and lost to the
// page, a toast added to the body and taken away, a dialog added to it, a
// web component added (its shadow root attached as it is made), one whose
// definition comes late (its element upgraded in place: no record of it),
// a router's new URL (pushState) with the counter it renders, a line
// added beside an ad's frame (ADSRC: the frame's URL, another site's
// where a test gives one);
// its Mutate button sits in the body.
const spliceHostilePage = `<!doctype html><title>Hostile</title>
<style>.card { cursor: pointer } #cardp { cursor: default } li.on + li::before { content: "> " } HAS</style>
<header><h1 id="ttl">Board</h1><span id="badge">0</span></header>
<main>
<label for="far">Far label <b id="farb">one</b></label>
<ul id="la"><li>a1</li><li>a2</li><li>a3</li></ul><ul id="lb"><li>b1</li></ul>
<div class="card"><h3>Clickable card</h3><p id="cardp">Body</p></div>
<div role="group" aria-labelledby="glabel"><span id="glabel">Group label</span><button>In group</button></div>
<p><span id="ext">External label</span></p><button aria-labelledby="ext">X</button>
<x-card id="xc"><span slot="title">Slot title</span></x-card>
<div id="hasbox"><label><input type="checkbox" id="hb"> Show more</label><p class="more">More text</p></div>
<ol id="steps"><li>s1</li><li>s2</li><li>s3</li></ol>
<select id="sel" aria-label="Pick"><option>One</option><option>Two</option></select>
<p id="hid" hidden>Now visible</p>
<div id="keyed"><ul id="kl"><li>K1 <button>Edit</button></li><li>K2 <button>Edit</button></li><li>K3 <button>Edit</button></li></ul></div>
<section aria-label="Cards"><h3>Cards</h3><div id="xs"></div></section>
<section aria-label="Advert"><h3>Advert</h3><div id="adslot"><iframe src="ADSRC" title="Ad frame" width="200" height="60"></iframe></div></section>
<section aria-label="Late"><x-late id="xl"><span>Late light</span></x-late></section>
<input id="field" placeholder="Type">
</main>
<input id="far"><button id="mutate">Mutate</button>
<script>
customElements.define('x-card', class extends HTMLElement { constructor() { super();
  this.attachShadow({mode: 'open'}).innerHTML = '<section aria-label="X card"><h4><slot name="title"></slot></h4><p id="in">Inner</p></section>'; } });
let seed = SEED;
const rnd = n => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return (seed >>> 16) % n; };
const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa'];
const $ = id => document.getElementById(id);
const ops = [
  () => { const x = $('la').firstElementChild || $('lb').firstElementChild; (x.parentNode === $('la') ? $('lb') : $('la')).append(x); },
  () => { const l = $('la').lastElementChild; if (l) l.firstChild.data = words[rnd(6)]; },
  () => { $('cardp').textContent = words[rnd(6)]; },
  () => { $('glabel').textContent = 'Group ' + words[rnd(6)]; },
  () => { $('ext').firstChild.data = 'External ' + words[rnd(6)]; },
  () => { $('farb').textContent = words[rnd(6)]; },
  () => { $('xc').shadowRoot.getElementById('in').textContent = words[rnd(6)]; },
  () => { $('xc').querySelector('[slot]').textContent = 'Slot ' + words[rnd(6)]; },
  () => { $('hb').checked = !$('hb').checked; },
  () => { const l = $('steps').children; l[rnd(l.length)].classList.toggle('on'); },
  () => { $('sel').selectedIndex = 1 - $('sel').selectedIndex; },
  () => { $('hid').hidden = !$('hid').hidden; },
  () => { $('kl').append(...[...$('kl').children].reverse()); },
  () => { $('kl').children[rnd(3)].firstChild.data = 'K' + rnd(9) + ' '; },
  () => { $('field').focus(); },
  () => { document.activeElement.blur(); },
  () => { $('badge').textContent = String(rnd(99)); },
  () => { const t = document.querySelector('[role=status]'); if (t) t.remove(); else { const d = document.createElement('div'); d.setAttribute('role', 'status'); d.textContent = 'Saved'; document.body.append(d); } },
  () => { const b = $('lb'); b.getAttribute('aria-hidden') ? b.removeAttribute('aria-hidden') : b.setAttribute('aria-hidden', 'true'); },
  () => { $('ttl').textContent = 'Board ' + words[rnd(6)]; },
  () => { $('field').value = words[rnd(6)]; },
  () => { const d = document.createElement('div'); d.setAttribute('role', 'dialog'); d.setAttribute('aria-label', 'Modal ' + words[rnd(6)]);
    d.innerHTML = '<h2>Confirm</h2><p>Sure?</p><button>OK</button>'; document.body.append(d); },
  () => { const d = [...document.querySelectorAll('[role=dialog]')].at(-1); if (d) d.querySelector('p').textContent = 'Sure ' + words[rnd(6)] + '?'; },
  () => { $('cardp').innerHTML = words[rnd(6)] + ' <svg width="8" height="8" style="cursor: pointer"></svg>'; },
  () => { const x = document.createElement('x-card'); x.innerHTML = '<span slot="title">Added ' + words[rnd(6)] + '</span>'; $('xs').append(x); },
  () => { if (!customElements.get('x-late')) customElements.define('x-late', class extends HTMLElement { constructor() { super();
    this.attachShadow({mode: 'open'}).innerHTML = '<style>:host { display: block } ::slotted(span) { font-weight: bold }</style><p>Late inner</p><slot></slot>'; } });
    else $('xl').shadowRoot.querySelector('p').textContent = 'Late ' + words[rnd(6)]; },
  () => { history.pushState({}, '', '?view=' + words[rnd(6)] + '#v' + rnd(9)); $('badge').textContent = String(rnd(99)); },
  () => { const p = document.createElement('p'); p.textContent = 'Sponsored by ' + words[rnd(6)]; $('adslot').append(p); },
];
window.done = [];
$('mutate').onclick = () => {
  if (window.only !== undefined) { ops[window.only](); done.push(String(window.only)); return; }
  const k = 1 + rnd(2); const did = []; for (let i = 0; i < k; i++) { const j = rnd(ops.length); did.push(j); ops[j](); } done.push(did.join('+'));
};
</script>`

// filler is a section of enough text that a page holding it is worth
// walking in parts (page.partMinChars).
var filler = `<section aria-label="Reading"><ul>` + strings.Repeat(`<li>A line of reading that fills the page</li>`, 40) + `</ul></section>`

// TestASplicedSnapshotEqualsAWholeWalk: after each of many changes an app
// makes (seeded, one or two at a time, on the two pages above, one of them
// with a :has() rule), the snapshot the server answers — walked only where
// the page changed, where it can be — is the text a walk of the whole page
// gives right after, refs, focus marks and all; and many of them were
// walks of parts.
func TestASplicedSnapshotEqualsAWholeWalk(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	const rounds, seeds = 30, 4
	pages := map[string]string{}
	for i := range seeds {
		page := splicePage
		if i%2 == 1 {
			// The last one has a :has() rule, which no part can hold.
			page = strings.Replace(spliceHostilePage, "HAS", map[bool]string{false: "", true: "#hasbox:has(input:checked) .more { display: block } .more { display: none }"}[i == seeds-1], 1)
		}
		pages["/"+strconv.Itoa(i)] = strings.Replace(strings.Replace(page, "SEED", strconv.Itoa(7+i*31), 1), "</main>", filler+"</main>", 1)
	}
	url := serveHTML(t, pages)
	spliced := 0
	for seed := range seeds {
		onPage(t, s, url+"/"+strconv.Itoa(seed), func(ctx context.Context, tab *page.Tab) {
			aiSnapshot(ctx, t, tab)
			for i := range rounds {
				if spliceRound(ctx, t, tab, &log, fmt.Sprintf("page %d, round %d", seed, i)) {
					spliced++
				}
			}
		})
	}
	t.Logf("%d of %d snapshots walked only parts; reasons for the others: %v", spliced, rounds*seeds, noPartReasons(log.String()))
	if spliced < rounds*seeds/2 {
		t.Errorf("only %d of %d snapshots after a change walked only parts", spliced, rounds*seeds)
	}
}

// TestPartsAreWalkedOnlyWhereTheyHold: each change of the hostile page
// alone: those something outside their part would show (names taken by
// aria-labelledby or a label's for, focus lost to the page: the click's
// own focus, served with its mark off) walk the whole page, as does an icon with a pointer cursor put in the clickable card's
// paragraph (the page's walk drops it there, a walk of the paragraph alone
// keeps it); the others (the clickable card's text, under its pointer
// cursor, a node moved between lists, a shadow root's text, a slotted node,
// a checkbox, a select, a keyed list reordered, focus moved into a field,
// the banner's counter and heading, a toast and a dialog added at the end
// of the body, a change in that dialog, a web component added, one
// upgraded in place when its definition came, a new URL with a counter
// changed, a line added beside another site's ad frame, whose part holds
// the frame) walk only parts; all equal a whole walk. The page's sheet
// has :has(), :empty, validity and :focus rules that only colour, outline
// or space (no walk shows them): they refuse no part.
func TestPartsAreWalkedOnlyWhereTheyHold(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	const harmless = `#hasbox:has(input:checked) { outline: 1px solid; background-color: #eee } main:has(#hid:not([hidden])) h1 { color: red }
p:empty { border-color: red; margin: 2px } input:invalid { background: pink } #field:focus { outline-color: blue; box-shadow: 0 0 2px }`
	// The ad frame comes from localhost, the page from 127.0.0.1: another
	// site, in a renderer of its own.
	ad := strings.Replace(serveHTML(t, map[string]string{"/ad": `<!doctype html><p>Buy now</p><a href="/x">Offer</a>`}), "127.0.0.1", "localhost", 1) + "/ad"
	hostile := strings.NewReplacer("SEED", "3", "HAS", harmless, "ADSRC", ad, "</main>", filler+"</main>").Replace(spliceHostilePage)
	url := serveHTML(t, map[string]string{"/": hostile})
	whole := map[int]bool{3: true, 4: true, 5: true, 15: true, 23: true}
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		for op := range 28 {
			if _, err := tab.Evaluate(ctx, `(op) => { window.only = op; }`, op); err != nil {
				t.Fatal(err)
			}
			aiSnapshot(ctx, t, tab) // the page's whole walk: the base of the next
			if parts := spliceRound(ctx, t, tab, &log, fmt.Sprintf("change %d", op)); parts == whole[op] {
				t.Errorf("change %d: parts walked %v, want %v (log: %v)", op, parts, !whole[op], noPartReasons(log.String()))
			}
		}
	})
}

// TestARenamedOrInsertedElementIsItsOwnPart: a change of a table cell's
// text, a heading's or a link's changes the name, and so the ref, of the
// row, the heading or the link; the part walked is that element alone,
// found in the last snapshot by the ref it had, not the table or section
// around it. An item or a row added to a list or a table (at its end, at
// its start, two in its middle) is a part of its own, put beside its
// sibling's lines. Each snapshot equals a whole walk.
func TestARenamedOrInsertedElementIsItsOwnPart(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": strings.Replace(strings.Replace(splicePage, "SEED", "5", 1), "</main>", filler+"</main>", 1)})
	walked := regexp.MustCompile(`"parts":(\d+),"renamed":(\d+),"inserted":(\d+),"part_chars":(\d+)[^\n]*walked only the parts that changed`)
	type want struct {
		what                     string
		parts, renamed, inserted int
		chars                    int // at most
	}
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		for op, w := range map[int]want{
			2:  {"a cell's text", 1, 1, 0, 120},
			7:  {"a heading's text", 1, 1, 0, 120},
			10: {"a link's text", 1, 1, 0, 120},
			0:  {"an item added at the end of a list", 1, 0, 1, 160},
			3:  {"a row added to a table", 1, 0, 1, 160},
			16: {"an item added at the start of a list", 1, 0, 1, 120},
			17: {"two items added in the middle of a list", 2, 0, 2, 320},
		} {
			what := w.what
			// Focus on the Mutate button already: its click moves none.
			if _, err := tab.Evaluate(ctx, `(op) => { window.only = op; document.getElementById('mutate').focus(); }`, op); err != nil {
				t.Fatal(err)
			}
			aiSnapshot(ctx, t, tab)
			from := len(log.String())
			if !spliceRound(ctx, t, tab, &log, what) {
				t.Errorf("%s: the page was walked whole (log: %v)", what, noPartReasons(log.String()))
				continue
			}
			m := walked.FindStringSubmatch(log.String()[from:])
			if m == nil || m[1] != strconv.Itoa(w.parts) || m[2] != strconv.Itoa(w.renamed) || m[3] != strconv.Itoa(w.inserted) {
				t.Errorf("%s: walked as parts, renamed, inserted %v, want %d, %d, %d", what, m, w.parts, w.renamed, w.inserted)
				continue
			}
			// A row is two cells; the table's section is several rows.
			if n, _ := strconv.Atoi(m[4]); n > w.chars {
				t.Errorf("%s: the parts walked were %d characters, more than the elements", what, n)
			}
		}
	})
}

// TestManyChangesInOnePlaceWalkOnePart: more changes than parts are walked
// one by one (every price of a table rewritten, every step of a list
// renamed) walk the element that holds them all, not the page. Each equals
// a whole walk.
func TestManyChangesInOnePlaceWalkOnePart(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": strings.Replace(strings.Replace(splicePage, "SEED", "11", 1), "</main>", filler+"</main>", 1)})
	walked := regexp.MustCompile(`"parts":(\d+),[^\n]*walked only the parts that changed`)
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		// Enough rows and items first (an evaluate: the next snapshot is a
		// whole walk, the base of the round).
		for _, c := range []struct {
			op         int
			what, prep string
		}{
			{22, "every cell of a table rewritten", `while (document.getElementById('tbl').rows.length < 8) { const r = document.getElementById('tbl').insertRow(); r.innerHTML = '<td>Plum</td><td>3</td>'; }`},
			{23, "every item of a list renamed", `while (document.getElementById('steps').children.length < 7) { const li = document.createElement('li'); li.textContent = 'More'; document.getElementById('steps').append(li); }`},
		} {
			if _, err := tab.Evaluate(ctx, `(op) => { `+c.prep+` window.only = op; document.getElementById('mutate').focus(); }`, c.op); err != nil {
				t.Fatal(err)
			}
			aiSnapshot(ctx, t, tab)
			from := len(log.String())
			if !spliceRound(ctx, t, tab, &log, c.what) {
				t.Errorf("%s: the page was walked whole (log: %v)", c.what, noPartReasons(log.String()))
				continue
			}
			if m := walked.FindStringSubmatch(log.String()[from:]); m == nil || m[1] != "1" {
				t.Errorf("%s: walked as parts %v, want one", c.what, m)
			}
		}
	})
}

// TestFocusLostToThePageWalksOnlyTheChange: a button that takes itself
// away (a dialog's close button, a list item's delete) leaves focus on the
// body; the snapshot after it walks only the part that changed, takes the
// focus mark off the lines it was on and, where the body has a line of its
// own (more than one element in it), puts it there; where the body holds
// one element (an app's root), Playwright shows no body line and no mark.
// Each equals a whole walk.
func TestFocusLostToThePageWalksOnlyTheChange(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	const dialog = `<div role="dialog" aria-label="Notice"><p>Saved</p><button id="mutate">Close</button></div>`
	const script = `<script>window.done = []; document.getElementById('mutate').onclick = e => { done.push('close'); e.target.remove(); };</script>`
	pages := map[string]string{
		"/root": `<!doctype html><title>One root</title><div id="app"><h1>Inbox</h1>` + filler + dialog + `</div>` + script,
		"/body": `<!doctype html><title>Body</title><h1>Inbox</h1>` + filler + dialog + script,
	}
	url := serveHTML(t, pages)
	for path := range pages {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			onPage(t, s, url+path, func(ctx context.Context, tab *page.Tab) {
				// Focus on the button first, and a snapshot that shows it.
				if _, err := tab.Evaluate(ctx, `() => document.getElementById('mutate').focus()`); err != nil {
					t.Fatal(err)
				}
				if first := aiSnapshot(ctx, t, tab); !strings.Contains(first.Text, `button "Close" [active]`) {
					t.Fatalf("the focused button has no mark:\n%s", first.Text)
				}
				if !spliceRound(ctx, t, tab, &log, "a focused button taken away") {
					t.Errorf("the page was walked whole (log: %v)", noPartReasons(log.String()))
				}
			})
		})
	}
}

// TestAPartBesideAFrameThatNeverLoadedWalksThePage: a part that holds a
// frame is walked with the frame's document, which a frame whose server
// never answered does not have (an ad slot filled after the page's load
// from a server that hangs): the page is walked instead (its walk gives such
// frames a short budget), and the snapshot equals a whole walk.
func TestAPartBesideAFrameThatNeverLoadedWalksThePage(t *testing.T) {
	// Made first, so it is closed last, after the session: its one
	// request is then gone with the browser's connection.
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(func() { hang.CloseClientConnections(); hang.Close() })
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	src := strings.Replace(hang.URL, "127.0.0.1", "localhost", 1) + "/ad"
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Hung ad</title><h1>News</h1>` + filler +
		`<section aria-label="Advert"><h3>Advert</h3><div id="adslot"></div></section>
<button id="mutate">Mutate</button>
<script>window.done = []; let n = 0; document.getElementById('mutate').onclick = () => {
  const slot = document.getElementById('adslot');
  if (n++ === 0) { done.push('frame'); const f = document.createElement('iframe'); f.src = '` + src + `'; f.title = 'Ad frame'; slot.append(f); return; }
  done.push('line'); const p = document.createElement('p'); p.textContent = 'Sponsored ' + n; slot.append(p); };</script>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		aiSnapshot(ctx, t, tab)
		// The frame first (its empty first document is a new one: the
		// page is walked), then a line beside it, in the part that holds it.
		spliceRound(ctx, t, tab, &log, "an ad frame that never loads")
		if spliceRound(ctx, t, tab, &log, "a line beside an ad frame that never loaded") {
			t.Errorf("a part holding a frame that never loaded was walked alone")
		}
	})
}

// TestRulesAddedToASheetWalkParts: a style rule added to a sheet (as
// CSS-in-JS libraries add a component's rules: at the end, or among the
// others) that hides an item it gives its class, one that styles a list's
// items, or one put first among the rules, walks only the parts holding the
// elements it styles; a rule removed walks the page. Each snapshot equals
// a whole walk.
func TestRulesAddedToASheetWalkParts(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": strings.Replace(strings.Replace(splicePage, "SEED", "9", 1), "</main>", filler+"</main>", 1)})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		for _, c := range []struct {
			op    int
			what  string
			parts bool
		}{
			{9, "a class set on a step (its ::after shows)", true},
			{18, "a rule hiding the cart item it gives its class", true},
			{19, "a rule styling the marked steps", true},
			{20, "a rule put first among the rules", true},
			{21, "a rule removed", false},
		} {
			if _, err := tab.Evaluate(ctx, `(op) => { window.only = op; document.getElementById('mutate').focus(); }`, c.op); err != nil {
				t.Fatal(err)
			}
			aiSnapshot(ctx, t, tab)
			if parts := spliceRound(ctx, t, tab, &log, c.what); parts != c.parts {
				t.Errorf("%s: parts walked %v, want %v (log: %v)", c.what, parts, c.parts, noPartReasons(log.String()))
			}
		}
	})
}

// spliceRound clicks the page's Mutate button, takes the snapshot after
// it, and fails the test unless a whole walk right after gives the same
// text (without focus marks when it was served: a click that only moved
// focus to what it clicked, or to the page, is served the last snapshot,
// whose diff leaves focus out). It reports whether the snapshot walked
// only parts.
func spliceRound(ctx context.Context, t *testing.T, tab *page.Tab, log *mcptest.SyncBuffer, what string) bool {
	t.Helper()
	const walkedParts = "walked only the parts that changed"
	mutate, err := tab.Locate(ctx, "#mutate")
	if err != nil {
		t.Fatal(err)
	}
	before := strings.Count(log.String(), walkedParts)
	act(ctx, t, tab, mutate.Click(page.ClickOptions{}))
	got := aiSnapshot(ctx, t, tab).Text
	parts := strings.Count(log.String(), walkedParts) > before
	did, err := tab.Evaluate(ctx, `() => done.at(-1)`) // the next snapshot walks the whole page
	if err != nil {
		t.Fatal(err)
	}
	want := aiSnapshot(ctx, t, tab).Text
	if !parts {
		got, want = strings.ReplaceAll(got, " [active]", ""), strings.ReplaceAll(want, " [active]", "")
	}
	if got != want {
		t.Fatalf("%s (changes %v, parts walked: %v): the snapshot after the change differs from a whole walk:\n%s", what, did, parts, lineDiff(got, want))
	}
	return parts
}

// noPartReasons counts the reasons the debug log gives for no part.
func noPartReasons(log string) map[string]int {
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`"why":"([^"]+)"[^\n]*no part to walk`).FindAllStringSubmatch(log, -1) {
		out[m[1]]++
	}
	for _, m := range regexp.MustCompile(`"error":"([^"]{0,60})[^\n]*(does not fit|walk failed)`).FindAllStringSubmatch(log, -1) {
		out[m[1]]++
	}
	return out
}

// lineDiff shows the lines where got and want first differ.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	lo := max(0, i-3)
	return "got:\n" + strings.Join(g[lo:min(len(g), i+6)], "\n") + "\nwant:\n" + strings.Join(w[lo:min(len(w), i+6)], "\n")
}

// TestARefOutsideAPartActsAfterLaterChanges: after a snapshot that walked
// only a part, the page changes that part again by itself; an action on a
// ref outside it (whose snapshot no longer stands, so it is looked up), or
// on a ref aliased to it, still finds its element, though Playwright's ref
// map is the last part's.
func TestARefOutsideAPartActsAfterLaterChanges(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Later</title>
<main><section aria-label="A"><button onclick="this.textContent = 'A pressed'">Press A</button></section>
<section aria-label="B"><ul id="b"><li>one</li></ul>
<button onclick="const add = (t) => { const li = document.createElement('li'); li.textContent = t; document.getElementById('b').append(li); };
add('two'); setTimeout(() => { add('three'); document.title = 'three'; }, 300);">Add</button></section>` + filler + `</main>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		first := aiSnapshot(ctx, t, tab)
		press := buttonRef(t, first.Text, "Press A")
		add, err := tab.LocateToAct(ctx, buttonRef(t, first.Text, "Add"))
		if err != nil {
			t.Fatal(err)
		}
		before := strings.Count(log.String(), "walked only the parts that changed")
		act(ctx, t, tab, add.Click(page.ClickOptions{}))
		wantText(t, aiSnapshot(ctx, t, tab).Text, "two")
		if strings.Count(log.String(), "walked only the parts that changed") == before {
			t.Fatalf("the snapshot after the click walked the whole page; this test needs a part walk")
		}
		testtier.EventuallyState(t, 5*time.Second, "the page's later change", func() (bool, string) {
			title, _ := tab.Title(ctx) // no script of ours: the watch keeps its word
			return title == "three", title
		})
		// A ref an equal element took over (the tools layer aliases refs a
		// re-render replaced) is found the same way.
		tab.AliasRefs(map[string]string{"e999": press})
		if _, err := tab.LocateToAct(ctx, "e999"); err != nil {
			t.Fatalf("a ref aliased to one outside the part: %v", err)
		}
		el, err := tab.LocateToAct(ctx, press)
		if err != nil {
			t.Fatalf("the ref outside the part after a later change: %v", err)
		}
		act(ctx, t, tab, el.Click(page.ClickOptions{}))
		wantText(t, aiSnapshot(ctx, t, tab).Text, "A pressed")
	})
}

// savedPageMutator is a script put at the end of a saved page's body: a
// Mutate button there makes one seeded change of the kinds pages make, on
// an element picked at random among the page's own: a text node rewritten,
// a class that hides it toggled, a copy put after it, the element removed,
// an aria-label, title or hidden attribute set or taken away, a rule added
// at the end of a sheet (as CSS-in-JS does) for a class given to it, an item
// put into a list, a link's href changed.
const savedPageMutator = `<style id="fz">.fz-hide { display: none }</style><button id="mutate">Mutate</button>
<script>
let seed = SEED;
const rnd = n => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return (seed >>> 16) % n; };
const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'kappa'];
const pick = sel => { const all = [...document.body.querySelectorAll(sel || '*')].filter(e => !/^(script|style|template|noscript)$/.test(e.localName) && e.id !== 'mutate' && e.id !== 'fz'); return all[rnd(all.length)]; };
const ops = [
  () => { const e = pick(); const t = [...e.childNodes].find(n => n.nodeType === 3 && n.data.trim()); if (t) t.data = words[rnd(6)] + ' '; },
  () => pick().classList.toggle('fz-hide'),
  () => { const e = pick(); e.after(e.cloneNode(true)); },
  () => pick().remove(),
  () => { const e = pick(); e.hasAttribute('aria-label') ? e.removeAttribute('aria-label') : e.setAttribute('aria-label', 'Label ' + words[rnd(6)]); },
  () => { const e = pick(); e.hasAttribute('title') ? e.removeAttribute('title') : e.setAttribute('title', 'Title ' + words[rnd(6)]); },
  () => { const s = document.getElementById('fz').sheet, k = 'fz-' + rnd(1000); s.insertRule('.' + k + ' { font-style: italic; visibility: ' + (rnd(2) ? 'visible' : 'hidden') + ' }', s.cssRules.length); pick().classList.add(k); },
  () => { const e = pick(); e.hidden = !e.hidden; },
  () => { const l = pick('ul, ol'); if (!l) return; const li = document.createElement('li'); li.innerHTML = '<a href="#' + rnd(99) + '">' + words[rnd(6)] + '</a>'; const c = l.children; c.length ? c[rnd(c.length)].before(li) : l.append(li); },
  () => { const a = pick('a[href]'); if (a) a.href = '#' + words[rnd(6)]; },
];
window.done = [];
document.getElementById('mutate').onclick = () => { const j = rnd(ops.length); ops[j](); done.push(String(j)); };
</script>`

// TestSplicedSnapshotsOfSavedPagesEqualWholeWalks: on the bench's saved
// pages (news, shop, docs, frames: six frames, one of them another
// origin's page), after each of many seeded changes of the kinds
// pages make (savedPageMutator), the snapshot the server answers equals a
// whole walk taken right after; some of them walked only parts.
func TestSplicedSnapshotsOfSavedPagesEqualWholeWalks(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	const rounds = 20
	pages := map[string]string{}
	names := []string{"news", "shop", "docs", "frames"}
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "bench", name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		pages["/"+name] = strings.Replace(string(b), "</body>", strings.Replace(savedPageMutator, "SEED", strconv.Itoa(11+i*17), 1)+"</body>", 1)
	}
	url := serveHTML(t, pages)
	// The frames page's widget comes from another origin (the same server
	// named by host name): a frame the watch cannot read.
	widget, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "widget.html"))
	if err != nil {
		t.Fatal(err)
	}
	pages["/widget.html"] = string(widget)
	pages["/frames"] = strings.Replace(pages["/frames"], `src="/widget.html"`, `src="`+strings.Replace(url, "127.0.0.1", "localhost", 1)+`/widget.html"`, 1)
	spliced := 0
	for _, name := range names {
		onPage(t, s, url+"/"+name, func(ctx context.Context, tab *page.Tab) {
			aiSnapshot(ctx, t, tab)
			for i := range rounds {
				if spliceRound(ctx, t, tab, &log, fmt.Sprintf("%s, round %d", name, i)) {
					spliced++
				}
			}
		})
	}
	t.Logf("%d of %d snapshots walked only parts; reasons for the others: %v", spliced, rounds*len(names), noPartReasons(log.String()))
	if spliced == 0 {
		t.Errorf("no snapshot of a saved page walked only parts")
	}
}

// TestPartsOnAPageWithFrames: a page with a same-origin frame, and one
// with another origin's frame as well. A change in the page outside the
// frames walks only its part (the watch reads the same-origin frame's
// document; the other origin's frame, which it cannot read, is walked
// again as a part of its own), and the snapshot equals a whole walk; a ref
// inside the same-origin frame from that snapshot still acts, and the
// frame's change it makes walks the page (a part cannot be inside a
// frame). On the page with the other origin's frame, a ref inside that
// frame acts too, its change shows through the frame's own walk, and a
// snapshot with nothing changed walks that frame again, not the page.
func TestPartsOnAPageWithFrames(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	other := serveHTML(t, map[string]string{"/ad": `<!doctype html><title>Ad</title><p>Buy now</p><button onclick="this.textContent = 'Ad pressed'">Ad button</button>`})
	// Another origin: the same loopback server, named by host name.
	other = strings.Replace(other, "127.0.0.1", "localhost", 1)
	frame := `<!doctype html><title>Inner</title><p>Inside the frame</p><button onclick="this.textContent = 'Frame pressed'">Frame button</button>`
	page1 := func(withForeign bool) string {
		foreign := ""
		if withForeign {
			foreign = `<iframe title="Ad" src="` + other + `/ad"></iframe>`
		}
		return `<!doctype html><title>Frames</title><main><section aria-label="List"><ul id="l"><li>one</li></ul>
<button onclick="const li = document.createElement('li'); li.textContent = 'two'; document.getElementById('l').append(li)">Add</button></section>
<iframe title="Inner" src="/inner"></iframe>` + foreign + filler + `</main>`
	}
	url := serveHTML(t, map[string]string{"/": page1(false), "/foreign": page1(true), "/inner": frame})
	const walkedParts = "walked only the parts that changed"
	// press clicks the button named name by its ref in text (a frame's
	// ref from a spliced snapshot), and gives the next snapshot, which
	// shows want, and whether it walked only parts.
	press := func(ctx context.Context, tab *page.Tab, path, text, name, want string) (*page.Snapshot, bool) {
		t.Helper()
		b, err := tab.LocateToAct(ctx, buttonRef(t, text, name))
		if err != nil {
			t.Fatalf("%s: %s by its ref after a part walk: %v", path, name, err)
		}
		before := strings.Count(log.String(), walkedParts)
		act(ctx, t, tab, b.Click(page.ClickOptions{}))
		s := aiSnapshot(ctx, t, tab)
		wantText(t, s.Text, want)
		return s, strings.Count(log.String(), walkedParts) > before
	}
	for _, path := range []string{"/", "/foreign"} {
		onPage(t, s, url+path, func(ctx context.Context, tab *page.Tab) {
			first := aiSnapshot(ctx, t, tab)
			wantText(t, first.Text, "Inside the frame")
			if path == "/foreign" {
				wantText(t, first.Text, "Buy now")
			}
			add, err := tab.LocateToAct(ctx, buttonRef(t, first.Text, "Add"))
			if err != nil {
				t.Fatal(err)
			}
			before := strings.Count(log.String(), walkedParts)
			act(ctx, t, tab, add.Click(page.ClickOptions{}))
			got := aiSnapshot(ctx, t, tab)
			wantText(t, got.Text, "two")
			parts := strings.Count(log.String(), walkedParts) > before
			if !parts {
				t.Fatalf("%s: the change beside the frames walked the whole page; reasons: %v", path, noPartReasons(log.String()))
			}
			whole := func(what string, got string) {
				t.Helper()
				if _, err := tab.Evaluate(ctx, `() => 0`); err != nil { // the next snapshot walks the whole page
					t.Fatal(err)
				}
				if want := aiSnapshot(ctx, t, tab).Text; got != want {
					t.Fatalf("%s: the snapshot %s differs from a whole walk:\n%s", path, what, lineDiff(got, want))
				}
			}
			whole("after the change", got.Text)
			if path == "/foreign" {
				// With nothing changed since that whole walk, in the page or
				// in the other origin's frame (whose watch says so), the
				// snapshot is that walk's.
				walked := aiSnapshot(ctx, t, tab)
				if again := aiSnapshot(ctx, t, tab); again != walked {
					t.Fatalf("%s: a snapshot with nothing changed was taken again (the other origin's frame walked)", path)
				}
				pressed, parts := press(ctx, tab, path, walked.Text, "Ad button", "Ad pressed")
				if !parts {
					t.Fatalf("%s: the change inside the other origin's frame walked the whole page", path)
				}
				whole("after the change inside the other origin's frame", pressed.Text)
				got = pressed
			}
			// A ref in the frame, from the spliced snapshot, acts.
			after, parts := press(ctx, tab, path, got.Text, "Frame button", "Frame pressed")
			if parts {
				t.Fatalf("%s: a change inside a frame was taken as a part", path)
			}
			whole("after the frame's change", after.Text)
		})
	}
}

// TestAChangeInAPreWalksItsSection: a pre, a dl or an address has no role
// of its own (generic), and Playwright's walk of one alone unwraps it when
// it holds one element, so such an element is never a part: a copy of a
// code block's code made, then hidden by a rule added for it (as the
// seeded saved-page test found on the docs page), still snapshots as a
// whole walk does (before, the pre's walk came back as its first code's
// line, which replaced only that line and left the hidden copy shown).
func TestAChangeInAPreWalksItsSection(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Pre</title><style id="fz"></style><main>
<section aria-label="Code"><h2>Hooks</h2><p>Send it so:</p><pre><code>curl -X POST /hooks</code></pre><p>Then wait.</p></section>` + filler + `</main>
<button id="copy" onclick="const c = document.querySelector('code'); c.after(c.cloneNode(true));">Copy</button>
<button id="hide" onclick="const s = document.getElementById('fz').sheet; s.insertRule('.fz-1 { visibility: hidden }', s.cssRules.length); document.querySelectorAll('code')[1].classList.add('fz-1');">Hide</button>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		aiSnapshot(ctx, t, tab)
		for _, id := range []string{"#copy", "#hide"} {
			b, err := tab.Locate(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			act(ctx, t, tab, b.Click(page.ClickOptions{}))
			got := aiSnapshot(ctx, t, tab).Text
			if _, err := tab.Evaluate(ctx, `() => 0`); err != nil { // the next snapshot walks the whole page
				t.Fatal(err)
			}
			if want := aiSnapshot(ctx, t, tab).Text; got != want {
				t.Fatalf("after %s the snapshot differs from a whole walk:\n%s", id, lineDiff(got, want))
			}
		}
		if !strings.Contains(log.String(), "walked only the parts that changed") {
			t.Fatalf("no snapshot walked a part (the section): the test no longer shows the fix")
		}
	})
}
