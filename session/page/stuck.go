package page

import (
	"context"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Leaving a page that does not let go. A navigation away from a page stops
// what holds it, in this order, each step bounded:
//
//   - a dialog of the page is dismissed, and so is every dialog the page
//     opens until the new document commits; a page that goes on opening
//     them (a loop of alerts, which no script stop ends) is stuck;
//   - a page that missed its last liveness probe has its script stopped
//     (Runtime.terminateExecution over the tab's own CDP session, attached
//     when the tab was made: nothing the page sees), stopTries times at
//     most (work queued behind a stopped script runs next), until it
//     answers; one that does not is stuck;
//   - while the new document has not committed, the page being left is
//     probed every commitGrace: one that does not answer has its script
//     stopped, and one that still does not answer is stuck;
//   - a stuck page (or a crashed one) is replaced: closed, and a new page
//     opened at the tab's position, which the navigation then loads. Its
//     state (history, scripts, session storage) is lost; cookies and local
//     storage belong to the browser context and stay.
//
// So a navigation away from a page that never yields ends in about
// leaveWorst plus the new page's own load, and never later than the
// navigation timeout.
const (
	// commitGrace is how long a navigation waits for its document to
	// commit before it asks whether the page being left still answers.
	commitGrace = time.Second
	// commitProbe bounds that question.
	commitProbe = 1500 * time.Millisecond
	// stopTries is how many times a busy page's script is stopped before
	// the page is declared stuck; stopProbe bounds each check after.
	stopTries = 2
	stopProbe = time.Second
	// dialogQuiet is how long a page whose dialog was dismissed must go
	// without opening another one to have stopped.
	dialogQuiet = 500 * time.Millisecond
	// replaceCloseTimeout bounds closing a stuck page before its
	// replacement opens; the close goes on in the background.
	replaceCloseTimeout = 2 * time.Second
	// leaveWorst is the longest a navigation spends on a page that does
	// not let go before it replaces it: stopping a busy page's script
	// (stopTries × (terminateTimeout + stopProbe); a loop of dialogs takes
	// less, stopTries × dialogQuiet), then, should the page go busy again,
	// waiting for the commit (commitGrace + commitProbe + terminateTimeout
	// + commitProbe), then closing it.
	leaveWorst = stopTries*(terminateTimeout+stopProbe) + commitGrace + 2*commitProbe + terminateTimeout + replaceCloseTimeout
)

// Self-navigating pages: a page that committed churnDocs new documents
// within churnWindow, not counting a navigation of ours, is churning; page
// work on it ends with ErrSelfNavigating instead of waiting for a document
// that is gone before the work is done.
const (
	churnDocs   = 5
	churnWindow = 2 * time.Second
	// hijackWindow is how long after leaving a page that navigated by
	// itself a navigation watches for a document the page left had asked
	// for before ours (a reload, a history.back()), and that commits
	// after ours: the navigation is then made again.
	hijackWindow = 500 * time.Millisecond
	// trapWindow is the span within which churnDocs same-document
	// navigations of the page's own make a history trap (historyTrapped).
	trapWindow = time.Second
)

// noteDocLocked records that a new document was committed; t.mu is held.
func (t *Tab) noteDocLocked() {
	now := time.Now()
	t.docTimes = append(t.docTimes, now)
	if len(t.docTimes) > churnDocs {
		t.docTimes = t.docTimes[len(t.docTimes)-churnDocs:]
	}
	if t.churnCh != nil && t.churningLocked(now) {
		close(t.churnCh)
		t.churnCh = nil
	}
}

func (t *Tab) churningLocked(now time.Time) bool {
	return len(t.docTimes) >= churnDocs && now.Sub(t.docTimes[0]) <= churnWindow
}

// docReplaced reports whether another document commits within
// hijackWindow of the one a navigation of ours just committed.
func (t *Tab) docReplaced(ctx context.Context) bool {
	t.mu.Lock()
	ours := t.docNav
	t.mu.Unlock()
	changed := func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.docNav != ours
	}
	t.pollUntil(ctx, hijackWindow, changed)
	return changed()
}

// resetChurn forgets the documents committed so far: a navigation of ours
// is starting or committed, and the page's own navigations count from
// there.
func (t *Tab) resetChurn() {
	t.mu.Lock()
	t.docTimes, t.sameDoc = nil, nil
	t.mu.Unlock()
}

// sameDocNav is a same-document navigation of the main frame (pushState,
// a history traversal within the document, a fragment).
type sameDocNav struct {
	at  time.Time
	url string
}

// noteSameDocLocked records a same-document navigation to url; t.mu is
// held.
func (t *Tab) noteSameDocLocked(url string) {
	t.sameDoc = append(t.sameDoc, sameDocNav{time.Now(), url})
	if len(t.sameDoc) > churnDocs {
		t.sameDoc = t.sameDoc[len(t.sameDoc)-churnDocs:]
	}
}

// historyTrapped reports whether the page is moving through its own
// history by itself: churnDocs same-document navigations within
// trapWindow, the last within hijackWindow, back to a URL it had just
// left (a back-button trap: history.back() from popstate, forever, some
// hundred a second; a carousel that cycles its slides' fragments every
// few hundred milliseconds is not one). Such a page has traversals queued
// in the browser at any moment, and one can commit after a navigation of
// ours, taking the tab back into the trap; a navigation replaces its page
// instead (ReplacedHistoryTrap). A page that only pushes new URLs (a
// router, a scroll spy on its way down) is not trapped.
func (t *Tab) historyTrapped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	n := len(t.sameDoc)
	if n < churnDocs || now.Sub(t.sameDoc[0].at) > trapWindow || now.Sub(t.sameDoc[n-1].at) > hijackWindow {
		return false
	}
	seen := make(map[string]bool, n)
	for _, s := range t.sameDoc {
		if seen[s.url] {
			return true
		}
		seen[s.url] = true
	}
	return false
}

// ownCommitted notes that a navigation of ours committed (its event comes
// before Playwright's answer).
func (t *Tab) ownCommitted() {
	t.mu.Lock()
	t.ownNav = t.lastNav
	t.mu.Unlock()
}

// navigatedItself reports whether the page navigated by itself (a new
// document or within its document) within churnWindow: one that did may
// still have such a navigation in flight, which can commit after ours.
func (t *Tab) navigatedItself() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastNav != t.ownNav && time.Since(t.navAt) < churnWindow
}

// churning reports whether the page is loading new documents by itself
// faster than page work can finish on one.
func (t *Tab) churning() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.churningLocked(time.Now())
}

// churned returns a channel closed once the page is churning (at once if
// it is).
func (t *Tab) churned() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.churningLocked(time.Now()) {
		return closedCh
	}
	if t.churnCh == nil {
		t.churnCh = make(chan struct{})
	}
	return t.churnCh
}

// dismissLeaving reports whether a dialog with description desc opened in
// the document a navigation is leaving, and counts it (the caller dismisses
// it).
func (t *Tab) dismissLeaving(desc string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.leaving || t.docNav != t.leaveDoc {
		return false
	}
	if t.dismissed == 0 {
		t.firstGone = desc
	}
	t.dismissed++
	return true
}

// leave prepares the tab's page to be navigated away from: its dialogs
// are dismissed (and so are those it opens until the navigation ends:
// endLeave), the script that opened them or that keeps the page busy is
// stopped. It returns why a navigation would not commit, for a page that
// goes on opening dialogs (ReplacedDialogs: a dialog the page opens once
// the navigation started cannot be answered, and blocks its renderer), or
// stays busy after its script was stopped (ReplacedStuck), or keeps
// moving through its own history (ReplacedHistoryTrap); "" otherwise.
func (t *Tab) leave(ctx context.Context) (why string) {
	t.mu.Lock()
	t.leaving, t.leaveDoc = true, t.docNav
	modals := append([]*ModalState(nil), t.modals...)
	busy := t.busy
	t.mu.Unlock()
	dialogs := false
	for _, m := range modals {
		if m.dialog == nil {
			t.clearModal(m) // a file chooser does not block the page
			continue
		}
		dialogs = true
		if err := t.AnswerDialog(ctx, m, DialogAnswer{}); err == nil {
			t.dismissLeaving(m.Description)
		}
	}
	if dialogs && !t.dialogsStop(ctx) {
		return ReplacedDialogs
	}
	if busy && !t.stopScript(ctx) {
		return ReplacedStuck
	}
	if t.historyTrapped() {
		return ReplacedHistoryTrap
	}
	return ""
}

// dialogsStop reports whether a page whose dialog was just dismissed stops
// opening dialogs (those it opens meanwhile are dismissed as they come:
// leaving). A loop of alerts does not, and cannot be stopped: a script
// waiting on a dialog ignores Runtime.terminateExecution.
func (t *Tab) dialogsStop(ctx context.Context) bool {
	for range stopTries {
		before := t.dismissedCount()
		t.pollUntil(ctx, dialogQuiet, func() bool { return t.dismissedCount() != before })
		if t.dismissedCount() == before {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
	}
	return false
}

// dismissedCount is how many dialogs of the document left were dismissed.
func (t *Tab) dismissedCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dismissed
}

// endLeave ends leave's dismissal of dialogs and returns how many dialogs
// of the page left were dismissed, and the first.
func (t *Tab) endLeave() (n int, first string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n, first = t.dismissed, t.firstGone
	t.leaving, t.dismissed, t.firstGone = false, 0, ""
	return n, first
}

// stopScript stops the page's running script (Runtime.terminateExecution)
// and reports whether the page then answers a probe; work queued behind a
// stopped script (a snapshot that timed out) runs next, so it tries
// stopTries times.
func (t *Tab) stopScript(ctx context.Context) bool {
	for range stopTries {
		t.terminate(ctx)
		if t.aliveWithin(ctx, stopProbe) {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
	}
	return false
}

// terminate stops the JavaScript running in the page (or, if none runs,
// the next to run), over the tab's CDP session: attached when the tab was
// made, it needs no answer from the busy page.
func (t *Tab) terminate(ctx context.Context) {
	t.mu.Lock()
	s := t.cdpSess
	t.mu.Unlock()
	if s == nil {
		return
	}
	// Chromium answers once the script has stopped: a script paused in
	// a dialog stops only when the dialog is answered, so the answer is
	// not waited for long; the command stands.
	ctx, cancel := context.WithTimeout(ctx, terminateTimeout)
	defer cancel()
	_, err := call(ctx, t.c, "stop the page's script", stopOn{}, func() (any, error) {
		return sendCDP(ctx, s, 0, "Runtime.terminateExecution", map[string]any{})
	})
	t.c.env.Log.Debug().AnErr("error", err).Int("tab", t.ID).Msg("stopped the page's script")
}

// navigateWatched runs fn, a navigation of the tab's page up to the commit
// of its document, and watches the page being left while it has not
// committed: every commitGrace it must answer a probe; one that does not
// has its script stopped, and if it then still does not answer, the
// navigation is abandoned (stuck): the page's renderer would not commit it.
// A page that answers is waited for (a slow server): the navigation's own
// timeout bounds that. Once arrived (nil: never) reports that the
// navigation committed, nothing is probed or stopped any more and the
// navigation is waited for: a probe would reach the new document, whose
// script is not the page being left's (on a loaded machine the commit's
// answer can come after commitGrace).
func (t *Tab) navigateWatched(ctx context.Context, op string, arrived func() bool, fn func() (playwright.Response, error)) (resp playwright.Response, stuck bool, err error) {
	type result struct {
		resp playwright.Response
		err  error
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		r, err := call(gctx, t.c, op, stopOn{modal: t, busyOK: true, navigates: true}, fn)
		done <- result{r, err}
	}()
	if t.IdleBlank() {
		// Nothing there can hold the renderer; a probe that goes
		// unanswered means a renderer busy with other pages, and a stop
		// would end the next script to run instead (Playwright's, or the
		// new document's).
		r := <-done
		return r.resp, false, r.err
	}
	committed := func() bool { return arrived != nil && arrived() }
	timer := time.NewTimer(commitGrace)
	defer timer.Stop()
	stopped := false
	for {
		select {
		case r := <-done:
			return r.resp, false, r.err
		case <-timer.C:
		}
		if committed() {
			r := <-done
			return r.resp, false, r.err
		}
		if t.aliveWithin(ctx, commitProbe) || ctx.Err() != nil || committed() {
			timer.Reset(commitGrace)
			continue
		}
		t.c.env.Log.Debug().Int("tab", t.ID).Bool("stopped", stopped).Msg("the page being left does not answer while its navigation has not committed")
		if !stopped {
			stopped = true
			t.terminate(ctx)
			timer.Reset(0)
			continue
		}
		cancel()
		<-done // the call returns at once on the cancelled context
		return nil, true, nil
	}
}

// replace closes t's page, bounded (a stuck renderer may never confirm;
// the close goes on in the background), and opens a new page in t's
// position in the tab list, selected if t was.
func (c *Context) replace(ctx context.Context, t *Tab) (*Tab, error) {
	c.mu.Lock()
	idx := len(c.tabs)
	for i, x := range c.tabs {
		if x == t {
			idx = i
		}
	}
	wasCurrent := c.current == t
	c.mu.Unlock()
	if !t.Closed() {
		err := run(ctx, c, "close the page", stopOn{bound: replaceCloseTimeout}, func() error { return t.p.Close() })
		if err != nil {
			c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("closing a page to replace it did not finish")
		}
	}
	c.removeTab(t)
	p, err := call(ctx, c, "open a page", stopOn{bound: c.env.NavigationTimeout}, func() (playwright.Page, error) { return c.bctx.NewPage() })
	if err != nil {
		return nil, fmt.Errorf("open a page to replace tab %d: %w", t.ID, err)
	}
	nt := c.addTab(p, false, false)
	c.mu.Lock()
	for i, x := range c.tabs {
		if x == nt {
			c.tabs = append(c.tabs[:i], c.tabs[i+1:]...)
			break
		}
	}
	idx = min(idx, len(c.tabs))
	c.tabs = append(c.tabs[:idx], append([]*Tab{nt}, c.tabs[idx:]...)...)
	if wasCurrent || c.current == nil {
		c.current = nt
	}
	c.mu.Unlock()
	c.env.Log.Debug().Int("tab", t.ID).Int("by", nt.ID).Int("index", idx).Msg("replaced a tab's page")
	return nt, nil
}

// ranScript notes that the agent's code runs in the tab's current
// document (browser_evaluate on the page or an element).
func (t *Tab) ranScript() {
	t.mu.Lock()
	t.scripted, t.scriptedDoc = true, t.docNav
	t.mu.Unlock()
}

// IdleBlank reports whether the tab's page is a blank page that runs no
// script: about:blank in a tab this server opened (not a popup, whose
// opener may write into it), no code of the agent's run in it, no init
// scripts, and no one else driving it (a published CDP endpoint).
func (t *Tab) IdleBlank() bool {
	if t.c.env.InitScripts || !t.c.env.Watch || t.p.URL() != "about:blank" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.popup && (!t.scripted || t.scriptedDoc != t.docNav)
}
