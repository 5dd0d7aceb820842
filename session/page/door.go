package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// The door: every Playwright call on a page or a browser context goes
// through run (or call), which races it against the caller's context, the
// loss of the browser and, for page work, a dialog or file chooser that
// opens and blocks the page. The call itself cannot be cancelled in
// Playwright; it runs on a goroutine the Context owns, which ends when the
// call returns or the browser closes, and which Context.Drain (the
// generation's dispose) waits for.

var (
	// ErrBrowserGone means the browser of the tab's generation was lost: no
	// call on it can succeed (the session relaunches it on its next call).
	ErrBrowserGone = errors.New("browser gone")
	// ErrModal means a dialog or file chooser opened (or was open) while the
	// call ran: the page is blocked until browser_handle_dialog or
	// browser_file_upload handles it.
	ErrModal = errors.New("a dialog or file chooser blocks the page")
	// ErrBlocked means the page did not answer while a dialog or file
	// chooser was open in another tab (pages of one site share a renderer,
	// which a dialog blocks): see BlockedError.
	ErrBlocked = errors.New("the page is blocked by a dialog in another tab")
	// ErrTabClosed means the tab was closed.
	ErrTabClosed = errors.New("the tab was closed")
	// ErrNotResponding means the page's main thread did not answer a
	// trivial call in time (a script that never yields): the call gave up
	// instead of waiting out its timeout. Navigating away stops its scripts.
	ErrNotResponding = errors.New("the page is not responding (its main thread is busy)")
	// ErrCrashed means the page's renderer crashed: no call on the page can
	// succeed; the next navigation replaces the tab's page.
	ErrCrashed = errors.New("the page crashed (its renderer died)")
	// ErrSelfNavigating means the page keeps loading new documents by
	// itself (a script redirect loop, a page that reloads every few
	// milliseconds): a call on it cannot finish before its document is
	// gone.
	ErrSelfNavigating = errors.New("the page keeps loading new documents by itself (a redirect loop, or a reload every few milliseconds)")
	// ErrUnknownRef means a ref does not name an element of the last snapshot
	// of the tab (or is no longer on the page).
	ErrUnknownRef = snapshot.ErrUnknownRef
)

// TimeoutError says a browser call did not finish in time: Playwright's own
// timeout, or the caller's deadline.
type TimeoutError struct {
	// Op is what was being done ("click", "navigate to …").
	Op string
	// Msg is Playwright's message, one line, if it timed out itself.
	Msg string
	// Err is the cause (playwright.ErrTimeout or context.DeadlineExceeded).
	Err error
	// Action is set when a step of an agent action (Tab.Act: a click, a
	// fill…) timed out, which Playwright spends waiting for its element to
	// be actionable.
	Action bool
}

func (e *TimeoutError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return "timed out" // the wrapping error names the step
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// PageError is an error Playwright reported for a call, condensed to its
// first line.
type PageError struct {
	Op  string
	Msg string
	Err error
}

func (e *PageError) Error() string { return e.Msg }

func (e *PageError) Unwrap() error { return e.Err }

// BlockedError says which tab's modal state blocks a call; it wraps
// ErrBlocked.
type BlockedError struct {
	// Tab is the index of the tab with the dialog or file chooser.
	Tab int
	// Modal describes it.
	Modal string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("the page does not answer while tab %d shows a modal state (%s): select tab %d with browser_tabs and handle it", e.Tab, e.Modal, e.Tab)
}

func (e *BlockedError) Unwrap() error { return ErrBlocked }

// blockedGrace is how long a call may go on after a modal state opened in
// another tab before it is answered with a BlockedError: pages of other
// sites are not blocked and answer in time.
const blockedGrace = time.Second

// RefError says a ref cannot be resolved; it wraps ErrUnknownRef.
type RefError struct {
	Ref string
	Msg string
}

func (e *RefError) Error() string { return e.Msg }

func (e *RefError) Unwrap() error { return ErrUnknownRef }

func refErr(ref, format string, args ...any) error {
	return &RefError{Ref: ref, Msg: fmt.Sprintf(format, args...)}
}

// Classify turns an error Playwright returned for op into the door's
// errors (a *TimeoutError, a *PageError…), for a call made outside the
// door (connecting to a browser).
func Classify(op string, err error) error { return classify(op, err, false) }

// classify turns what Playwright returned into the session's errors.
func classify(op string, err error, lost bool) error {
	if err == nil {
		return nil
	}
	if lost {
		return fmt.Errorf("%s: %w", op, ErrBrowserGone)
	}
	var te *TimeoutError
	var pe *PageError
	var re *RefError
	if errors.As(err, &te) || errors.As(err, &pe) || errors.As(err, &re) || errors.Is(err, ErrModal) || errors.Is(err, ErrBlocked) || errors.Is(err, ErrBrowserGone) || errors.Is(err, ErrTabClosed) || errors.Is(err, ErrNotResponding) || errors.Is(err, ErrCrashed) || errors.Is(err, ErrSelfNavigating) {
		return err
	}
	msg := err.Error()
	var pw *playwright.Error
	if errors.As(err, &pw) && pw.Message != "" {
		msg = pw.Message
	}
	msg = clip.FirstLine(strings.TrimPrefix(msg, "playwright: "))
	if errors.Is(err, playwright.ErrTimeout) || strings.HasPrefix(msg, "Timeout ") {
		return &TimeoutError{Op: op, Msg: msg, Err: err}
	}
	if errors.Is(err, playwright.ErrTargetClosed) {
		return &PageError{Op: op, Msg: msg, Err: ErrTabClosed}
	}
	return &PageError{Op: op, Msg: msg, Err: err}
}

// calls tracks the goroutines that carry browser calls of one browser
// context.
type calls struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	closed bool
}

// add admits one call; false once the context is drained (its generation
// disposed).
func (c *calls) add() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	return true
}

// close refuses new calls and waits, at most d, for those in flight (they
// end when the browser closes).
func (c *calls) close(d time.Duration) bool {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	done := make(chan struct{})
	go func() {
		c.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// stopOn says what, besides ctx and browser loss, ends the wait for a call.
type stopOn struct {
	// modal: a dialog or file chooser opening (or open) on this tab; and,
	// after blockedGrace, one on another tab of the generation. It also
	// makes the call page work: it ends at once when the page crashes
	// (ErrCrashed) or keeps loading new documents by itself
	// (ErrSelfNavigating), and on a tab whose page missed its last
	// liveness probe (Tab.Busy) it starts with a probe and ends with
	// ErrNotResponding when that goes unanswered.
	modal *Tab
	// busyOK: the call watches the page's liveness itself (a probe, a
	// navigation, a snapshot): no probe first.
	busyOK bool
	// navigates: the call is a navigation, which the page's own
	// navigations may interrupt but do not end.
	navigates bool
	// bound, if set, bounds the call (for Playwright calls without a
	// timeout of their own).
	bound time.Duration
}

// call runs fn on a goroutine owned by c and returns its result, or an error
// as soon as ctx ends (a *TimeoutError for a deadline), the browser is lost
// (ErrBrowserGone) or, with stop.modal, a modal state opens (ErrModal).
func call[T any](ctx context.Context, c *Context, op string, stop stopOn, fn func() (T, error)) (T, error) {
	var zero T
	if c.isLost() {
		return zero, fmt.Errorf("%s: %w", op, ErrBrowserGone)
	}
	if err := ctx.Err(); err != nil {
		return zero, ctxErr(op, err)
	}
	if stop.bound > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, stop.bound)
		defer cancel()
	}
	var modal, elsewhere, crashed, churned <-chan struct{}
	var blocker func() *Tab
	if t := stop.modal; t != nil {
		if t.Crashed() {
			return zero, fmt.Errorf("%s: %w", op, ErrCrashed)
		}
		if !stop.navigates && t.churning() {
			return zero, fmt.Errorf("%s: %w", op, ErrSelfNavigating)
		}
		modal = t.ModalOpened()
		select {
		case <-modal:
			return zero, ErrModal
		default:
		}
		if !stop.busyOK && t.Busy() && !t.alive(ctx) {
			return zero, fmt.Errorf("%s: %w", op, ErrNotResponding)
		}
		elsewhere, blocker = c.modalElsewhere(t)
		crashed = t.crashCh
		if !stop.navigates {
			churned = t.churned()
		}
	}
	if !c.calls.add() {
		return zero, fmt.Errorf("%s: %w", op, ErrBrowserGone)
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer c.calls.wg.Done()
		var r result
		r.err = safely(func() (err error) {
			r.v, err = fn()
			return err
		})
		done <- r
	}()
	var grace <-chan time.Time
	for {
		select {
		case r := <-done:
			if r.err != nil && stop.modal != nil && stop.modal.Crashed() {
				return zero, fmt.Errorf("%s: %w", op, ErrCrashed)
			}
			if r.err != nil {
				return zero, classify(op, r.err, c.isLost())
			}
			return r.v, nil
		case <-modal:
			return zero, ErrModal
		case <-crashed:
			return zero, fmt.Errorf("%s: %w", op, ErrCrashed)
		case <-churned:
			return zero, fmt.Errorf("%s: %w", op, ErrSelfNavigating)
		case <-elsewhere:
			elsewhere = nil
			timer := time.NewTimer(blockedGrace)
			defer timer.Stop()
			grace = timer.C
		case <-grace:
			if o := blocker(); o != nil {
				desc := "a dialog"
				if ms := o.Modals(); len(ms) > 0 {
					desc = ms[0].Description
				}
				return zero, &BlockedError{Tab: c.indexOf(o), Modal: desc}
			}
			// Handled meanwhile: watch again.
			elsewhere, grace = nil, nil
			elsewhere, _ = c.modalElsewhere(stop.modal)
		case <-c.env.Lost:
			return zero, fmt.Errorf("%s: %w", op, ErrBrowserGone)
		case <-ctx.Done():
			return zero, ctxErr(op, ctx.Err())
		}
	}
}

func ctxErr(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, &TimeoutError{Op: op, Err: err})
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Go runs fn on a goroutine the browser context owns: Drain waits for it.
// Nothing runs once the context is being drained (its generation disposed).
func (c *Context) Go(fn func()) {
	if !c.calls.add() {
		return
	}
	go func() {
		defer c.calls.wg.Done()
		_ = safely(func() error { fn(); return nil })
	}()
}

// run is call for work without a result.
func run(ctx context.Context, c *Context, op string, stop stopOn, fn func() error) error {
	_, err := call(ctx, c, op, stop, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// safely runs fn, turning a panic in a library on a request path into an
// error so it cannot take the server down.
func safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return fn()
}
