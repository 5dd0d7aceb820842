package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/tools"
)

// TestHardeningEvaluateResultCapped (issue 29, item 8): a huge evaluate
// result comes back cut to tools.MaxEvaluateChars with its whole size
// stated; with filename the whole value is saved as a file resource.
func TestHardeningEvaluateResultCapped(t *testing.T) {
	c, out := inProcess(t)
	const n = 5_000_000
	fn := fmt.Sprintf("() => 'x'.repeat(%d)", n)
	res := must(t, c, "browser_evaluate", map[string]any{"function": fn}, fmt.Sprintf("%d characters", n+2), "filename")
	if len(res) > tools.MaxEvaluateChars+2000 {
		t.Fatalf("the answer is %d characters, want about %d", len(res), tools.MaxEvaluateChars)
	}
	if !strings.Contains(res, `"`+strings.Repeat("x", tools.MaxEvaluateChars-1)) {
		t.Fatalf("the answer lacks the result's first %d characters:\n%.300s", tools.MaxEvaluateChars, res)
	}

	saved := c.Call(t, "browser_evaluate", map[string]any{"function": fn, "filename": "big.json"})
	link := fileLink(t, saved)
	if link.URI != tools.FileURIPrefix+"big.json" {
		t.Fatalf("link %+v", link)
	}
	st, err := os.Stat(filepath.Join(out, "big.json"))
	if err != nil || st.Size() != n+2 {
		t.Fatalf("big.json: %v, %v; want the whole %d-byte JSON string", st, err, n+2)
	}
	if text := mcptest.Text(saved); len(text) > 2000 {
		t.Fatalf("the answer with filename is %d characters", len(text))
	}
}

// TestHardeningTabCap (issue 29, item 8): a session has at most 32 tabs
// open (the default --max-tabs): the 33rd browser_tabs new is refused with a
// clear error, and a popup a page opens past the cap is closed at once.
func TestHardeningTabCap(t *testing.T) {
	c, _ := inProcess(t)
	must(t, c, "browser_navigate", map[string]any{"url": "data:text/html,<title>first</title>"}, "first")
	for range 31 {
		must(t, c, "browser_tabs", map[string]any{"action": "new"})
	}
	fails(t, c, "browser_tabs", map[string]any{"action": "new"}, "this session has 32 tabs open, its limit (--max-tabs); close one with browser_tabs action=close first")

	// A popup past the cap: the page sees its window closed.
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0})
	must(t, c, "browser_evaluate", map[string]any{"function": `() => new Promise(resolve => {
		const w = window.open('about:blank');
		if (!w) { resolve('blocked'); return; }
		const i = setInterval(() => { if (w.closed) { clearInterval(i); resolve('popup closed'); } }, 20);
	})`}, "popup closed")
	if list := must(t, c, "browser_tabs", map[string]any{"action": "list"}); strings.Count(list, "\n- ") != 32 {
		t.Fatalf("want 32 tabs:\n%s", list)
	}
	// One closed, one may open again.
	must(t, c, "browser_tabs", map[string]any{"action": "close", "index": 31})
	must(t, c, "browser_tabs", map[string]any{"action": "new"})
}

// TestHardeningConcurrentCallCap (issue 29, item 8): one session has at
// most 8 tool calls in flight (the default --max-concurrent-calls); a 9th is
// refused at once as busy, and the session serves normally once they end.
func TestHardeningConcurrentCallCap(t *testing.T) {
	mcptest.Chromium(t)
	_, tmp := serverEnv(t)
	t.Setenv("TMPDIR", tmp)
	var arrived atomic.Int32
	var released atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/arrive":
			arrived.Add(1)
		case "/released":
			if released.Load() {
				fmt.Fprint(w, "yes")
			}
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<title>calls</title><p>calls</p>")
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { released.Store(true) })
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--output-dir", filepath.Join(tmp, "out"))})
	c := h.Connect(t, mcptest.ConnectOptions{})
	must(t, c.Client, "browser_navigate", map[string]any{"url": srv.URL + "/"}, "calls")

	// Each call stays in flight until the test releases it (the page polls:
	// a held request would meet Chromium's 6 connections per host).
	hold := `async () => {
		await fetch('/arrive');
		while ((await (await fetch('/released')).text()) !== 'yes') await new Promise(r => setTimeout(r, 50));
		return 'released';
	}`
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			text, err := c.TryCall("browser_evaluate", map[string]any{"function": hold})
			if err == nil && !strings.Contains(text, "released") {
				err = fmt.Errorf("held call answered:\n%s", text)
			}
			errs <- err
		})
	}
	testtier.EventuallyState(t, 30*time.Second, "8 calls in flight", func() (bool, string) {
		return arrived.Load() == 8, fmt.Sprintf("%d arrived", arrived.Load())
	})
	res := c.Call(t, "browser_snapshot", nil)
	if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "already has 8 tool calls in flight") || !strings.Contains(text, "retry") {
		t.Fatalf("a 9th call: isError=%v:\n%s", res.IsError, text)
	}
	// Local tools are not counted.
	must(t, c.Client, "cloakbrowser_bridge_info", nil)

	released.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	must(t, c.Client, "browser_snapshot", nil, "calls")
}
