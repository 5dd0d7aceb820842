package session_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestSealedFramesWatched: a frame of another site (its own renderer,
// which the page's watch cannot read) has a watch of its own, so a page
// holding one that changed nowhere is served its last snapshot; what the
// frame does by itself — change its text, go to another document of its
// site, go to the page's own origin — still shows at the next snapshot, as
// does a change in a sandboxed frame (sealed too, but in the page's
// renderer: no watch of its own; walked at every snapshot). Each ends
// equal to a whole walk.
func TestSealedFramesWatched(t *testing.T) {
	var log mcptest.SyncBuffer
	s := startSessionWith(t, mcptest.SharedBrowser(t), &log)
	var mu sync.Mutex
	state := map[string]string{"ad": "one", "box": "one"}
	set := func(k, v string) {
		mu.Lock()
		state[k] = v
		mu.Unlock()
	}
	// A frame asks its server what to show every 100 ms, as a rotating ad
	// or a live widget does: "nav" sends it to another page of its site,
	// "home" to the page's own origin.
	poll := func(key string) string {
		return `<script>setInterval(async () => { const v = await (await fetch('/state?k=` + key + `')).text();
if (v === 'nav') location.replace('/ad2'); else if (v === 'home') location.replace(HOME + '/inner');
else if (document.getElementById('v').textContent !== v) document.getElementById('v').textContent = v; }, 100);</script>`
	}
	var home string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*") // the sandboxed frame's origin is opaque
		switch r.URL.Path {
		case "/state":
			mu.Lock()
			v := state[r.URL.Query().Get("k")]
			mu.Unlock()
			w.Write([]byte(v))
		case "/ad":
			w.Write([]byte(`<!doctype html><title>Ad</title><p>Ad says <span id="v">one</span></p><script>const HOME = '` + home + `';</script>` + poll("ad")))
		case "/ad2":
			w.Write([]byte(`<!doctype html><title>Ad 2</title><p>Second ad</p>`))
		case "/box":
			w.Write([]byte(`<!doctype html><title>Box</title><p>Box says <span id="v">one</span></p><script>const HOME = '';</script>` + poll("box")))
		case "/inner":
			w.Write([]byte(`<!doctype html><title>Inner</title><p>Inside now</p>`))
		case "/":
			w.Write([]byte(`<!doctype html><title>Framed</title><main><h1>Framed</h1><section aria-label="List"><ul id="l"><li>one</li></ul>
<button onclick="const li = document.createElement('li'); li.textContent = 'more'; document.getElementById('l').append(li); this.blur()">More</button></section>
<iframe title="Ad" src="` + strings.Replace(home, "127.0.0.1", "localhost", 1) + `/ad"></iframe>` + filler + `</main>`))
		case "/sandboxed":
			w.Write([]byte(`<!doctype html><title>Sandboxed</title><main><h1>Sandboxed</h1>
<iframe title="Box" sandbox="allow-scripts" src="/box"></iframe></main>`))
		}
	}))
	t.Cleanup(srv.Close)
	home = srv.URL

	// shows takes snapshots until one shows want (the frame's poll is on
	// its way), then checks it against a whole walk.
	shows := func(ctx context.Context, tab *page.Tab, what, want string) *page.Snapshot {
		t.Helper()
		var got *page.Snapshot
		testtier.Eventually(t, 10*time.Second, what+": a snapshot showing "+want, func() bool {
			got = aiSnapshot(ctx, t, tab)
			return strings.Contains(got.Text, want)
		})
		if _, err := tab.Evaluate(ctx, `() => 0`); err != nil { // the next snapshot walks the whole page
			t.Fatal(err)
		}
		if whole := aiSnapshot(ctx, t, tab).Text; got.Text != whole {
			t.Fatalf("%s: the snapshot differs from a whole walk:\n%s", what, lineDiff(got.Text, whole))
		}
		return got
	}
	// served reports whether, within 10 s, a snapshot was served as the
	// one before it (the page and its frames changed nowhere; a frame read
	// that a loaded machine made run out of time walks until the frame
	// answers again).
	served := func(ctx context.Context, tab *page.Tab) bool {
		last := aiSnapshot(ctx, t, tab)
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
			time.Sleep(150 * time.Millisecond)
			next := aiSnapshot(ctx, t, tab)
			if next == last {
				return true
			}
			last = next
		}
		return false
	}

	onPage(t, s, home+"/", func(ctx context.Context, tab *page.Tab) {
		shows(ctx, tab, "the first page", "Ad says one")
		if !served(ctx, tab) {
			t.Fatal("a page whose only change-free frame is of another site was never served its last snapshot: the frame is walked at every snapshot")
		}
		// A change beside the frame walks its part alone: the frame,
		// which changed nowhere, is not walked again.
		more, err := tab.LocateToAct(ctx, buttonRef(t, aiSnapshot(ctx, t, tab).Text, "More"))
		if err != nil {
			t.Fatal(err)
		}
		before := log.String()
		act(ctx, t, tab, more.Click(page.ClickOptions{}))
		shows(ctx, tab, "a change beside the frame", "]: more")
		m := regexp.MustCompile(`"parts":(\d+)[^\n]*walked only the parts that changed`).FindAllStringSubmatch(strings.TrimPrefix(log.String(), before), -1)
		if len(m) == 0 || m[0][1] != "1" {
			t.Fatalf("the change beside a frame that changed nowhere walked %v parts, want 1 (the list's); reasons: %v", m, noPartReasons(log.String()))
		}
		set("ad", "two")
		shows(ctx, tab, "the frame's own change", "Ad says two")
		if !served(ctx, tab) {
			t.Fatal("after the frame's change the page was never served its last snapshot")
		}
		set("ad", "nav")
		shows(ctx, tab, "the frame's navigation within its site", "Second ad")
		set("ad", "one")
	})
	onPage(t, s, home+"/", func(ctx context.Context, tab *page.Tab) {
		shows(ctx, tab, "the page again", "Ad says one")
		// Not a check (the first part asserts it): the frame's watch has a
		// mark, so the navigation below is seen by its own watch, not by a
		// frame read for the first time.
		served(ctx, tab)
		set("ad", "home")
		shows(ctx, tab, "the frame's navigation to the page's origin", "Inside now")
	})
	onPage(t, s, home+"/sandboxed", func(ctx context.Context, tab *page.Tab) {
		shows(ctx, tab, "a sandboxed frame", "Box says one")
		aiSnapshot(ctx, t, tab)
		set("box", "two")
		shows(ctx, tab, "the sandboxed frame's change", "Box says two")
	})
}

// TestBusyFrameOfAnotherSiteIsNotWaitedFor: a frame of another site whose
// own script holds its renderer (an ad's busy loop) made every snapshot
// wait out its 10 s bound, as Playwright's walk waits for each frame within
// the snapshot's one timeout. Its watch's read runs out of time instead;
// the walk then does not wait for it (the frame shows without content and
// the snapshot says so), and once the frame answers again it is walked as
// before.
func TestBusyFrameOfAnotherSiteIsNotWaitedFor(t *testing.T) {
	s := startSessionWith(t, mcptest.SharedBrowser(t), nil)
	var mu sync.Mutex
	busy := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/state":
			mu.Lock()
			b := busy
			mu.Unlock()
			if b {
				w.Write([]byte("busy"))
			}
		case "/ad":
			// Busy for 5 s, once, when its server says so. (once is
			// asked after the fetch too: on a loaded machine several
			// polls are in flight, and each would loop 5 s more.)
			w.Write([]byte(`<!doctype html><title>Ad</title><p>Ad text</p><script>let once = false;
setInterval(async () => { if (once) return; const st = await (await fetch('/state')).text(); if (once || st !== 'busy') return; once = true;
const t = Date.now(); while (Date.now() - t < 5000) {} }, 100);</script>`))
		case "/":
			w.Write([]byte(`<!doctype html><title>Busy frame</title><main><h1>Page text</h1>
<iframe title="Ad" src="` + strings.Replace("http://"+r.Host, "127.0.0.1", "localhost", 1) + `/ad"></iframe></main>`))
		}
	}))
	t.Cleanup(srv.Close)
	onPage(t, s, srv.URL+"/", func(ctx context.Context, tab *page.Tab) {
		testtier.Eventually(t, 10*time.Second, "a snapshot showing the frame's text", func() bool {
			return strings.Contains(aiSnapshot(ctx, t, tab).Text, "Ad text")
		})
		mu.Lock()
		busy = true
		mu.Unlock()
		time.Sleep(400 * time.Millisecond) // the frame's next poll starts its loop
		start := time.Now()
		snap := aiSnapshot(ctx, t, tab)
		took := time.Since(start)
		wantText(t, snap.Text, "Page text")
		if snap.FramesBusy != 1 || took >= 4*time.Second {
			t.Fatalf("a snapshot while another site's frame is busy: FramesBusy=%d, took %s (the frame is busy for 5 s; a walk that waits for it takes that long)", snap.FramesBusy, took)
		}
		if strings.Contains(snap.Text, "Ad text") {
			t.Fatalf("the busy frame's text is shown (the walk waited for it?):\n%s", snap.Text)
		}
		testtier.Eventually(t, 10*time.Second, "the frame, free again, walked again", func() bool {
			s := aiSnapshot(ctx, t, tab)
			return s.FramesBusy == 0 && strings.Contains(s.Text, "Ad text")
		})
	})
}
