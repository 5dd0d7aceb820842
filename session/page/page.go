package page

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// Page work on a tab. Every method goes through the door (door.go): it
// answers when ctx ends, the browser is lost or, where the page must answer,
// a dialog opens.

// errorPageWait bounds the wait for Chromium's error page after a failed
// navigation.
const errorPageWait = time.Second

// titleTimeout bounds reading a title for a response.
const titleTimeout = 2 * time.Second

// Liveness: a page whose main thread never yields (a script in an endless
// loop) answers no call. A snapshot probes it first with a trivial evaluate
// bounded by probeTimeout; a navigation waiting for the DOM probes it every
// probeAfter, and gives up after probesToGiveUp probes in a row go
// unanswered (a page may legitimately run a long script while it loads).
const (
	probeAfter   = time.Second
	probeTimeout = 2 * time.Second
	// probesToGiveUp is how many unanswered probes in a row end a
	// navigation's wait for the DOM.
	probesToGiveUp = 3
	// cdpAttachTimeout bounds opening a tab's CDP session.
	cdpAttachTimeout = 10 * time.Second
	// terminateTimeout bounds the wait for Chromium's answer to stopping
	// a busy page's script.
	terminateTimeout = 300 * time.Millisecond
)

// alive reports whether the page's main thread answers a trivial call
// within probeTimeout, and records the answer (Busy). A modal state or the
// end of ctx is not a verdict: it reports true.
func (t *Tab) alive(ctx context.Context) bool { return t.aliveWithin(ctx, probeTimeout) }

// aliveWithin is alive with the probe bounded by d.
func (t *Tab) aliveWithin(ctx context.Context, d time.Duration) bool {
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	// In the isolated world: the page sees no call of ours. Its script
	// runs on the page's main thread all the same, so a stuck page does
	// not answer it either.
	_, err := t.isolatedOn(pctx, "probe the page", stopOn{modal: t, busyOK: true}, "() => 0")
	var te *TimeoutError
	busy := errors.As(err, &te) && ctx.Err() == nil
	if err == nil || busy {
		t.mu.Lock()
		t.busy = busy
		if busy {
			t.busyAt = time.Now()
		}
		t.mu.Unlock()
	}
	return !busy
}

// markBusy notes that the page's main thread did not answer in time.
func (t *Tab) markBusy() {
	t.mu.Lock()
	t.busy, t.busyAt = true, time.Now()
	t.mu.Unlock()
}

// recentlyBusy reports whether the current document's main thread missed
// an answer within busyMemory: its renderer may still be at work of its
// own (or of a snapshot Playwright gave up on) even when a probe got
// through between two of its tasks.
func (t *Tab) recentlyBusy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.busyAt.IsZero() && time.Since(t.busyAt) < busyMemory
}

// busyMemory is how long a document that missed an answer is called with
// a watchdog (watched).
const busyMemory = 30 * time.Second

// watched is call for a page that was recently busy: while fn has not
// answered, the page is probed every probeAfter, and a probe that goes
// unanswered ends the call with ErrNotResponding instead of fn's own
// timeout (fn may still run in the page; the call returns at once).
func watched[T any](ctx context.Context, t *Tab, op string, fn func() (T, error)) (T, error) {
	if !t.recentlyBusy() {
		return call(ctx, t.c, op, stopOn{modal: t}, fn)
	}
	type result struct {
		v   T
		err error
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		v, err := call(gctx, t.c, op, stopOn{modal: t}, fn)
		done <- result{v, err}
	}()
	timer := time.NewTimer(probeAfter)
	defer timer.Stop()
	for {
		select {
		case r := <-done:
			return r.v, r.err
		case <-timer.C:
		}
		if t.alive(ctx) || ctx.Err() != nil {
			timer.Reset(probeAfter)
			continue
		}
		cancel()
		<-done // the call returns at once on the cancelled context
		var zero T
		return zero, fmt.Errorf("%s: %w", op, ErrNotResponding)
	}
}

// Busy reports whether the page's main thread missed its last liveness
// probe (since the document loaded).
func (t *Tab) Busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.busy
}

// StillLoading counts what the current document still waits for: child
// frames that never committed a document, and requests in flight.
func (t *Tab) StillLoading() (frames, requests int) {
	frames = t.framesNotLoaded()
	t.mu.Lock()
	requests = len(t.inflight)
	t.mu.Unlock()
	return frames, requests
}

// framesNotLoaded counts the tab's child frames that have not committed a
// document yet (their server has not answered): snapshots do not wait for
// them. It reads the tab's event-kept state; no browser call.
func (t *Tab) framesNotLoaded() int {
	n := 0
	for _, f := range t.p.Frames() {
		if f.ParentFrame() == nil || f.URL() != "" {
			continue
		}
		// An empty URL with DOMContentLoaded is a frame about to show
		// its first document; without, its document never arrived. A
		// frame that was there before the tab was made counts as loaded.
		t.mu.Lock()
		dom, tracked := t.frameDOM[f]
		t.mu.Unlock()
		if tracked && !dom {
			n++
		}
	}
	return n
}

// URL is the tab's current URL (known locally; no browser call).
func (t *Tab) URL() string { return t.p.URL() }

// Title reads the tab's title, bounded to 2 s; while a dialog blocks the
// page, or when the page does not answer, it returns the last title read.
// ok is false when no title was ever read.
func (t *Tab) Title(ctx context.Context) (title string, ok bool) {
	t.mu.Lock()
	cached, has := t.title, t.hasTitle
	blocked := len(t.modals) > 0
	fresh := has && time.Since(t.titleAt) < settledMaxAge
	t.titleAt = time.Time{}
	t.mu.Unlock()
	if blocked || fresh || t.Busy() {
		return cached, has
	}
	tctx, cancel := context.WithTimeout(ctx, titleTimeout)
	defer cancel()
	s, err := call(tctx, t.c, "read the title", stopOn{modal: t, busyOK: true}, t.p.Title)
	if err != nil {
		var te *TimeoutError
		if errors.As(err, &te) && ctx.Err() == nil && len(t.Modals()) == 0 {
			// The page did not answer for 2 s: spare the next calls the wait.
			t.markBusy()
		}
		return cached, has
	}
	t.mu.Lock()
	t.title, t.hasTitle = s, true
	t.mu.Unlock()
	return s, true
}

// Navigation is what Tab.Navigate did.
type Navigation struct {
	// Status is the main document's HTTP status (0 when there was no
	// response, e.g. about:blank).
	Status int
	// Tab is the tab the page is in now: the tab navigated, or the one that
	// took its position when its page was replaced.
	Tab *Tab
	// Replaced, if set, says why the tab's page was closed and a new one
	// opened in its position: ReplacedCrashed, ReplacedStuck,
	// ReplacedDialogs or ReplacedHistoryTrap. The old page's state (its history, scripts, session
	// storage) is lost.
	Replaced string
	// Dismissed counts the dialogs of the page left that the navigation
	// dismissed; FirstDismissed describes the first.
	Dismissed      int
	FirstDismissed string
}

// Why a navigation replaced a tab's page (Navigation.Replaced).
const (
	ReplacedCrashed = "the page had crashed"
	ReplacedStuck   = "the page did not respond, even after its script was stopped"
	ReplacedDialogs = "the page kept opening dialogs"
	// ReplacedHistoryTrap: a back-button trap, whose queued history
	// traversals would take the tab back into it after our navigation.
	ReplacedHistoryTrap = "the page kept moving through its own history"
)

// interruptRetries is how many times a navigation is started again when
// the page's own navigation (a redirect loop, a timer) interrupted it.
const interruptRetries = 3

// Navigate loads url in the tab and waits, bounded, until it is usable: the
// document committed, its DOM is ready (within the navigation timeout, and
// ErrNotResponding as soon as its main thread stops answering), then the
// load event or a quiet network (loadMax at most; StillLoading tells what
// was still missing).
//
// The page being left is made to let go first (stuck.go): its dialogs
// are dismissed, a script that never yields is stopped, and a page that
// still does not commit the navigation, or that crashed, is replaced by a
// new page in the tab's position (Navigation.Tab, Navigation.Replaced).
// A page that keeps loading new documents by itself ends the wait with
// ErrSelfNavigating.
func (t *Tab) Navigate(ctx context.Context, url string) (nav Navigation, err error) {
	limit := t.c.env.NavigationTimeout
	// Playwright's own navigation timeout answers first; this bounds the
	// whole, the replacement of a stuck page included.
	ctx, cancel := context.WithTimeout(ctx, limit+time.Second)
	defer cancel()
	started := time.Now()
	op := "navigate to " + url
	nav.Tab = t
	defer func() { nav.Dismissed, nav.FirstDismissed = t.endLeave() }()
	if t.Crashed() {
		nt, err := t.c.replace(ctx, t)
		if err != nil {
			return nav, fmt.Errorf("%s: %w", op, err)
		}
		t, nav.Tab, nav.Replaced = nt, nt, ReplacedCrashed
	}
	why := t.leave(ctx)
	goTo := func() (playwright.Response, error) {
		return t.p.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateCommit})
	}
	// A page that navigates by itself may still commit a navigation it
	// asked for before ours, after ours.
	selfNav := t.navigatedItself()
	var resp playwright.Response
	var ours int // docNav of the document our navigation committed
	for try := 0; ; try++ {
		navBefore := t.LastNavSeq()
		// arrived: the page committed a navigation to url since this try
		// began.
		arrived := func() bool { return t.LastNavSeq() != navBefore && sameURL(t.URL(), url) }
		t.resetChurn()
		if why == "" {
			var stuck bool
			resp, stuck, err = t.navigateWatched(ctx, op, arrived, goTo)
			if stuck {
				why = ReplacedStuck
			}
		}
		if why != "" {
			n, f := t.endLeave()
			nt, rerr := t.c.replace(ctx, t)
			if rerr != nil {
				return nav, fmt.Errorf("%s: %w", op, rerr)
			}
			t, nav.Tab, nav.Replaced, why = nt, nt, why, ""
			t.mu.Lock()
			t.dismissed, t.firstGone = n, f // reported by the deferred endLeave
			t.mu.Unlock()
			resp, err = call(ctx, t.c, op, stopOn{modal: t, busyOK: true, navigates: true}, goTo)
		}
		selfNav = selfNav || t.churning()
		t.resetChurn()
		retry := try < interruptRetries && ctx.Err() == nil
		if err == nil {
			t.ownCommitted()
			if selfNav && retry && t.docReplaced(ctx) {
				continue // the page left committed a document after ours
			}
			if !selfNav || !retry {
				break
			}
			// The page left may still commit a navigation of its own
			// (a history.back() it queued, a timer) while ours loads, on a
			// slow machine after hijackWindow: ours is started again if
			// another document replaced it by the end of the wait.
			ours = t.DocSeq()
			if err = t.waitDOM(ctx, op, limit-time.Since(started)); err != nil {
				break
			}
			t.waitLoaded(ctx)
			if t.DocSeq() != ours {
				t.c.env.Log.Debug().Int("tab", t.ID).Str("url", Cut(t.URL())).Msg("the page left replaced our navigation's document while it loaded: navigating again")
				continue
			}
			break
		}
		var pe *PageError
		if !errors.As(err, &pe) {
			break
		}
		if interruptedByOurs(err, url) {
			// An earlier start of this very navigation (Chromium kept it
			// when Playwright gave up on it) interrupted this one: it is
			// the navigation asked for. Let it commit.
			t.pollUntil(ctx, time.Until(started.Add(limit)), arrived)
			if sameURL(t.URL(), url) {
				err = nil
				t.ownCommitted()
				break
			}
		}
		if t.LastNavSeq() != navBefore && !strings.HasPrefix(t.URL(), "chrome-error:") && retry {
			// The page's own navigation committed meanwhile and
			// interrupted ours: start ours again.
			continue
		}
		// A failed load (refused, blocked, DNS) commits Chromium's error
		// page just after Goto returns: let it land, bounded, so the next
		// navigation is not interrupted by it.
		t.pollUntil(ctx, errorPageWait, func() bool { return t.LastNavSeq() != navBefore })
		break
	}
	if err != nil {
		return nav, err
	}
	if resp != nil {
		nav.Status = resp.Status()
	}
	if ours != 0 && t.DocSeq() == ours {
		return nav, nil // waited for above
	}
	if err := t.waitDOM(ctx, op, limit-time.Since(started)); err != nil {
		return nav, err
	}
	t.waitLoaded(ctx)
	return nav, nil
}

// interruptedByOurs reports whether err is Playwright's "is interrupted by
// another navigation" where that other navigation goes to url too.
func interruptedByOurs(err error, url string) bool {
	return strings.Contains(err.Error(), "is interrupted by another navigation to "+strconv.Quote(url))
}

// sameURL compares the page's URL with the one asked for (Chromium adds
// the root path to a bare origin).
func sameURL(page, asked string) bool { return page == asked || page == asked+"/" }

// waitDOM waits, at most limit, for DOMContentLoaded of the tab's current
// document, probing every probeAfter that the page still answers. A modal
// state ends the wait without an error (it is the outcome).
func (t *Tab) waitDOM(ctx context.Context, op string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	missed := 0
	for {
		chunk := min(probeAfter, time.Until(deadline))
		if chunk <= 0 {
			return &TimeoutError{Op: op, Msg: fmt.Sprintf("the page did not finish loading within %s (its DOM never became ready)", limit.Round(time.Second)), Err: context.DeadlineExceeded}
		}
		// The tab's load state is kept from the driver's events: no
		// browser call while waiting.
		t.pollUntil(ctx, chunk, func() bool { return t.DOMReady() || t.Crashed() || t.churning() })
		switch {
		case t.DOMReady(), len(t.Modals()) > 0:
			return nil
		case t.Crashed():
			return fmt.Errorf("the page did not finish loading: %w", ErrCrashed)
		case t.churning():
			return fmt.Errorf("the page did not finish loading: %w", ErrSelfNavigating)
		case t.c.isLost():
			return fmt.Errorf("%s: %w", op, ErrBrowserGone)
		case ctx.Err() != nil:
			return ctxErr(op, ctx.Err())
		}
		if t.alive(ctx) {
			missed = 0
		} else if missed++; missed >= probesToGiveUp {
			return fmt.Errorf("the page did not finish loading: %w", ErrNotResponding)
		}
	}
}

// GoBack goes back in the tab's history; moved is false when there was no
// previous page. The page being left is made to let go first, as for
// Navigate, but never replaced: its history would go with it.
func (t *Tab) GoBack(ctx context.Context) (moved bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, t.c.env.NavigationTimeout+time.Second)
	defer cancel()
	defer t.endLeave()
	if t.Crashed() {
		return false, fmt.Errorf("go back: %w", ErrCrashed)
	}
	started := time.Now()
	if t.leave(ctx) != "" {
		return false, fmt.Errorf("go back: %w", ErrNotResponding)
	}
	t.resetChurn()
	resp, stuck, err := t.navigateWatched(ctx, "go back", nil, func() (playwright.Response, error) {
		return t.p.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateCommit})
	})
	t.resetChurn()
	t.ownCommitted()
	switch {
	case stuck:
		return false, fmt.Errorf("go back: %w", ErrNotResponding)
	case err != nil:
		return false, err
	case resp == nil:
		return false, nil
	}
	if err := t.waitDOM(ctx, "go back", t.c.env.NavigationTimeout-time.Since(started)); err != nil {
		return true, err
	}
	t.waitLoaded(ctx)
	return true, nil
}

// Evaluate runs a JavaScript function (or expression) in the page with an
// optional argument and returns its JSON value. Without an argument it
// runs over the tab's CDP session (evaluateMain), with no trace of the
// automation in a stack the page reads; otherwise, or when the source is
// not one expression, by Playwright's evaluate with none of Playwright's
// frames in such a stack (see detached). A dialog the script opens ends
// the wait with ErrModal.
func (t *Tab) Evaluate(ctx context.Context, fn string, arg ...any) (any, error) {
	// A script can change what the watch does not see (style rules, a
	// custom element's internals): the next snapshot is taken afresh.
	defer t.invalidateWatch()
	t.ranScript()
	if len(arg) == 0 {
		group, release := t.evalGroup()
		defer release()
		if v, err := t.evaluateMain(ctx, "evaluate", group, "", fn); !errors.Is(err, errNotMainWorld) {
			return v, err
		}
	}
	return t.evaluateDetached(ctx, fn, func(src string) (any, error) { return t.evaluate(ctx, "evaluate", src, arg...) })
}

// Read runs a function of ours that only reads the page (its size, the
// user agent, whether it answers) and returns its JSON value. It runs in
// the tab's isolated world (the watch's), never the page's own: a page that
// wraps a DOM or JavaScript API, or reads error stacks, sees no call of
// ours. The watch's base stands, so an unchanged page's next snapshot is
// still the last one.
func (t *Tab) Read(ctx context.Context, fn string, arg ...any) (any, error) {
	return t.isolated(ctx, "read the page", fn, arg...)
}

// isolated calls fn with args in the isolated world of the main frame's
// current document, made anew when that document went.
func (t *Tab) isolated(ctx context.Context, op, fn string, arg ...any) (any, error) {
	return t.isolatedOn(ctx, op, stopOn{modal: t}, fn, arg...)
}

// isolatedOn is isolated with the door's stop conditions.
func (t *Tab) isolatedOn(ctx context.Context, op string, stop stopOn, fn string, arg ...any) (any, error) {
	r, err := t.isolatedCall(ctx, op, stop, fn, "", arg)
	if err != nil {
		return nil, err
	}
	return r["value"], nil
}

// isolatedObject is isolated for a function whose result is an object:
// it gives the object's remote object id (in the object group), "" for
// null.
func (t *Tab) isolatedObject(ctx context.Context, fn, group string, arg ...any) (string, error) {
	r, err := t.isolatedCall(ctx, "read the page", stopOn{modal: t}, fn, group, arg)
	id, _ := r["objectId"].(string)
	return id, err
}

// isolatedCall calls fn in the isolated world and returns the CDP
// RemoteObject of its result: by value, or, with an object group, as a
// remote object of that group.
func (t *Tab) isolatedCall(ctx context.Context, op string, stop stopOn, fn, group string, arg []any) (map[string]any, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	args := make([]map[string]any, len(arg))
	for i, a := range arg {
		args[i] = map[string]any{"value": a}
	}
	for attempt := 0; ; attempt++ {
		cid, err := t.watchContext(ctx)
		if err != nil {
			return nil, err
		}
		params := map[string]any{
			"functionDeclaration": fn, "executionContextId": cid, "arguments": args,
			"returnByValue": group == "", "awaitPromise": true,
		}
		if group != "" {
			params["objectGroup"] = group
		}
		res, err := call(ctx, t.c, op, stop, func() (any, error) { return sendCDP(ctx, s, 0, "Runtime.callFunctionOn", params) })
		if err != nil {
			// The world went with its document: make a new one, once.
			var pe *PageError
			if attempt == 0 && errors.As(err, &pe) {
				t.forgetWatchContext(cid)
				continue
			}
			return nil, err
		}
		m, _ := res.(map[string]any)
		if ex, ok := m["exceptionDetails"].(map[string]any); ok {
			return nil, fmt.Errorf("%s: %v", op, exceptionText(ex))
		}
		r, _ := m["result"].(map[string]any)
		return r, nil
	}
}

// exceptionText is the message of CDP exceptionDetails.
func exceptionText(ex map[string]any) any {
	if e, ok := ex["exception"].(map[string]any); ok && e["description"] != nil {
		return e["description"]
	}
	return ex["text"]
}

func (t *Tab) evaluate(ctx context.Context, op, fn string, arg ...any) (any, error) {
	return watched(ctx, t, op, func() (any, error) { return t.p.Evaluate(fn, arg...) })
}

// Close closes the tab, bounded by the action timeout: a page whose
// renderer is frozen (a dialog in a popup of the same site) may never
// confirm; the close goes on in the background and the tab leaves the list
// when the browser reports it closed.
func (t *Tab) Close(ctx context.Context) error {
	return run(ctx, t.c, "close the tab", stopOn{bound: t.c.env.ActionTimeout}, func() error { return t.p.Close() })
}

// WaitForText waits until text is visible on the page (or, with gone, no
// longer visible), at most timeout.
func (t *Tab) WaitForText(ctx context.Context, text string, gone bool, timeout time.Duration) error {
	state := playwright.WaitForSelectorStateVisible
	op := "wait for text " + clip.Quote(text)
	if gone {
		state = playwright.WaitForSelectorStateHidden
		op = "wait for text " + clip.Quote(text) + " to disappear"
	}
	ms := float64(timeout.Milliseconds())
	return run(ctx, t.c, op, stopOn{modal: t}, func() error {
		return t.p.GetByText(text).First().WaitFor(playwright.LocatorWaitForOptions{State: state, Timeout: &ms})
	})
}

// CDP sends a raw DevTools command on the tab's own CDP session (opened
// once, lives with the tab) and returns its result.
func (t *Tab) CDP(ctx context.Context, method string, params map[string]any) (any, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]any{}
	}
	return call(ctx, t.c, method, stopOn{}, func() (any, error) { return sendCDP(ctx, s, 0, method, params) })
}

func (t *Tab) cdpSession(ctx context.Context) (playwright.CDPSession, error) {
	t.mu.Lock()
	s := t.cdpSess
	t.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := call(ctx, t.c, "open a CDP session", stopOn{}, func() (playwright.CDPSession, error) { return t.c.bctx.NewCDPSession(t.p) })
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cdpSess != nil {
		// Another call opened one meanwhile; keep the first.
		t.detachLater(s)
		return t.cdpSess, nil
	}
	t.cdpSess = s
	t.hearTells(s)
	t.watchDownloads(s)
	t.watchWindowOpens(s)
	t.watchWebMCP(s)
	return s, nil
}

// TargetID is the DevTools target id of the tab's page (read once).
func (t *Tab) TargetID(ctx context.Context) (string, error) {
	t.mu.Lock()
	id := t.targetID
	t.mu.Unlock()
	if id != "" {
		return id, nil
	}
	res, err := t.CDP(ctx, "Target.getTargetInfo", nil)
	if err != nil {
		return "", err
	}
	info, _ := res.(map[string]any)["targetInfo"].(map[string]any)
	id, _ = info["targetId"].(string)
	if id == "" {
		return "", fmt.Errorf("read the target id: no targetId in %v", res)
	}
	t.mu.Lock()
	t.targetID = id
	t.mu.Unlock()
	return id, nil
}

// SetViewportSize resizes the tab's viewport.
func (t *Tab) SetViewportSize(ctx context.Context, width, height int) error {
	defer t.invalidateWatch() // media queries may show or hide elements
	return run(ctx, t.c, "resize the viewport", stopOn{modal: t}, func() error { return t.p.SetViewportSize(width, height) })
}

// viewportSize is the tab's viewport, or nil when it follows the window.
func (t *Tab) viewportSize() (width, height int, ok bool) {
	if vp := t.p.ViewportSize(); vp != nil {
		return vp.Width, vp.Height, true
	}
	return 0, 0, false
}
