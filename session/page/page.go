package page

import (
	"context"
	"errors"
	"fmt"
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
	// terminateTimeout bounds stopping a busy page's script.
	terminateTimeout = 2 * time.Second
)

// alive reports whether the page's main thread answers a trivial call
// within probeTimeout, and records the answer (Busy). A modal state or the
// end of ctx is not a verdict: it reports true.
func (t *Tab) alive(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := call(pctx, t.c, "probe the page", stopOn{modal: t}, func() (any, error) { return t.p.Evaluate("() => 0") })
	var te *TimeoutError
	busy := errors.As(err, &te) && ctx.Err() == nil
	if err == nil || busy {
		t.mu.Lock()
		t.busy = busy
		t.mu.Unlock()
	}
	return !busy
}

// Busy reports whether the page's main thread missed its last liveness
// probe (since the document loaded).
func (t *Tab) Busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.busy
}

// unbusy stops the script of a page that missed a liveness probe, over the
// tab's CDP session (attached while the page still answered), so a
// navigation away from it can commit: a same-site document would otherwise
// queue behind the endless script in the same renderer.
func (t *Tab) unbusy(ctx context.Context) {
	t.mu.Lock()
	busy, s := t.busy, t.cdpSess
	t.mu.Unlock()
	if !busy || s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, terminateTimeout)
	defer cancel()
	_, err := call(ctx, t.c, "stop the page's script", stopOn{}, func() (any, error) {
		return s.Send("Runtime.terminateExecution", map[string]any{})
	})
	if err != nil {
		t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("stopping a busy page's script failed")
	}
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
	s, err := call(tctx, t.c, "read the title", stopOn{modal: t}, t.p.Title)
	if err != nil {
		var te *TimeoutError
		if errors.As(err, &te) && ctx.Err() == nil && len(t.Modals()) == 0 {
			// The page did not answer for 2 s: spare the next calls the wait.
			t.mu.Lock()
			t.busy = true
			t.mu.Unlock()
		}
		return cached, has
	}
	t.mu.Lock()
	t.title, t.hasTitle = s, true
	t.mu.Unlock()
	return s, true
}

// Navigate loads url in the tab and waits, bounded, until it is usable: the
// document committed, its DOM is ready (within the navigation timeout, and
// ErrNotResponding as soon as its main thread stops answering), then the
// load event or a quiet network (loadMax at most; StillLoading tells what
// was still missing). status is the main document's HTTP status (0 when
// there was no response, e.g. about:blank). A page left busy by a script
// that never yields has that script stopped first.
func (t *Tab) Navigate(ctx context.Context, url string) (status int, err error) {
	t.unbusy(ctx)
	navBefore := t.LastNavSeq()
	op := "navigate to " + url
	started := time.Now()
	resp, err := call(ctx, t.c, op, stopOn{modal: t}, func() (playwright.Response, error) {
		return t.p.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateCommit})
	})
	if err != nil {
		var pe *PageError
		if errors.As(err, &pe) {
			// A failed load (refused, blocked, DNS) commits Chromium's error
			// page just after Goto returns: let it land, bounded, so the next
			// navigation is not interrupted by it.
			t.pollUntil(ctx, errorPageWait, func() bool { return t.LastNavSeq() != navBefore })
		}
		return 0, err
	}
	if resp != nil {
		status = resp.Status()
	}
	if err := t.waitDOM(ctx, op, t.c.env.NavigationTimeout-time.Since(started)); err != nil {
		return status, err
	}
	t.waitLoaded(ctx)
	return status, nil
}

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
		t.pollUntil(ctx, chunk, t.DOMReady)
		switch {
		case t.DOMReady(), len(t.Modals()) > 0:
			return nil
		case t.c.isLost():
			return fmt.Errorf("%s: %w", op, ErrBrowserGone)
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if t.alive(ctx) {
			missed = 0
		} else if missed++; missed >= probesToGiveUp {
			return fmt.Errorf("the page did not finish loading: %w", ErrNotResponding)
		}
	}
}

// GoBack goes back in the tab's history; moved is false when there was no
// previous page.
func (t *Tab) GoBack(ctx context.Context) (moved bool, err error) {
	t.unbusy(ctx)
	started := time.Now()
	resp, err := call(ctx, t.c, "go back", stopOn{modal: t}, func() (playwright.Response, error) {
		return t.p.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateCommit})
	})
	if err != nil {
		return false, err
	}
	if resp == nil {
		return false, nil
	}
	if err := t.waitDOM(ctx, "go back", t.c.env.NavigationTimeout-time.Since(started)); err != nil {
		return true, err
	}
	t.waitLoaded(ctx)
	return true, nil
}

// Evaluate runs a JavaScript function (or expression) in the page with an
// optional argument and returns its JSON value. A dialog the script opens
// ends the wait with ErrModal.
func (t *Tab) Evaluate(ctx context.Context, fn string, arg ...any) (any, error) {
	// A script can change what the watch does not see (style rules, a
	// custom element's internals): the next snapshot is taken afresh.
	defer t.invalidateWatch()
	return t.evaluate(ctx, "evaluate", fn, arg...)
}

// Read is Evaluate for a function that only reads the page (its size, the
// user agent): the watch's base stands, so an unchanged page's next
// snapshot is still the last one.
func (t *Tab) Read(ctx context.Context, fn string, arg ...any) (any, error) {
	return t.evaluate(ctx, "read the page", fn, arg...)
}

func (t *Tab) evaluate(ctx context.Context, op, fn string, arg ...any) (any, error) {
	return call(ctx, t.c, op, stopOn{modal: t}, func() (any, error) { return t.p.Evaluate(fn, arg...) })
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
	return call(ctx, t.c, method, stopOn{}, func() (any, error) { return s.Send(method, params) })
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
		t.c.Go(func() { _ = s.Detach() })
		return t.cdpSess, nil
	}
	t.cdpSess = s
	t.watchDownloads(s)
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
