package session

import (
	"context"
	"sync"
	"time"
)

// idleCloseTimeout bounds closing an idle browser.
const idleCloseTimeout = 30 * time.Second

// idleWatch is the session's record of tool-call activity for
// Config.IdleTimeout: the calls in flight through Do, when the last one
// ended, and the idle close in progress (which new calls wait for).
type idleWatch struct {
	mu       sync.Mutex
	inflight int
	last     time.Time
	// closing is non-nil while an idle close runs; it is closed when the
	// close is over.
	closing chan struct{}
}

// begin records a call starting. It waits (within ctx) for an idle close in
// progress, so a call never runs on a browser being closed under it.
func (w *idleWatch) begin(ctx context.Context) error {
	w.mu.Lock()
	for w.closing != nil {
		ch := w.closing
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		w.mu.Lock()
	}
	w.inflight++
	w.mu.Unlock()
	return nil
}

// end records a call ending.
func (w *idleWatch) end() {
	w.mu.Lock()
	w.inflight--
	w.last = time.Now()
	w.mu.Unlock()
}

// due reports whether the session has been idle for d: no call in flight
// and none ended within d. If it has, it marks an idle close in progress
// (finished by closed); if not, it returns how long to wait before asking
// again.
func (w *idleWatch) due(d time.Duration) (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inflight > 0 {
		return false, d // end() moves last; look again a full period later
	}
	if idle := time.Since(w.last); idle < d {
		return false, d - idle
	}
	w.closing = make(chan struct{})
	return true, d
}

// closed ends the idle close that due started and restarts the count.
func (w *idleWatch) closed() {
	w.mu.Lock()
	close(w.closing)
	w.closing = nil
	w.last = time.Now()
	w.mu.Unlock()
}

// startIdleWatch starts the goroutine that closes the browser after
// cfg.IdleTimeout without a completed call; the session owns it and Close
// waits for it. With a zero IdleTimeout it does nothing.
func (s *Session) startIdleWatch() {
	d := s.cfg.IdleTimeout
	if d <= 0 {
		return
	}
	s.idle.mu.Lock()
	s.idle.last = time.Now()
	s.idle.mu.Unlock()
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		s.watchIdle(d)
	}()
}

// watchIdle runs until the session closes.
func (s *Session) watchIdle(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		idle, next := s.idle.due(d)
		if idle {
			s.closeIdle(d)
		}
		t.Reset(next)
	}
}

// closeIdle closes the browser (if one is open) through CloseBrowser, as
// browser_close does; the next call launches a new one. It is bounded and
// not cancelled by Close, which waits for it and then finds no browser.
func (s *Session) closeIdle(d time.Duration) {
	defer s.idle.closed()
	g := s.Current()
	if g == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), idleCloseTimeout)
	defer cancel()
	if err := s.CloseBrowser(ctx); err != nil {
		s.log.Warn().Err(err).Int("generation", g.N).Msg("closing the idle browser did not finish")
		return
	}
	s.log.Info().Int("generation", g.N).Dur("idle", d).Msg("browser closed after idle timeout; the next call relaunches it")
	s.notify(NoticeNotice, "idle", "browser closed after %v idle; the next call relaunches it", d)
}
