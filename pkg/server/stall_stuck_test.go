package server_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// recoverBound is the bound the issue states: after a page that traps its
// tab, the next browser_navigate to a sane page succeeds within 15 s.
const recoverBound = 15 * time.Second

// stuckClient starts a server with a short navigation timeout (these tests
// are about the rule, not the default: a stall shows as a timeout of 20 s,
// beyond recoverBound) on the trapping pages, with the browser launched.
func stuckClient(t *testing.T) (*mcptest.Client, string) {
	t.Helper()
	srv := stuckPages(t)
	c, _ := inProcess(t, "--timeout-navigation", "20000")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + stuckSane}, saneText)
	return c, srv.URL
}

// recovers checks that the next navigation to the sane page succeeds within
// recoverBound and lands there (not on a page the trap navigated to after
// ours), and returns its answer.
func recovers(t *testing.T, c *mcptest.Client, base string) string {
	t.Helper()
	start := time.Now()
	out, isErr := within(t, c, recoverBound, "browser_navigate", map[string]any{"url": base + stuckSane})
	t.Logf("the next navigation answered in %.1fs", time.Since(start).Seconds())
	if isErr {
		t.Fatalf("navigate to a sane page after the trap failed:\n%s", out)
	}
	wantIn(t, "navigate to the sane page", out, saneText, "- Page URL: "+base+stuckSane+"\n")
	return out
}

// TestStuckTabRecovers (issue 29, item 6): after each page that traps its
// tab — a DOM of 200,000 elements built in one task, a print() loop, a
// fullscreen and history.back() loop, a script redirect loop, alert and
// confirm loops, a page that navigates itself every 10 ms, a main thread
// busy forever — the next browser_navigate to a sane page succeeds within
// 15 s; dialog loops stay escapable (browser_handle_dialog answers each,
// browser_navigate leaves them, saying the page's state was lost); every
// other call on such a tab gets a short clear answer, never a raw timeout.
func TestStuckTabRecovers(t *testing.T) {
	c, base := stuckClient(t)
	nav := func(t *testing.T, path string, d time.Duration) (string, bool) {
		t.Helper()
		return within(t, c, d, "browser_navigate", map[string]any{"url": base + path})
	}

	t.Run("200,000 elements built in one task", func(t *testing.T) {
		// The page takes most of the navigation timeout to build; what it
		// answers is not the point, that it answers is.
		nav(t, stuckHugeDOM, 30*time.Second)
		out, isErr := within(t, c, recoverBound, "browser_snapshot", nil)
		if !isErr {
			t.Fatalf("a snapshot of 200,000 buttons succeeded within the snapshot budget?\n%s", mcptest.Tail(out, 500))
		}
		wantNotIn(t, "snapshot", out, "Timeout 10000ms exceeded")
		// The renderer is still busy with the page (or the snapshot):
		// evaluate answers at once instead of waiting out its 30 s.
		within(t, c, 9*time.Second, "browser_evaluate", map[string]any{"function": "() => document.title"})
		recovers(t, c, base)
	})

	t.Run("print loop", func(t *testing.T) {
		nav(t, stuckPrintLoop, recoverBound)
		recovers(t, c, base)
	})

	t.Run("fullscreen and history.back loop", func(t *testing.T) {
		nav(t, stuckFullscreen, recoverBound)
		// The trap's queued traversals would take the tab back into it
		// after our navigation: its page is replaced instead.
		out := recovers(t, c, base)
		wantIn(t, "navigate away from a back-button trap", out, "kept moving through its own history", "was lost")
	})

	t.Run("script redirect loop", func(t *testing.T) {
		// It must not eat the navigation timeout (20 s here).
		out, isErr := nav(t, stuckRedirect, 10*time.Second)
		if !isErr {
			t.Fatalf("navigate into a redirect loop succeeded?\n%s", out)
		}
		wantIn(t, "navigate into a redirect loop", out, "keeps loading new documents by itself", "browser_navigate")
		recovers(t, c, base)
	})

	t.Run("alert loop", func(t *testing.T) {
		out, _ := nav(t, stuckAlertLoop, recoverBound)
		wantIn(t, "navigate to an alert loop", out, "### Modal state", `"alert" dialog with message "alert 0"`)
		for _, next := range []string{"alert 1", "alert 2"} {
			out, isErr := within(t, c, 5*time.Second, "browser_handle_dialog", map[string]any{"accept": true})
			if isErr {
				t.Fatalf("handle_dialog in an alert loop failed:\n%s", out)
			}
			wantIn(t, "handle_dialog", out, "Accepted", `"alert" dialog with message "`+next+`"`)
		}
		out = recovers(t, c, base)
		wantIn(t, "navigate away from an alert loop", out, "Dismissed", "kept opening dialogs", "page state", "was lost")
		wantNotIn(t, "navigate away from an alert loop", out, "### Modal state")
	})

	t.Run("confirm loop", func(t *testing.T) {
		out, _ := nav(t, stuckConfirmLoop, recoverBound)
		wantIn(t, "navigate to a confirm loop", out, `"confirm" dialog with message "Leave?"`)
		out, isErr := within(t, c, 5*time.Second, "browser_handle_dialog", map[string]any{"accept": false})
		if isErr {
			t.Fatalf("handle_dialog in a confirm loop failed:\n%s", out)
		}
		wantIn(t, "handle_dialog", out, "Dismissed", `"confirm" dialog with message "Leave?"`)
		out = recovers(t, c, base)
		wantIn(t, "navigate away from a confirm loop", out, "Dismissed", "page state")
	})

	t.Run("a page that navigates itself every 10 ms", func(t *testing.T) {
		nav(t, stuckSelfNav, recoverBound)
		// The server calls a page churning once it committed five
		// documents of its own within 2 s. On a loaded machine each
		// document takes longer to load than the page's 10 ms, and a
		// snapshot can land on one of the first before there are five
		// (one run in seven of the test command): it shows that
		// document, which is true. Within 10 s the answer is the churn.
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, isErr := within(t, c, 10*time.Second, "browser_snapshot", nil)
			if isErr {
				wantIn(t, "snapshot", out, "keeps loading new documents by itself", "browser_navigate")
				wantNotIn(t, "snapshot", out, "Timeout ")
				break
			}
			wantIn(t, "a snapshot between two of the page's documents", out, "Moves every 10 ms.")
			if time.Now().After(deadline) {
				t.Fatalf("a page that reloads every 10 ms still gave snapshots after 10 s:\n%s", out)
			}
		}
		recovers(t, c, base)
	})

	t.Run("a main thread busy forever: every call is bounded", func(t *testing.T) {
		nav(t, stuckBusy, recoverBound)
		out, isErr := within(t, c, 9*time.Second, "browser_snapshot", nil)
		if !isErr {
			t.Fatalf("snapshot of a busy page succeeded?\n%s", out)
		}
		wantIn(t, "snapshot", out, "not responding")
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"browser_evaluate", map[string]any{"function": "() => document.title"}},
			{"browser_click", map[string]any{"target": "h1"}},
		} {
			out, isErr := within(t, c, 8*time.Second, call.tool, call.args)
			if !isErr {
				t.Fatalf("%s on a busy page succeeded?\n%s", call.tool, out)
			}
			wantIn(t, call.tool, out, "not responding", "browser_navigate")
		}
		recovers(t, c, base)
	})

	t.Run("a page busy a while ago: a script that blocks it is bounded", func(t *testing.T) {
		// The page misses a probe (the snapshot says so), then answers
		// again; a function that then holds its main thread (as the
		// renderer's own work on a huge page does, between two probes)
		// ends as "not responding", not after evaluate's 30 s.
		// The page gets busy a second after the function ran, well after
		// evaluate's own answer (its read and its walk of the page), which
		// a busy page holds until it is free again. With 50 ms the
		// snapshots below found the page free in 2 of 19 runs on a loaded
		// machine (the runs 2 s shorter: the busy while was spent inside
		// evaluate).
		must(t, c, "browser_evaluate", map[string]any{"function": "() => { setTimeout(() => { const t = Date.now(); while (Date.now() - t < 12000) {} }, 1000); }"}, "")
		// The first snapshot may be served from the read that ended the
		// evaluate, before the page got busy.
		time.Sleep(1300 * time.Millisecond)
		within(t, c, 9*time.Second, "browser_snapshot", nil)
		out, isErr := within(t, c, 9*time.Second, "browser_snapshot", nil)
		if !isErr {
			t.Fatalf("snapshot of a busy page succeeded?\n%s", out)
		}
		testtier.Eventually(t, 25*time.Second, "the page to answer again after its busy while", func() bool {
			_, isErr := within(t, c, 8*time.Second, "browser_evaluate", map[string]any{"function": "() => 1"})
			return !isErr
		})
		out, isErr = within(t, c, 8*time.Second, "browser_evaluate", map[string]any{"function": "() => { for (;;) {} }"})
		if !isErr {
			t.Fatalf("a function that never returns succeeded?\n%s", out)
		}
		wantIn(t, "evaluate", out, "not responding", "browser_navigate")
		recovers(t, c, base)
	})
}

var currentTabRE = regexp.MustCompile(`- (\d+): \(current\) \[([^\]]*)\]`)

// TestCrashedRendererAnswersAtOnce (issue 29, item 7): 10,000 nested
// shadow roots crash Chromium's renderer (a real crash: the answers below
// come from the page's crash event). A navigation in flight answers "the
// page crashed" as soon as it happens, every time, never after the
// navigation timeout; a snapshot or an action on the crashed tab answers
// the same at once; the next navigation replaces the page in the same tab
// position and says its state was lost; an action that crashes the page
// answers the same.
func TestCrashedRendererAnswersAtOnce(t *testing.T) {
	c, base := stuckClient(t)
	// The crashing page opens in the second tab: its replacement must
	// keep that position.
	must(t, c, "browser_tabs", map[string]any{"action": "new"})
	crashed := func(t *testing.T, what, out string, isErr bool) {
		t.Helper()
		if !isErr {
			t.Fatalf("%s on a crashed page succeeded?\n%s", what, out)
		}
		wantIn(t, what, out, "the page crashed", "browser_navigate")
	}
	for round := range 2 {
		// The renderer dies 2-4 s into the load; the navigation
		// timeout is 20 s.
		out, isErr := within(t, c, 12*time.Second, "browser_navigate", map[string]any{"url": base + stuckShadowCrash})
		crashed(t, "navigate to the crashing page", out, isErr)
		out, isErr = within(t, c, 3*time.Second, "browser_snapshot", nil)
		crashed(t, "snapshot", out, isErr)
		out, isErr = within(t, c, 3*time.Second, "browser_click", map[string]any{"target": "h1"})
		crashed(t, "click", out, isErr)
		out, isErr = within(t, c, 3*time.Second, "browser_evaluate", map[string]any{"function": "() => 1"})
		crashed(t, "evaluate", out, isErr)
		out = recovers(t, c, base)
		wantIn(t, "navigate after the crash", out, "replaced", "the page had crashed", "page state")
		tabs := must(t, c, "browser_tabs", map[string]any{"action": "list"})
		if m := currentTabRE.FindStringSubmatch(tabs); m == nil || m[1] != "1" || m[2] != "Sane" {
			t.Fatalf("round %d: the replaced page is not the current tab 1:\n%s", round, tabs)
		}
	}
	// A crash while an action runs.
	out, isErr := within(t, c, 12*time.Second, "browser_evaluate", map[string]any{"function": `() => {
		let host = document.body;
		for (let i = 0; i < 10000; i++) { const d = document.createElement('div'); host.appendChild(d); host = d.attachShadow({mode: 'open'}); }
		host.textContent = 'deepest';
		return document.body.getBoundingClientRect().height;
	}`})
	crashed(t, "an evaluate that crashes the page", out, isErr)
	recovers(t, c, base)
}
