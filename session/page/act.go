package page

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Load waiting after a navigation: the page is usable at DOMContentLoaded;
// after that we wait for the load event, but stop early once the network has
// been quiet for loadQuiet (frames or requests that never finish must not
// hold the agent for loadMax).
const (
	loadMax   = 5 * time.Second
	loadQuiet = 300 * time.Millisecond
)

// DefaultSettleTimeout is the usual Env.SettleTimeout: how long an action
// waits for the requests it started.
const DefaultSettleTimeout = 2 * time.Second

// Step is one browser step of an agent action (a click, a fill, a key
// press), made by the methods of Element and Tab and run by Tab.Act.
type Step struct {
	op     string
	prefix string // names the step in its error ("fill Email: …")
	fn     func() error
	on     []*Element // the elements it acts on, when LocateToAct found them
}

// Named returns the step with its errors prefixed by name.
func (s Step) Named(name string) Step {
	s.prefix = name
	return s
}

// Act runs steps, in order, as one agent action on the tab. It returns nil
// as soon as a step opens a dialog or file chooser (the page is then blocked
// and the modal state is the outcome), and otherwise waits, each wait
// bounded and none a fixed sleep, for what the steps set off: a navigation
// (DOM ready, then load or a quiet network) or the requests they started.
func (t *Tab) Act(ctx context.Context, steps ...Step) error {
	navBefore := t.LastNavSeq()
	seq := t.Seq()
	arrived := t.c.pagesArrived()
	for _, s := range steps {
		err := run(ctx, t.c, s.op, stopOn{modal: t}, s.fn)
		if errors.Is(err, ErrModal) {
			return nil
		}
		// A click that closed its own tab (window.close in its handler)
		// did what it was asked: Playwright rejects it when the page goes
		// before the click's own end.
		if errors.Is(err, ErrTabClosed) && t.p.IsClosed() {
			return nil
		}
		te, tte := (*TimeoutError)(nil), (*TypeTimeoutError)(nil)
		if errors.As(err, &te) && te.Msg != "" || errors.As(err, &tte) {
			// Playwright waited for the element, or for the page: a
			// page that no longer answers is said to be busy, not
			// blamed on the element.
			if !t.alive(ctx) { // the end of ctx is no verdict: alive says true
				return fmt.Errorf("%s: %w", s.op, ErrNotResponding)
			}
			if te != nil {
				te.Action = true
			}
			// An element LocateToAct did not look up may be what went.
			for _, e := range s.on {
				if gone := e.gone(ctx); gone != nil {
					err = gone
					break
				}
			}
		}
		if err != nil && s.prefix != "" {
			return fmt.Errorf("%s: %w", s.prefix, err)
		}
		if err != nil {
			return err
		}
	}
	t.Settle(ctx, navBefore, seq)
	t.awaitOpenedWindows(ctx, seq, arrived)
	return nil
}

// awaitOpenedWindows waits, bounded by the settle timeout, until a page has
// come for each window the page asked to open since seq (a window.open, a
// link or form with a target): Playwright announces a popup only once it
// is set up, and on a busy machine that came after the answer, which then
// named no new tab. Page.windowOpen comes over the tab's CDP session before
// the settle read's answer (events of one session are in order).
func (t *Tab) awaitOpenedWindows(ctx context.Context, seq, arrived int) {
	t.mu.Lock()
	n := 0
	for _, s := range t.opens {
		if s > seq {
			n++
		}
	}
	t.mu.Unlock()
	if n == 0 {
		return
	}
	t.pollUntil(ctx, t.c.env.SettleTimeout, func() bool { return t.c.pagesArrived()-arrived >= n })
}

// watchWindowOpens hears, on s (the tab's own CDP session), each window the
// page asks to open; its Page domain is enabled in the background, by
// watchDownloads (cdpSession calls both).
func (t *Tab) watchWindowOpens(s playwright.CDPSession) {
	s.On("Page.windowOpen", func(map[string]any) {
		t.mu.Lock()
		t.seq++
		t.opens = append(t.opens, t.seq)
		if len(t.opens) > 16 {
			t.opens = t.opens[len(t.opens)-16:]
		}
		t.mu.Unlock()
	})
}

// Settle waits, bounded, for what happened since the tab's counters were at
// navBefore and seq: a navigation to become usable, or requests to end.
func (t *Tab) Settle(ctx context.Context, navBefore, seq int) {
	t.mu.Lock()
	t.settled = nil
	t.mu.Unlock()
	// The watch's read is the round trip that brings the action's events
	// in; when nothing more is awaited it also stands for the page. But it
	// comes back over a CDP session of ours, and the requests an action
	// started come as Playwright's events over its own session, in no
	// fixed order with ours: on a busy machine the read won, and a click
	// that fetched answered "no change". So unless the read already shows
	// what is awaited, a round trip over Playwright's session follows: it
	// comes back after the events the page sent before it. A read that ran
	// out of time already waited what a round trip would.
	r, err := t.settleRead(ctx)
	// A navigation to a new document since (docNav is the lastNav it
	// set): wait for it. One within the document (pushState, a fragment)
	// is the page's own change: its requests are awaited as any action's.
	newDoc := t.DocSeq() > navBefore
	if te := (*TimeoutError)(nil); !errors.As(err, &te) && !newDoc && t.pendingSince(seq) == 0 {
		t.roundTrip(ctx)
		if t.c.routed.Load() && !t.startedSince(seq) {
			// An intercepted request is announced once the browser
			// paused it, which may come after the round trip (a click
			// that fetched answered "no change" so once under load).
			t.pollUntil(ctx, routedLag, func() bool { return t.startedSince(seq) || t.DocSeq() > navBefore })
		}
	}
	if t.DocSeq() > navBefore { // newDoc, or one that came during the round trip
		t.pollUntil(ctx, loadMax, t.DOMReady)
		t.waitLoaded(ctx)
		return
	}
	if t.startedSince(seq) {
		t.pollUntil(ctx, t.c.env.SettleTimeout, func() bool { return t.pendingSince(seq) == 0 })
		t.domQuiet(ctx)
		return
	}
	if r != nil && r.nav == t.LastNavSeq() {
		t.keepSettled(r)
	}
}

// routedLag is how long Settle waits, after its round trip, for a request
// the action started while requests are intercepted.
const routedLag = 250 * time.Millisecond

// roundTrip makes one bounded call into the page over Playwright's own
// session, so events an action set off in the page (a request, a popup
// opening, a navigation starting) have reached us before we look. The call
// reads the title in Playwright's utility world: the page sees nothing.
func (t *Tab) roundTrip(ctx context.Context) {
	// The page answered the settle read just before: only a busy machine
	// makes this take long.
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, _ = call(ctx, t.c, "round trip", stopOn{modal: t, busyOK: true}, func() (any, error) { return t.p.Title() })
}

// waitLoaded waits for the load event or a quiet network, at most loadMax.
// It watches the tab's events rather than calling WaitForLoadState, so no
// Playwright call outlives it.
func (t *Tab) waitLoaded(ctx context.Context) {
	t.pollUntil(ctx, loadMax, func() bool { return t.Loaded() || t.netQuietFor() >= loadQuiet })
}

// pollUntil checks done at each change of the tab's load state or requests
// and every 10 ms, until it holds, max passes, ctx ends, a modal opens or the
// browser is lost.
func (t *Tab) pollUntil(ctx context.Context, max time.Duration, done func() bool) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	modal := t.ModalOpened()
	for {
		// Take the wake channel before the check, so a change between
		// the two still wakes us.
		woken := t.woken()
		if done() {
			return
		}
		select {
		case <-woken:
		case <-ctx.Done():
			return
		case <-modal:
			return
		case <-t.c.env.Lost:
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// PressKey is the step that presses a key (or a chord like Control+A) on
// the focused element.
func (t *Tab) PressKey(key string) Step {
	return Step{op: "press " + key, fn: func() error { return t.p.Keyboard().Press(key) }}
}

// After the requests an action started have ended, the page still has to
// use their answers (parse the JSON, render the list): domQuiet waits until
// its document has not changed for quietFor, at most quietMax. It counts
// changes with a MutationObserver in the isolated world and keeps time on
// our side, so the page sees no timer or call of ours.
const (
	quietFor  = 50 * time.Millisecond
	quietPoll = 15 * time.Millisecond
	quietMax  = 500 * time.Millisecond
)

const quietCount = `() => {
  let q = globalThis.__q;
  if (!q || q.d !== document) {
    q = globalThis.__q = { d: document, n: 0, mo: new MutationObserver(r => { q.n += r.length; }) };
    q.mo.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  }
  q.n += q.mo.takeRecords().length;
  return q.n;
}`

func (t *Tab) domQuiet(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, quietMax)
	defer cancel()
	last, err := t.isolated(ctx, "wait for the page to use its answers", quietCount)
	if err != nil {
		return
	}
	since := time.Now()
	tick := time.NewTicker(quietPoll)
	defer tick.Stop()
	for time.Since(since) < quietFor {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n, err := t.isolated(ctx, "wait for the page to use its answers", quietCount)
		if err != nil {
			return
		}
		if n != last {
			last, since = n, time.Now()
		}
	}
}
