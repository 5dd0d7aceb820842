package session_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestWatchNeverHidesAChange: after an action that changed nothing (or
// nothing a walk shows: a new URL of the same document, inert changes) the
// last snapshot is served again (the same object: no new snapshot taken), and
// after an action that changed any one thing — an attribute, the title,
// a URL fragment a :target rule shows, an input's value or checked state, focus, a same-origin
// frame, a cross-process frame, a style rule, a popover, a shadow root, a
// :hover menu — a new snapshot is taken and shows it.
func TestWatchNeverHidesAChange(t *testing.T) {
	url := mcptest.ChangesPage(t)
	s := newContextSession(t)
	cases := []struct {
		name   string
		button string // clicked; "hover" hovers the menu
		check  func(t *testing.T, tab *page.Tab, text string)
	}{
		{"attribute", "#attr", func(t *testing.T, _ *page.Tab, text string) {
			wantLine(t, text, `button "Disclosure"`, "[expanded]")
		}},
		{"title", "#title", func(t *testing.T, tab *page.Tab, _ string) {
			if title, _ := tab.Title(t.Context()); title != "Retitled" {
				t.Errorf("title = %q, want Retitled", title)
			}
		}},
		{"hash a :target rule shows", "#hash", func(t *testing.T, tab *page.Tab, text string) {
			if !strings.HasSuffix(tab.URL(), "#moved") {
				t.Errorf("URL = %s, want #moved", tab.URL())
			}
			wantText(t, text, "Moved here")
		}},
		{"value", "#value", func(t *testing.T, _ *page.Tab, text string) {
			wantLine(t, text, `textbox "Field"`, "set by script")
		}},
		{"checked", "#check", func(t *testing.T, _ *page.Tab, text string) {
			wantLine(t, text, `checkbox "Agree"`, "[checked]")
		}},
		{"focus", "#focus", func(t *testing.T, _ *page.Tab, text string) {
			wantLine(t, text, `textbox "Other"`, "[active]")
		}},
		{"same-origin frame", "#same", func(t *testing.T, _ *page.Tab, text string) {
			wantText(t, text, "same-origin frame changed")
		}},
		{"cross-process frame", "#cross", func(t *testing.T, _ *page.Tab, text string) {
			wantText(t, text, "cross-site frame changed")
		}},
		{"style rule", "#cssom", func(t *testing.T, _ *page.Tab, text string) {
			if strings.Contains(text, "Visible until a rule hides it") {
				t.Errorf("the hidden paragraph is still in the snapshot:\n%s", text)
			}
		}},
		{"popover", "#popbtn", func(t *testing.T, _ *page.Tab, text string) {
			wantText(t, text, "Popover body")
		}},
		{"shadow root", "#shadow", func(t *testing.T, _ *page.Tab, text string) {
			wantText(t, text, "shadow changed")
		}},
		{":hover menu", "hover", func(t *testing.T, _ *page.Tab, text string) {
			wantText(t, text, "Hover item")
		}},
		{"data attribute a rule names", "#styled", func(t *testing.T, _ *page.Tab, text string) {
			if strings.Contains(text, "Panel text") {
				t.Errorf("the paragraph [data-shut] hides is still in the snapshot:\n%s", text)
			}
		}},
		{"class a rule hides by", "#classed", func(t *testing.T, _ *page.Tab, text string) {
			if strings.Contains(text, "Class panel text") {
				t.Errorf("the paragraph .shut hides is still in the snapshot:\n%s", text)
			}
		}},
		{"data attribute a shadow root's :host rule names", "#hostdata", func(t *testing.T, _ *page.Tab, text string) {
			if strings.Contains(text, "dimmable text") {
				t.Errorf("the paragraph :host([data-dim]) hides is still in the snapshot:\n%s", text)
			}
		}},
	}
	err := s.Do(t.Context(), func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		// load opens the page and takes its snapshot. Without cross, the
		// cross-site frame is removed first: with it the watch never serves
		// an old snapshot (it cannot enter the frame), and the other cases
		// would pass whatever the watch saw.
		load := func(t *testing.T, cross bool) *page.Snapshot {
			t.Helper()
			if _, err := tab.Navigate(ctx, url+"/"); err != nil {
				t.Fatalf("navigate: %v", err)
			}
			if !cross {
				if _, err := tab.Evaluate(ctx, `() => document.querySelector('iframe[title=cross]').remove()`); err != nil {
					t.Fatal(err)
				}
			}
			// The cross-site frame must have its document for the case
			// to mean anything.
			var snap *page.Snapshot
			testtier.EventuallyState(t, 10*time.Second, "the frames to load", func() (bool, string) {
				var err error
				if snap, err = tab.AISnapshot(ctx, page.SnapshotOptions{}); err != nil {
					t.Fatalf("snapshot: %v", err)
				}
				return (!cross || strings.Contains(snap.Text, "cross-site frame")) && strings.Contains(snap.Text, "same-origin frame"), "\n" + snap.Text
			})
			return snap
		}
		act := func(t *testing.T, what string) {
			t.Helper()
			if what == "hover" {
				el, err := tab.Locate(ctx, "text=Menu")
				if err != nil {
					t.Fatal(err)
				}
				if err := tab.Act(ctx, el.Hover()); err != nil {
					t.Fatal(err)
				}
				return
			}
			el, err := tab.Locate(ctx, what)
			if err != nil {
				t.Fatal(err)
			}
			if err := tab.Act(ctx, el.Click(page.ClickOptions{})); err != nil {
				t.Fatal(err)
			}
		}

		// take takes the tab's whole-page AI snapshot.
		take := func(t *testing.T) *page.Snapshot {
			t.Helper()
			return aiSnapshot(ctx, t, tab)
		}

		t.Run("unchanged page is served again", func(t *testing.T) {
			first := load(t, false)
			again := take(t)
			if again != first {
				t.Fatalf("an unchanged page was snapshotted again")
			}
			// Reading the page (its size, for a screenshot) keeps the base.
			if _, _, err := tab.InnerSize(ctx); err != nil {
				t.Fatal(err)
			}
			if read := take(t); read != first {
				t.Fatalf("reading the page's size was followed by a new snapshot")
			}
			act(t, "#noop")
			after := take(t)
			if after != first {
				t.Fatalf("a click that changed nothing was followed by a new snapshot")
			}
			// Changes no snapshot can show are not changes: a script and a
			// resource hint added to the head, data-* attributes no style
			// sheet names, a comment, classes no rule names (on the root
			// and the body) or whose rules only colour or fade. A snapshot
			// taken afresh agrees.
			act(t, "#noise")
			if quiet := take(t); quiet != first {
				t.Errorf("changes no snapshot can show were followed by a new snapshot (same text: %v)", quiet.Text == first.Text)
			}
			if _, err := tab.Evaluate(ctx, `() => 0`); err != nil {
				t.Fatal(err)
			}
			// (The click moved focus to its button: the mark is left out.)
			unmarked := func(s *page.Snapshot) string { return strings.ReplaceAll(s.Text, " [active]", "") }
			if fresh := take(t); fresh == first || unmarked(fresh) != unmarked(first) {
				t.Fatalf("a fresh snapshot after the inert changes differs from the one served:\n%s\n--- served ---\n%s", fresh.Text, first.Text)
			}
			// A new path and query (pushState, replaceState)
			// that no rule shows change nothing a walk shows either.
			before := take(t)
			act(t, "#route")
			if !strings.Contains(tab.URL(), "/route?tab=3") {
				t.Fatalf("URL = %s after the route button, want /route?tab=3", tab.URL())
			}
			if routed := take(t); routed != before {
				t.Errorf("a new URL of the same document was followed by a new snapshot (same text: %v)", unmarked(routed) == unmarked(before))
			}
			// Each kind of change, on this page, is seen.
			act(t, "#attr")
			changed := take(t)
			if changed == first {
				t.Fatal("an attribute change was served the old snapshot")
			}
			wantLine(t, changed.Text, `button "Disclosure"`, "[expanded]")
			// browser_evaluate may change what the watch cannot see.
			if _, err := tab.Evaluate(ctx, `() => 0`); err != nil {
				t.Fatal(err)
			}
			if next, err := tab.AISnapshot(ctx, page.SnapshotOptions{}); err != nil || next == changed {
				t.Fatalf("a snapshot after an evaluate was served from the watch (err %v)", err)
			}
		})

		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := load(t, c.name == "cross-process frame")
				act(t, c.button)
				after := take(t)
				if after == before {
					t.Fatalf("the change was hidden: the old snapshot was served")
				}
				c.check(t, tab, after.Text)
			})
		}

		// A sheet whose rules were replaced by as many others names
		// what the new ones name: the watch read the old ones for an
		// unstyled data-* attribute a moment before.
		t.Run("a sheet replaced by one of as many rules", func(t *testing.T) {
			load(t, false)
			act(t, "#swap")
			testtier.EventuallyState(t, 5*time.Second, "the replaced sheet's rule to hide the paragraph", func() (bool, string) {
				s := take(t)
				return !strings.Contains(s.Text, "Second panel text"), "\n" + s.Text
			})
		})

		t.Run("typing", func(t *testing.T) {
			load(t, false)
			fill := func(sel, text string) {
				el, err := tab.Locate(ctx, sel)
				if err != nil {
					t.Fatal(err)
				}
				if err := tab.Act(ctx, el.Fill(text)); err != nil {
					t.Fatal(err)
				}
			}
			// typedOnly fills sel with text and wants it recognised as
			// typing only. That needs the action's settle read, which a
			// loaded machine can miss (400 ms bound; the server then
			// takes a snapshot, as it should): up to two more fills, each
			// with a suffix, before it fails.
			typedOnly := func(sel, text, what string) {
				t.Helper()
				for attempt := 0; ; attempt++ {
					v := text
					if attempt > 0 {
						v = fmt.Sprintf("%s %d", text, attempt)
					}
					fill(sel, v)
					if tab.OnlyTyped(v) {
						return
					}
					if attempt == 2 {
						t.Fatalf("%s was not recognised (3 fills)", what)
					}
					t.Logf("%s was not recognised at fill %d (a settle read missed?): again", what, attempt+1)
				}
			}
			typedOnly("#quiet", "hello", "typing into a field with no other effect")
			typedOnly("#quiet", "hello again", "typing into the same field again")
			typedOnly("#field", "elsewhere", "typing into a second field")
			// The last snapshot no longer stands for the page.
			typed := take(t)
			wantLine(t, typed.Text, `textbox "Quiet"`, "hello again")
			wantLine(t, typed.Text, `textbox "Field"`, "elsewhere")
			fill("#live", "abc")
			if tab.OnlyTyped("abc") {
				t.Fatal("typing that changed the page (a live message) was taken for typing only")
			}
			wantText(t, take(t).Text, "3 chars")
			fill("#quiet", "other")
			if tab.OnlyTyped("not what was typed") {
				t.Fatal("a value that is not the typed text was taken for typing only")
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func wantText(t *testing.T, text, want string) {
	t.Helper()
	if !strings.Contains(text, want) {
		t.Errorf("snapshot lacks %q:\n%s", want, text)
	}
}

// wantLine wants a line of the snapshot that holds both what and mark.
func wantLine(t *testing.T, text, what, mark string) {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, what) && strings.Contains(l, mark) {
			return
		}
	}
	t.Errorf("no line with %s and %s in:\n%s", what, mark, text)
}

// TestWatchCountsAttributesItCannotTellUnstyled: a data-* attribute or a
// class the watch cannot tell unstyled is a change. Under a style sheet
// from another origin (whose rules a script cannot read) it may be what
// that sheet hides an element by; an element's own style attribute may
// read it with attr(); a rule may match any class ([class~=…]) or show the
// class attribute itself (content: attr(class)); a class may start an
// animation that hides its element once it ends; a custom element's closed
// shadow root may style its host by it (:host(.x)). Each page sets one on
// a key press (the pointer and the focus stay where they are, which the
// watch would also count): the next snapshot is taken afresh, and shows
// the change.
func TestWatchCountsAttributesItCannotTellUnstyled(t *testing.T) {
	testtier.BrowserTier(t)
	sheets := serveHTML(t, map[string]string{
		"/s.css": "#box[data-hide] p { display: none }",
		"/c.css": "#box.hide p { display: none }",
	})
	// The page is on 127.0.0.1, the sheets on localhost: another origin.
	other := strings.Replace(sheets, "127.0.0.1", "localhost", 1)
	const head = `<!doctype html><title>Styled attributes</title><link rel="icon" href="data:,">`
	const onKey = `<script>addEventListener('keydown', () => { document.getElementById('box').dataset.hide = 'none' })</script>`
	const onKeyClass = `<script>addEventListener('keydown', () => { document.getElementById('box').classList.add('hide') })</script>`
	const box = `<div id="box"><p>Box text</p></div>`
	gone := func(t *testing.T, text string) {
		if strings.Contains(text, "Box text") {
			t.Errorf("the paragraph the change hides is still in the snapshot:\n%s", text)
		}
	}
	pages := map[string]struct {
		html string
		want func(t *testing.T, text string)
	}{
		"/unreadable":        {head + `<link rel="stylesheet" href="` + other + `/s.css">` + box + onKey, gone},
		"/inline":            {head + `<div id="box" style="display: attr(data-hide type(<custom-ident>), block)"><p>Box text</p></div>` + onKey, gone},
		"/class-unreadable":  {head + `<link rel="stylesheet" href="` + other + `/c.css">` + box + onKeyClass, gone},
		"/class-any":         {head + `<style>[class~="hide"] p { display: none }</style>` + box + onKeyClass, gone},
		"/class-shown":       {head + `<style>#box::after { content: "as " attr(class) }</style>` + box + onKeyClass, func(t *testing.T, text string) { wantText(t, text, "as hide") }},
		"/class-animation":   {head + `<style>@keyframes out { to { visibility: hidden } } .hide p { animation: out 1ms forwards }</style>` + box + onKeyClass, gone},
		"/class-closed-host": {head + `<x-box id="box"><p>Box text</p></x-box><script>customElements.define('x-box', class extends HTMLElement { constructor() { super(); this.attachShadow({mode: 'closed'}).innerHTML = '<style>:host(.hide) { display: none }</style><slot></slot>'; } })</script>` + onKeyClass, gone},
	}
	srv := serveHTML(t, func() map[string]string {
		m := map[string]string{}
		for p, pg := range pages {
			m[p] = pg.html
		}
		return m
	}())
	s := newContextSession(t)
	for path, pg := range pages {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			onPage(t, s, srv+path, func(ctx context.Context, tab *page.Tab) {
				first := aiSnapshot(ctx, t, tab)
				wantText(t, first.Text, "Box text")
				act(ctx, t, tab, tab.PressKey("h"))
				// The animation ends (1 ms) well before the snapshot: its end
				// changes no node, so only the class can tell.
				time.Sleep(300 * time.Millisecond)
				after := aiSnapshot(ctx, t, tab)
				if after == first {
					t.Fatal("the change was served the old snapshot")
				}
				pg.want(t, after.Text)
			})
		})
	}
}

// TestWatchSeesAHoverRuleOfAReplacedSheet: a sheet whose one rule a key
// press replaces by a :hover rule (as many rules as before) makes hovering
// its menu a change: the next snapshot shows the item the rule reveals.
func TestWatchSeesAHoverRuleOfAReplacedSheet(t *testing.T) {
	testtier.BrowserTier(t)
	srv := serveHTML(t, map[string]string{"/": `<!doctype html><title>Replaced hover</title><link rel="icon" href="data:,">
<style>.sub2 { display: none }</style>
<div class="menu2"><span>Menu two</span><div class="sub2"><a href="#">Hover sub item</a></div></div>
<script>
const sheet = new CSSStyleSheet();
sheet.replaceSync('.unused { color: red }');
document.adoptedStyleSheets = [sheet];
addEventListener('keydown', () => sheet.replaceSync('.menu2:hover .sub2 { display: block }'));
</script>`})
	onPage(t, newContextSession(t), srv+"/", func(ctx context.Context, tab *page.Tab) {
		if first := aiSnapshot(ctx, t, tab); strings.Contains(first.Text, "Hover sub item") {
			t.Fatalf("the item shows before any hover:\n%s", first.Text)
		}
		act(ctx, t, tab, tab.PressKey("h"))
		// The new rule shows nothing yet: the page is as it was, and the
		// watch's base moves to now.
		aiSnapshot(ctx, t, tab)
		el, err := tab.Locate(ctx, "text=Menu two")
		if err != nil {
			t.Fatal(err)
		}
		act(ctx, t, tab, el.Hover())
		if after := aiSnapshot(ctx, t, tab); !strings.Contains(after.Text, "Hover sub item") {
			t.Fatalf("hovering a menu a replaced sheet's :hover rule opens was served the old snapshot:\n%s", after.Text)
		}
	})
}

// TestWatchSeesAnimationsThatMakeNoMutation: an animation changes what a
// snapshot shows with no mutation record. A toast's CSS animation that hides
// it is running at the first snapshot and ends later; a script's
// el.animate() starts and ends between two reads; a cancel() undoes a
// finished one. Each is seen; a page whose animations have all ended is
// served again.
func TestWatchSeesAnimationsThatMakeNoMutation(t *testing.T) {
	testtier.BrowserTier(t)
	srv := serveHTML(t, map[string]string{"/": `<!doctype html><title>Animations</title><link rel="icon" href="data:,">
<style>@keyframes out { to { visibility: hidden } } #toast { animation: out 4s forwards }</style>
<p id=toast>Saving draft</p>
<p id=note>Note stays</p>
<button id=fade>Fade</button> <button id=back>Back</button>
<script>
const note = document.getElementById('note');
document.getElementById('fade').onclick = () => setTimeout(() =>
  note.animate([{ visibility: 'visible' }, { visibility: 'hidden' }], { duration: 1, fill: 'forwards' }), 300);
document.getElementById('back').onclick = () => setTimeout(() => note.getAnimations().forEach(a => a.cancel()), 300);
</script>`})
	onPage(t, newContextSession(t), srv+"/", func(ctx context.Context, tab *page.Tab) {
		if first := aiSnapshot(ctx, t, tab); !strings.Contains(first.Text, "Saving draft") {
			t.Fatalf("the toast was gone before the first snapshot (a machine slower than its 4 s animation):\n%s", first.Text)
		}
		// until takes snapshots until one does (or does not) hold text.
		until := func(what string, holds bool) *page.Snapshot {
			t.Helper()
			var snap *page.Snapshot
			testtier.EventuallyState(t, 10*time.Second, what, func() (bool, string) {
				snap = aiSnapshot(ctx, t, tab)
				return strings.Contains(snap.Text, what) == holds, "\n" + snap.Text
			})
			return snap
		}
		until("Saving draft", false)
		// (That walk's base may have been read in the animation's last
		// moment: the next read walks again. The one after is served.)
		settled := aiSnapshot(ctx, t, tab)
		if again := aiSnapshot(ctx, t, tab); again != settled {
			t.Errorf("a page whose animation had ended was snapshotted again")
		}
		click := func(sel string) {
			el, err := tab.Locate(ctx, sel)
			if err != nil {
				t.Fatal(err)
			}
			act(ctx, t, tab, el.Click(page.ClickOptions{}))
		}
		click("#fade")
		until("Note stays", false)
		click("#back")
		until("Note stays", true)
	})
}

// serveHTML serves each path's text (CSS for a .css path) for the test's
// life and returns the server's URL.
func serveHTML(t *testing.T, pages map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".css") {
			w.Header().Set("Content-Type", "text/css")
		}
		fmt.Fprint(w, pages[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// onPage opens url in s's current tab and runs fn on the tab.
func onPage(t *testing.T, s *session.Session, url string, fn func(ctx context.Context, tab *page.Tab)) {
	t.Helper()
	err := s.Do(t.Context(), func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		if _, err := tab.Navigate(ctx, url); err != nil {
			return err
		}
		fn(ctx, tab)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// aiSnapshot takes the tab's whole-page AI snapshot.
func aiSnapshot(ctx context.Context, t *testing.T, tab *page.Tab) *page.Snapshot {
	t.Helper()
	s, err := tab.AISnapshot(ctx, page.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// act runs steps as one action on the tab.
func act(ctx context.Context, t *testing.T, tab *page.Tab, steps ...page.Step) {
	t.Helper()
	if err := tab.Act(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// TestWatchToldChangeIsWalkedAtOnce: a change the page makes on its own
// after a snapshot (when its server, polled, lets it) is told by the watch,
// and the next snapshot walks the page without reading it first (a part of
// the page cannot hold it: it is added at the start of the body, and the
// watch's tell says so). It shows
// the change, and the snapshot after it is served again (its base stands).
// When the page sets its title in a later task, that title is told too
// and the answer names it; as that change came after the base the watch
// marked, the next snapshot may walk once more, and the one after is
// served.
func TestWatchToldChangeIsWalkedAtOnce(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	var allowed atomic.Int32 // the items the page may have
	allowed.Store(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/allowed" {
			fmt.Fprint(w, allowed.Load())
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Told 1</title>
<p>Item 1</p>
<script>
setInterval(async () => {
  const allowed = Number(await (await fetch('/allowed')).text());
  const n = document.querySelectorAll('p').length + 1;
  if (n > allowed) return;
  const li = document.createElement('p'); li.textContent = 'Item ' + n; document.body.prepend(li);
  const retitle = () => { document.title = 'Told ' + n; };
  if (n === 3) setTimeout(retitle, 50); else retitle();
}, 30);
</script>`)
	}))
	t.Cleanup(srv.Close)
	const told = `"why":"the watch told of a change"`
	onPage(t, s, srv.URL+"/", func(ctx context.Context, tab *page.Tab) {
		for n := 2; n <= 3; n++ {
			item, title := fmt.Sprintf("Item %d", n), fmt.Sprintf("Told %d", n)
			before := aiSnapshot(ctx, t, tab)
			if strings.Contains(before.Text, item) {
				t.Fatalf("%s is there before the page may add it:\n%s", item, before.Text)
			}
			tells := strings.Count(log.String(), told)
			allowed.Store(int32(n))
			// Once the title reads so, the watch's tells (of the change,
			// then of a later title) went out before the answer.
			testtier.EventuallyState(t, 5*time.Second, "the page's own change", func() (bool, string) {
				got, _ := tab.Title(ctx)
				return got == title, got
			})
			snap := aiSnapshot(ctx, t, tab)
			wantText(t, snap.Text, item)
			if got := strings.Count(log.String(), told); got != tells+1 {
				t.Errorf("%s: %d snapshots walked on a tell, want 1", item, got-tells)
			}
			if got, _ := tab.Title(ctx); got != title {
				t.Errorf("%s: title %q after the told snapshot, want %q", item, got, title)
			}
			again := aiSnapshot(ctx, t, tab)
			if n == 3 {
				// The title came after the base the watch marked: the
				// next snapshot may walk once more.
				snap = again
				again = aiSnapshot(ctx, t, tab)
			}
			if again != snap {
				t.Errorf("%s: the snapshot after the told one was taken again, not served:\n%s", item, again.Text)
			}
		}
	})
}

// TestActOnARefThatWentDuringTheAction: an action on a ref that
// LocateToAct did not look up first (the page unchanged since its
// snapshot), whose element the page takes away as the pointer reaches it,
// times out waiting for it and then says that the ref went, as a ref looked
// up first would; and on a page the watch told changed since, LocateToAct
// looks a ref up itself, refusing one whose element went.
func TestActOnARefThatWentDuringTheAction(t *testing.T) {
	s := startSessionWith(t, mcptest.SharedBrowser(t), nil, func(c *session.Config) { c.ActionTimeout = 3 * time.Second })
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Vanishing</title>
<button onmouseenter="this.remove()">Vanish</button>
<button onclick="setTimeout(() => { document.querySelector('#gone').remove(); document.title = 'Removed'; }, 100)">Remove later</button>
<button id="gone">Removed</button>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		snap := aiSnapshot(ctx, t, tab)
		el, err := tab.LocateToAct(ctx, buttonRef(t, snap.Text, "Vanish"))
		if err != nil {
			t.Fatal(err)
		}
		err = tab.Act(ctx, el.Click(page.ClickOptions{}))
		if !errors.Is(err, page.ErrUnknownRef) || !strings.Contains(err.Error(), "not found in the current page snapshot") {
			t.Errorf("click on the vanishing button: %v, want the ref not found", err)
		}

		snap = aiSnapshot(ctx, t, tab)
		gone := buttonRef(t, snap.Text, "Removed")
		el, err = tab.Locate(ctx, "text=Remove later")
		if err != nil {
			t.Fatal(err)
		}
		act(ctx, t, tab, el.Click(page.ClickOptions{}))
		// The title changes in the task that removes the button (as in
		// TestWatchToldChangeIsWalkedAtOnce).
		testtier.EventuallyState(t, 5*time.Second, "the button to go", func() (bool, string) {
			title, _ := tab.Title(ctx)
			return title == "Removed", title
		})
		// Told of the change, LocateToAct looks the ref up, and refuses it
		// itself, before any action.
		if _, err := tab.LocateToAct(ctx, gone); !errors.Is(err, page.ErrUnknownRef) {
			t.Errorf("locate the removed button's ref: %v, want the ref not found", err)
		}
	})
}

// TestRefsStandAfterTyping: typing into a field and ticking a box change
// values, not what elements the page has, so the snapshot's refs still
// stand after them: the next action on another ref of it is not looked up
// first (as on an unchanged page), though a snapshot is walked anew to
// show the values. A change to the page's elements (a line the typing
// adds) ends that: the next ref is looked up, and one whose element went
// is refused before any action.
func TestRefsStandAfterTyping(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Typing</title>
<label>Name <input id="name"></label> <label><input type="checkbox"> Agree</label>
<label>Note <input id="note" oninput="if (this.value === 'add') { document.querySelector('#bye').remove(); document.body.append('Added') }"></label>
<button id="bye">Bye</button> <button>Send</button>`})
	const notLooked = `"message":"act: the ref's snapshot stands; not looked up"`
	ref := func(text, role, name string) string { t.Helper(); return refOf(t, text, role, name) }
	locate := func(ctx context.Context, tab *page.Tab, r string, lookedUp bool) *page.Element {
		t.Helper()
		before := strings.Count(log.String(), notLooked)
		el, err := tab.LocateToAct(ctx, r)
		if err != nil {
			t.Fatalf("locate %s: %v", r, err)
		}
		if got := strings.Count(log.String(), notLooked) == before; got != lookedUp {
			t.Fatalf("ref %s looked up first: %v, want %v", r, got, lookedUp)
		}
		return el
	}
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		snap := aiSnapshot(ctx, t, tab)
		act(ctx, t, tab, locate(ctx, tab, ref(snap.Text, "textbox", "Name"), false).Fill("Ada"))
		act(ctx, t, tab, locate(ctx, tab, ref(snap.Text, "checkbox", "Agree"), false).Check())
		locate(ctx, tab, ref(snap.Text, "button", "Send"), false)
		again := aiSnapshot(ctx, t, tab)
		if again == snap {
			t.Fatal("the snapshot after typing was served, not walked")
		}
		wantLine(t, again.Text, `textbox "Name"`, "Ada")
	})
	// The tab's second page: Playwright prefixes the main frame's refs
	// now (f1e3), which stand all the same.
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		snap := aiSnapshot(ctx, t, tab)
		bye := ref(snap.Text, "button", "Bye")
		if !strings.HasPrefix(bye, "f") {
			t.Fatalf("the second page's ref %s has no frame prefix: this test no longer covers prefixed refs of the main frame", bye)
		}
		act(ctx, t, tab, locate(ctx, tab, ref(snap.Text, "textbox", "Note"), false).Fill("add"))
		testtier.Eventually(t, 5*time.Second, "the watch to tell of the removal", func() bool {
			_, err := tab.LocateToAct(ctx, bye)
			return errors.Is(err, page.ErrUnknownRef)
		})
		locate(ctx, tab, ref(snap.Text, "button", "Send"), true)
		wantText(t, aiSnapshot(ctx, t, tab).Text, "Added")
	})
}

// TestKeptSelectorsFollowNames: a value typed into a field inside a
// checkbox's label is part of the checkbox's name, so the selector kept
// for the checkbox's ref (for the code an action prints, and recordings)
// is resolved again after the typing, though the refs still stand.
func TestKeptSelectorsFollowNames(t *testing.T) {
	s := newContextSession(t)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Names</title>
<label><input type="checkbox"> Remind me in <input type="text" value="5" aria-label="Days"> days</label>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		snap := aiSnapshot(ctx, t, tab)
		m := regexp.MustCompile(`checkbox "([^"]*)" \[ref=((?:f\d+)?e\d+)\]`).FindStringSubmatch(snap.Text)
		if m == nil || !strings.Contains(m[1], "5 days") {
			t.Fatalf("the checkbox is not named with the field's value: this test no longer covers it:\n%s", snap.Text)
		}
		box := m[2]
		if sel := selectorOf(ctx, t, tab, box); !strings.Contains(sel, "5 days") {
			t.Fatalf("the checkbox's selector does not name it: this test no longer covers kept selectors: %s", sel)
		}
		el, err := tab.LocateToAct(ctx, refOf(t, snap.Text, "textbox", "Days"))
		if err != nil {
			t.Fatal(err)
		}
		act(ctx, t, tab, el.Fill("10"))
		if sel := selectorOf(ctx, t, tab, box); strings.Contains(sel, "5 days") || !strings.Contains(sel, "10 days") {
			t.Errorf("after typing 10, the checkbox's selector is %s, want one with its new name", sel)
		}
	})
}

// TestAFieldKeepsItsSelectorAcrossItsOwnFill: a fill that changes nothing
// but the field's value keeps the field's own selector (its value is never
// part of its own name), not the selectors of others whose names hold it;
// a fill whose field also changed another field keeps none.
func TestAFieldKeepsItsSelectorAcrossItsOwnFill(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Fills</title>
<label><input type="checkbox"> Remind me in <input type="text" value="5" aria-label="Days"> days</label>
<input aria-label="Copy from" oninput="document.querySelector('#to').value = this.value"> <input id="to" aria-label="Copy to">`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		snap := aiSnapshot(ctx, t, tab)
		days, from := refOf(t, snap.Text, "textbox", "Days"), refOf(t, snap.Text, "textbox", "Copy from")
		box := regexp.MustCompile(`checkbox "[^"]*" \[ref=((?:f\d+)?e\d+)\]`).FindStringSubmatch(snap.Text)
		if box == nil {
			t.Fatalf("no named checkbox:\n%s", snap.Text)
		}
		count := func(ref string) int {
			n := 0
			for l := range strings.SplitSeq(log.String(), "\n") {
				if strings.Contains(l, `"message":"act: resolved the selector of a ref"`) && strings.Contains(l, `"ref":"`+ref+`"`) {
					n++
				}
			}
			return n
		}
		fill := func(ref, value string) {
			t.Helper()
			el, err := tab.LocateToAct(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			act(ctx, t, tab, el.Fill(value))
		}
		before := selectorOf(ctx, t, tab, days)
		selectorOf(ctx, t, tab, box[1])
		fill(days, "10")
		if after := selectorOf(ctx, t, tab, days); after != before || count(days) != 1 {
			t.Errorf("after a fill of the field alone its selector was resolved %d times (want 1, before the fill): %s, then %s", count(days), before, after)
		}
		if sel := selectorOf(ctx, t, tab, box[1]); count(box[1]) != 2 || !strings.Contains(sel, "10 days") {
			t.Errorf("the checkbox's selector, whose name holds the field's value, was resolved %d times (want 2: once more after the fill): %s", count(box[1]), sel)
		}
		selectorOf(ctx, t, tab, from)
		fill(from, "copied")
		selectorOf(ctx, t, tab, from)
		if n := count(from); n != 2 {
			t.Errorf("a fill that changed another field too kept the field's selector (resolved %d times, want 2)", n)
		}
	})
}

// TestRefsOfTheWholeSnapshotOutliveAPartOne: an AI snapshot of one element
// makes Playwright's ref map that element's. A ref of the page's whole
// snapshot outside it still acts (the page is walked whole again first),
// and a whole snapshot asked for after a part one is a new walk, not the
// last one served, whose refs act too.
func TestRefsOfTheWholeSnapshotOutliveAPartOne(t *testing.T) {
	s := newContextSession(t)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Parts</title>
<section id="a"><h2>A</h2><button onclick="this.textContent = 'A pressed'">Press A</button></section>
<section id="b"><h2>B</h2><button onclick="this.textContent = 'B pressed ' + (++window.n || (window.n = 1))">Press B</button></section>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		whole := aiSnapshot(ctx, t, tab)
		b := buttonRef(t, whole.Text, "Press B")
		snapshotOfA(ctx, t, tab)
		el, err := tab.LocateToAct(ctx, b)
		if err != nil {
			t.Fatalf("locate %s after a snapshot of #a: %v", b, err)
		}
		act(ctx, t, tab, el.Click(page.ClickOptions{}))

		snapshotOfA(ctx, t, tab)
		again := aiSnapshot(ctx, t, tab)
		if again == whole {
			t.Fatal("the whole snapshot after one of #a was served, not taken")
		}
		wantText(t, again.Text, "B pressed 1")
		el, err = tab.LocateToAct(ctx, buttonRef(t, again.Text, "B pressed 1"))
		if err != nil {
			t.Fatal(err)
		}
		act(ctx, t, tab, el.Click(page.ClickOptions{}))
		wantText(t, aiSnapshot(ctx, t, tab).Text, "B pressed 2")
	})
}

// TestAPartSnapshotLeavesTheWholeOneStanding: after an AI snapshot of part
// of an unchanged page, the page's last whole snapshot stands: it is served
// again, and a ref of it outside the part (in a shadow root too) acts with
// no lookup and no walk, found by the ref Playwright's walk left on its
// element. Once the page changed, an element it reused for other content
// (a re-rendered list keeps its nodes) is not acted on: the ref is gone.
func TestAPartSnapshotLeavesTheWholeOneStanding(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Parts</title>
<section id="a"><h2>A</h2><button onclick="this.textContent = 'A pressed'">Press A</button></section>
<section id="b"><button onclick="this.textContent = 'B pressed'">Press B</button><div id="host"></div>
<ul><li><button onclick="document.title = 'deleted ' + this.textContent">Delete first</button></li></ul></section>
<script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<button onclick="this.textContent = \'S pressed\'">Shadow</button>';</script>`})
	const unchecked = `"part_since":true,"time"`
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		whole := aiSnapshot(ctx, t, tab)
		snapshotOfA(ctx, t, tab)
		if again := aiSnapshot(ctx, t, tab); again != whole {
			t.Errorf("the whole snapshot of an unchanged page was walked again after a snapshot of a part")
		}
		for _, name := range []string{"Press B", "Shadow"} {
			whole := aiSnapshot(ctx, t, tab) // after the last click
			snapshotOfA(ctx, t, tab)
			before := strings.Count(log.String(), unchecked)
			el, err := tab.LocateToAct(ctx, buttonRef(t, whole.Text, name))
			if err != nil {
				t.Fatalf("locate %s after a snapshot of #a: %v", name, err)
			}
			if strings.Count(log.String(), unchecked) != before+1 {
				t.Errorf("%s was looked up after a snapshot of a part of an unchanged page", name)
			}
			act(ctx, t, tab, el.Click(page.ClickOptions{}))
		}
		again := aiSnapshot(ctx, t, tab)
		wantText(t, again.Text, "B pressed")
		wantText(t, again.Text, "S pressed")

		del := buttonRef(t, again.Text, "Delete first")
		snapshotOfA(ctx, t, tab)
		if _, err := tab.Evaluate(ctx, `() => { document.querySelector('li button').textContent = 'Delete second'; }`); err != nil {
			t.Fatal(err)
		}
		if el, err := tab.LocateToAct(ctx, del); err == nil {
			if err := tab.Act(ctx, el.Click(page.ClickOptions{})); err == nil {
				t.Errorf("a ref whose element now shows other content was acted on")
			}
		}
		if title, _ := tab.Evaluate(ctx, `() => document.title`); strings.HasPrefix(fmt.Sprint(title), "deleted") {
			t.Errorf("the reused element was clicked: %v", title)
		}
	})
}

// snapshotOfA takes an AI snapshot of the element #a, a section with a
// button "Press A": a snapshot of a part of the page.
func snapshotOfA(ctx context.Context, t *testing.T, tab *page.Tab) {
	t.Helper()
	a, err := tab.Locate(ctx, "#a")
	if err != nil {
		t.Fatal(err)
	}
	if text, err := a.AISnapshot(ctx, page.SnapshotOptions{}); err != nil || !strings.Contains(text, "Press A") {
		t.Fatalf("snapshot of #a: %v\n%s", err, text)
	}
}

// buttonRef is the ref of the button named name in snapshot text.
func buttonRef(t *testing.T, text, name string) string {
	t.Helper()
	return refOf(t, text, "button", name)
}

// refOf is the ref of the element of role named name in snapshot text (a
// main frame's ref of a tab's later page too: f1e3).
func refOf(t *testing.T, text, role, name string) string {
	t.Helper()
	m := regexp.MustCompile(role + ` "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=((?:f\d+)?e\d+)\]`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no ref for %s %q in:\n%s", role, name, text)
	}
	return m[1]
}

// selectorOf is the selector of the element ref names on tab, through the
// path an action takes (LocateToAct, then its selector for the code).
func selectorOf(ctx context.Context, t *testing.T, tab *page.Tab, ref string) string {
	t.Helper()
	el, err := tab.LocateToAct(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := el.Selector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// TestSnapshotAfterAScriptWalksAtOnce: after a script of the agent's the
// last snapshot does not stand (the watch cannot vouch for what a script
// did: here it rewrites a rule in place, which the watch sees only at its
// next read), so the next snapshot walks the page at once, without reading
// the watch first, and shows what the script did. The one after it reads
// the watch, which finds the rule edited since its base (the walk at once
// marked none) and walks once more, to the same text; the next is served.
func TestSnapshotAfterAScriptWalksAtOnce(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Script</title>
<style>.note { display: block }</style><p class="note">Shown until a script hides it</p><button>Stay</button>`})
	const walked = `"why":"the last snapshot does not stand"`
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		first := aiSnapshot(ctx, t, tab)
		wantText(t, first.Text, "Shown until a script hides it")
		if _, err := tab.Evaluate(ctx, `() => { document.styleSheets[0].cssRules[0].style.display = 'none'; }`); err != nil {
			t.Fatal(err)
		}
		before := strings.Count(log.String(), walked)
		snap := aiSnapshot(ctx, t, tab)
		if strings.Contains(snap.Text, "Shown until a script hides it") {
			t.Errorf("the snapshot after the script still shows what it hid:\n%s", snap.Text)
		}
		if got := strings.Count(log.String(), walked); got != before+1 {
			t.Errorf("%d snapshots walked without a read after the script, want 1", got-before)
		}
		again := aiSnapshot(ctx, t, tab)
		if again.Text != snap.Text {
			t.Errorf("the snapshot after that differs:\n%s\nwant\n%s", again.Text, snap.Text)
		}
		if third := aiSnapshot(ctx, t, tab); third != again {
			t.Errorf("the third snapshot was taken again, not served:\n%s", third.Text)
		}
	})
}

// TestWatchNeverServesAPageThatKeepsChanging: on a page whose own timer
// changes its text every 20 ms, every snapshot taken after the page moved
// on is a new one showing a later count, whichever way it was taken (the
// watch told of the change, or it was read first).
func TestWatchNeverServesAPageThatKeepsChanging(t *testing.T) {
	s := newContextSession(t)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>0</title>
<p id="n">Tick 0</p><script>let n = 0; setInterval(() => { document.getElementById('n').textContent = 'Tick ' + (++n); document.title = String(n); }, 20);</script>`})
	tick := regexp.MustCompile(`Tick (\d+)`)
	count := func(text string) int {
		t.Helper()
		m := tick.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no tick in:\n%s", text)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		last := aiSnapshot(ctx, t, tab)
		for i := range 12 {
			// The page's title is its count: wait until it is past the
			// last snapshot's.
			seen := count(last.Text)
			testtier.EventuallyState(t, 5*time.Second, "the page to tick on", func() (bool, string) {
				title, _ := tab.Title(ctx)
				n, err := strconv.Atoi(title)
				return err == nil && n > seen, title
			})
			snap := aiSnapshot(ctx, t, tab)
			if snap == last || count(snap.Text) <= seen {
				t.Fatalf("snapshot %d shows %q after %q: an old snapshot was served", i+1, tick.FindString(snap.Text), tick.FindString(last.Text))
			}
			last = snap
		}
	})
}

// TestARefsSelectorStandsWhileThePageDoes: the selector resolved for a ref
// of the last snapshot (the code section's) is the one a ref resolves to
// while the page has not changed; once the page changed (a second field of
// the same name), the ref's selector is resolved again and tells the two
// apart (Playwright's is then the label's field).
func TestARefsSelectorStandsWhileThePageDoes(t *testing.T) {
	s := newContextSession(t)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Fields</title>
<label>Name <input></label>
<button onclick="const i = document.createElement('input'); i.setAttribute('aria-label', 'Name'); document.body.append(i)">Add another</button>`})
	onPage(t, s, url+"/", func(ctx context.Context, tab *page.Tab) {
		snap := aiSnapshot(ctx, t, tab)
		name := refOf(t, snap.Text, "textbox", "Name")
		selector := func() string { t.Helper(); return selectorOf(ctx, t, tab, name) }
		const one = `internal:role=textbox[name="Name"i]`
		for i := range 2 {
			if sel := selector(); sel != one {
				t.Fatalf("selector %d of the only field: %q, want %q", i, sel, one)
			}
		}
		add, err := tab.LocateToAct(ctx, buttonRef(t, snap.Text, "Add another"))
		if err != nil {
			t.Fatal(err)
		}
		act(ctx, t, tab, add.Click(page.ClickOptions{}))
		if sel := selector(); sel == one {
			t.Errorf("selector of the first of two fields named Name: %q, which matches both", sel)
		}
	})
}

// labelsPage has n number fields, each in its label, a same-origin frame
// with two more, and a paragraph the page puts at the start of its body
// (a change no part holds) once its server lets it (polled). Its own
// timers run in a chain that counts the ids it did not make (gaps): a
// window's worlds share their timer ids.
func labelsPage(n int) string {
	p := strings.Replace(labelsPageNoFrame(n), `<div id="fields">`, `<iframe src="/frame"></iframe><div id="fields">`, 1)
	return strings.Replace(p, "document.getElementById('out').textContent = 'Changed ' + v;",
		"document.body.prepend(Object.assign(document.createElement('p'), {textContent: 'Changed ' + v}));", 1)
}

// labelsPageNoFrame is labelsPage without its frame, whose change (the
// paragraph's text) a part holds.
func labelsPageNoFrame(n int) string {
	return fmt.Sprintf(`<!doctype html><title>Labels</title>
<p id="out">Waiting</p><p id="late"></p><div id="fields"></div>
<script>
window.gaps = 0;
let seen = '0', late = performance.now() + 150;
setInterval(async () => {
  // A change of its own as it finishes loading, as pages make.
  if (late && performance.now() > late) { late = 0; document.getElementById('late').textContent = 'Loaded'; }
  const v = await (await fetch('/go')).text();
  if (v === seen) return;
  seen = v;
  document.getElementById('out').textContent = 'Changed ' + v; document.title = 'Changed ' + v;
}, 30);
let last = setTimeout(function tick() {
  const id = setTimeout(tick, 10);
  if (id !== last + 1) window.gaps += id - last - 1;
  last = id;
}, 10);
document.getElementById('fields').innerHTML = Array.from({length: %d}, (_, i) => '<label>Qty ' + i + ' <input type="number" value="' + i + '"></label>').join('');
</script>`, n)
}

// TestWatchLeavesLabelsToAPartWalk: on a page of 1,200 fields whose
// snapshots walk in parts, a change a part holds (a paragraph's text) is
// not followed by the watch asking every control for its labels (the part's
// walk asks only its own); a change no part holds (a paragraph added at the
// start of the body) still is; each snapshot shows its change.
func TestWatchLeavesLabelsToAPartWalk(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	var changes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			fmt.Fprint(w, changes.Load())
			return
		}
		fmt.Fprint(w, strings.Replace(labelsPageNoFrame(1200), "document.title = 'Changed ' + v;", "", 1))
	}))
	t.Cleanup(srv.Close)
	const asked = `"message":"watch: asked the page's form controls for their labels ahead of a walk"`
	const walkedParts = `"message":"snapshot: walked only the parts that changed"`
	onPage(t, s, srv.URL+"/", func(ctx context.Context, tab *page.Tab) {
		wantText(t, aiSnapshot(ctx, t, tab).Text, "Waiting")
		// Past the page's own late change (150 ms), then a read that asks
		// for parts before the change.
		time.Sleep(400 * time.Millisecond)
		aiSnapshot(ctx, t, tab)
		before, parts := strings.Count(log.String(), asked), strings.Count(log.String(), walkedParts)
		changes.Store(1)
		// Long past the page's quiet (40 ms) and a prime's 1,200 asks.
		time.Sleep(1500 * time.Millisecond)
		if n := strings.Count(log.String(), asked); n != before {
			t.Errorf("the watch asked the controls for their labels after a change a part holds")
		}
		wantText(t, aiSnapshot(ctx, t, tab).Text, "Changed 1")
		if strings.Count(log.String(), walkedParts) == parts {
			t.Fatalf("the snapshot after the paragraph's change walked the page, not its part")
		}
		before = strings.Count(log.String(), asked)
		if _, err := tab.Evaluate(ctx, `() => { const p = document.createElement('p'); p.textContent = 'Top'; document.body.prepend(p); }`); err != nil {
			t.Fatal(err)
		}
		if !testtier.Within(5*time.Second, func() bool { return strings.Count(log.String(), asked) > before }) {
			t.Fatalf("the watch asked for no labels after a change no part holds")
		}
		wantText(t, aiSnapshot(ctx, t, tab).Text, "Top")
	})
}

// TestWatchAsksForLabelsAheadOfAWalk: after a change the page made on its
// own, once it is quiet, the watch asks the form controls of a document
// with many of them (1,200 fields) for their labels, where Playwright's
// next walk would make Blink look for each; not those of a document with
// few (the frame's two); the page's timer ids show no gap; and the next
// snapshot, walked on the tell, shows the change.
func TestWatchAsksForLabelsAheadOfAWalk(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	var changes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/go":
			fmt.Fprint(w, changes.Load())
		case "/frame":
			fmt.Fprint(w, `<!doctype html><label>Note <input></label><button>Send</button>`)
		default:
			fmt.Fprint(w, labelsPage(1200))
		}
	}))
	t.Cleanup(srv.Close)
	const asked = `"message":"watch: asked the page's form controls for their labels ahead of a walk"`
	onPage(t, s, srv.URL+"/", func(ctx context.Context, tab *page.Tab) {
		first := aiSnapshot(ctx, t, tab)
		wantText(t, first.Text, "Waiting")
		wantLine(t, first.Text, `spinbutton "Qty 1199"`, "1199")
		// The watch asks at most once per read: a change the page made
		// as it finished loading, after the read the first snapshot used
		// (the navigation's), told and was asked for, and the page told of
		// nothing more until a read came. So each try reads first (a
		// snapshot), then changes the page. A read that reaches the page
		// after the change and before its quiet (late on a loaded machine)
		// ends that wait, as any read does: so up to three tries.
		var before int
		for try := 1; ; try++ {
			aiSnapshot(ctx, t, tab)
			before = strings.Count(log.String(), asked)
			changes.Store(int32(try))
			if testtier.Within(5*time.Second, func() bool { return strings.Count(log.String(), asked) > before }) {
				break
			}
			if try == 3 {
				t.Fatalf("the watch asked for no labels after any of %d changes, each after a read", try)
			}
		}
		var line string
		for l := range strings.SplitSeq(log.String(), "\n") {
			if strings.Contains(l, asked) {
				line = l
			}
		}
		if !strings.Contains(line, `"controls":1200`) {
			t.Errorf("the watch asked another number of controls than the document's 1,200 (the frame's two are too few to ask):\n%s", line)
		}
		snap := aiSnapshot(ctx, t, tab)
		wantText(t, snap.Text, "Changed")
		wantLine(t, snap.Text, `spinbutton "Qty 1199"`, "1199")
		gaps, err := tab.Evaluate(ctx, `() => window.gaps`)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(gaps) != "0" {
			t.Errorf("the page's timer ids skip %v ids: a timer of the watch's", gaps)
		}
	})
}

// TestWatchSeesWhatAnUnhoveredRuleHid: a base taken with nothing under the
// pointer (a fresh tab's first page, or a page of another site) does not
// read the :hover rules; when an
// action then points at something, a rule whose selector negates :hover
// (what it hid while nothing was hovered shows now) makes the next snapshot
// a new one that shows it, and one whose selectors all need an element
// under the pointer, none of which the pointer is on, leaves the last one
// served.
func TestWatchSeesWhatAnUnhoveredRuleHid(t *testing.T) {
	s := newContextSession(t)
	url := serveHTML(t, map[string]string{
		"/negated": `<!doctype html><title>Negated</title>
<style>.tip:not(:hover) .secret { display: none }</style>
<div class="tip"><button>Tip</button> <span class="secret">Secret text</span></div>`,
		"/plain": `<!doctype html><title>Plain</title>
<style>.menu:hover .sub { display: block } .sub { display: none }</style>
<div class="menu">Menu <span class="sub">Sub item</span></div><button>Nothing</button>`,
	})
	click := func(ctx context.Context, t *testing.T, tab *page.Tab, sel string) {
		t.Helper()
		el, err := tab.Locate(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		act(ctx, t, tab, el.Click(page.ClickOptions{}))
	}
	onPage(t, s, url+"/negated", func(ctx context.Context, tab *page.Tab) {
		first := aiSnapshot(ctx, t, tab)
		if strings.Contains(first.Text, "Secret text") {
			t.Fatalf("the hidden text shows before the pointer is on it:\n%s", first.Text)
		}
		click(ctx, t, tab, "text=Tip")
		after := aiSnapshot(ctx, t, tab)
		if after == first {
			t.Fatal("pointing at the element whose rule hid a text while nothing was hovered was served the old snapshot")
		}
		wantText(t, after.Text, "Secret text")
	})
	// Another site, so a new frame host with nothing under the pointer: a
	// same-site navigation keeps the frame host (the browser runs without
	// RenderDocument), and the pointer where the click on Tip left it, on
	// this page's Menu.
	onPage(t, s, strings.Replace(url, "127.0.0.1", "localhost", 1)+"/plain", func(ctx context.Context, tab *page.Tab) {
		first := aiSnapshot(ctx, t, tab)
		click(ctx, t, tab, "text=Nothing")
		if after := aiSnapshot(ctx, t, tab); after != first {
			t.Errorf("a click that changed nothing, on a page whose :hover rule needs another element under the pointer, was followed by a new snapshot:\n%s", after.Text)
		}
	})
}
