package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Page work on a tab. Every method goes through the door (door.go): it
// answers when ctx ends, the browser is lost or, where the page must answer,
// a dialog opens.

// errorPageWait bounds the wait for Chromium's error page after a failed
// navigation.
const errorPageWait = time.Second

// titleTimeout bounds reading a title for a response.
const titleTimeout = 2 * time.Second

// URL is the tab's current URL (known locally; no browser call).
func (t *Tab) URL() string { return t.p.URL() }

// Title reads the tab's title, bounded to 2 s; while a dialog blocks the
// page, or when the page does not answer, it returns the last title read.
// ok is false when no title was ever read.
func (t *Tab) Title(ctx context.Context) (title string, ok bool) {
	t.mu.Lock()
	cached, has := t.title, t.hasTitle
	blocked := len(t.modals) > 0
	t.mu.Unlock()
	if blocked {
		return cached, has
	}
	ctx, cancel := context.WithTimeout(ctx, titleTimeout)
	defer cancel()
	s, err := call(ctx, t.g, "read the title", stopOn{modal: t}, t.p.Title)
	if err != nil {
		return cached, has
	}
	t.mu.Lock()
	t.title, t.hasTitle = s, true
	t.mu.Unlock()
	return s, true
}

// Navigate loads url in the tab and waits, bounded, until it is usable: the
// DOM is ready, then the load event or a quiet network (loadMax at most).
// status is the main document's HTTP status (0 when there was no response,
// e.g. about:blank).
func (t *Tab) Navigate(ctx context.Context, url string) (status int, err error) {
	navBefore := t.LastNavSeq()
	resp, err := call(ctx, t.g, "navigate to "+url, stopOn{modal: t}, func() (playwright.Response, error) {
		return t.p.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded})
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
	t.waitLoaded(ctx)
	if resp != nil {
		return resp.Status(), nil
	}
	return 0, nil
}

// GoBack goes back in the tab's history; moved is false when there was no
// previous page.
func (t *Tab) GoBack(ctx context.Context) (moved bool, err error) {
	resp, err := call(ctx, t.g, "go back", stopOn{modal: t}, func() (playwright.Response, error) {
		return t.p.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded})
	})
	if err != nil {
		return false, err
	}
	if resp == nil {
		return false, nil
	}
	t.waitLoaded(ctx)
	return true, nil
}

// Evaluate runs a JavaScript function (or expression) in the page with an
// optional argument and returns its JSON value. A dialog the script opens
// ends the wait with ErrModal.
func (t *Tab) Evaluate(ctx context.Context, fn string, arg ...any) (any, error) {
	return call(ctx, t.g, "evaluate", stopOn{modal: t}, func() (any, error) { return t.p.Evaluate(fn, arg...) })
}

// Close closes the tab, bounded by the action timeout: a page whose
// renderer is frozen (a dialog in a popup of the same site) may never
// confirm; the close goes on in the background and the tab leaves the list
// when the browser reports it closed.
func (t *Tab) Close(ctx context.Context) error {
	return run(ctx, t.g, "close the tab", stopOn{bound: t.g.s.cfg.actionTimeout()}, func() error { return t.p.Close() })
}

// WaitForText waits until text is visible on the page (or, with gone, no
// longer visible), at most timeout.
func (t *Tab) WaitForText(ctx context.Context, text string, gone bool, timeout time.Duration) error {
	state := playwright.WaitForSelectorStateVisible
	op := fmt.Sprintf("wait for text %q", text)
	if gone {
		state = playwright.WaitForSelectorStateHidden
		op = fmt.Sprintf("wait for text %q to disappear", text)
	}
	ms := float64(timeout.Milliseconds())
	return run(ctx, t.g, op, stopOn{modal: t}, func() error {
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
	return call(ctx, t.g, method, stopOn{}, func() (any, error) { return s.Send(method, params) })
}

func (t *Tab) cdpSession(ctx context.Context) (playwright.CDPSession, error) {
	t.mu.Lock()
	s := t.cdpSess
	t.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := call(ctx, t.g, "open a CDP session", stopOn{}, func() (playwright.CDPSession, error) { return t.g.bc.NewCDPSession(t.p) })
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cdpSess != nil {
		// Another call opened one meanwhile; keep the first.
		t.g.goOwned(func() { _ = s.Detach() })
		return t.cdpSess, nil
	}
	t.cdpSess = s
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
	return run(ctx, t.g, "resize the viewport", stopOn{modal: t}, func() error { return t.p.SetViewportSize(width, height) })
}

// ViewportSize is the tab's viewport, or nil when it follows the window.
func (t *Tab) ViewportSize() (width, height int, ok bool) {
	if vp := t.p.ViewportSize(); vp != nil {
		return vp.Width, vp.Height, true
	}
	return 0, 0, false
}
