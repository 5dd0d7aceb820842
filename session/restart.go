package session

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// The restart rule, shared by a session (its browser generations) and a
// SharedBrowser (its browser processes): something launched on first use
// and replaced when lost, one launch shared by concurrent callers (a
// flight), never revived.

// restartRule holds what relaunch reads and writes of its owner; every
// pointer is guarded by mu.
type restartRule[T comparable] struct {
	mu      *sync.Mutex
	cur     *T    // the current one, zero if none
	n       *int  // launches so far: the next is numbered n+1
	closed  *bool // set when the owner closes: nothing is launched or kept
	alive   func(T) bool
	ctx     context.Context // ends when the owner closes
	timeout time.Duration   // bounds one launch
	launch  func(ctx context.Context, n int) (T, error)
	dispose func(ctx context.Context, v T)
}

// relaunch returns the current one if it is alive. Otherwise it disposes
// of the lost one, launches the next and makes it current; replaced says a
// lost one was disposed of first. A launch that ends after the owner closed
// is disposed of, and ErrClosed returned. It runs on the owner's launch
// flight.
func (r restartRule[T]) relaunch() (v T, replaced bool, err error) {
	var zero T
	r.mu.Lock()
	if *r.closed {
		r.mu.Unlock()
		return zero, false, ErrClosed
	}
	if cur := *r.cur; cur != zero && r.alive(cur) {
		// A launch that ended just before this one began.
		r.mu.Unlock()
		return cur, false, nil
	}
	old := *r.cur
	*r.cur = zero
	*r.n++
	n := *r.n
	r.mu.Unlock()
	if old != zero {
		// Unreachable from here on; bounded by its own dispose.
		r.dispose(r.ctx, old)
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
	defer cancel()
	v, err = r.launch(ctx, n)
	r.mu.Lock()
	if *r.closed && v != zero {
		r.mu.Unlock()
		r.dispose(context.Background(), v)
		return zero, false, ErrClosed
	}
	*r.cur = v
	r.mu.Unlock()
	return v, old != zero, err
}

// browserClose is how one browser (a generation's, or the shared one) is
// disposed of.
type browserClose struct {
	// close is Playwright's close (or a detach from a remote browser); it
	// gets 10 s (less if the caller's context ends first).
	close func()
	// lost marks the browser lost once the close returned or timed out.
	lost func()
	// kill, if set, is the profile whose processes are SIGKILLed if they
	// outlive the close (5 s).
	kill string
	// drain, if set, waits for the calls in flight, which end with the
	// browser.
	drain func()
	// remove, if set, is the profile directory removed at the end.
	remove string
	// log names the browser ("generation", "launch").
	log  zerolog.Logger
	what string
}

// closeBrowser closes a browser, makes sure its processes are gone and
// removes its profile, all bounded by ctx (and at most 10 s for the close
// itself).
func closeBrowser(ctx context.Context, c browserClose) {
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.close()
	}()
	select {
	case <-done:
	case <-closeCtx.Done():
		c.log.Warn().Msg(c.what + " close timed out; killing")
	}
	c.lost()
	if c.kill != "" {
		killAndWait(c.kill, 5*time.Second)
	}
	if c.drain != nil {
		// The browser is closed (or killed): every call in flight has
		// ended or ends now.
		c.drain()
	}
	<-done // the close ends once the process is gone
	if c.remove != "" {
		if err := removeAllRetry(c.remove); err != nil {
			c.log.Warn().Err(err).Msg("remove the " + c.what + "'s profile")
		}
	}
	c.log.Info().Msg(c.what + " disposed")
}
