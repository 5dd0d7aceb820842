// Package flight runs a piece of shared work once for every caller that
// asks for it while it runs: a browser launch, a driver start, a binary
// resolution, a restart. Callers wait with their own context; the work runs
// on a goroutine the Flight owns and Wait waits for.
package flight

import (
	"context"
	"sync"
)

// Flight runs at most one call of its work at a time. Callers that arrive
// while a call runs share its result; a caller that arrives after it ended
// starts a new one. The zero value is ready to use. A Flight is safe for
// concurrent use.
type Flight[T any] struct {
	mu sync.Mutex
	// call is the call in flight, nil when none is. Its goroutine clears it
	// and closes its done under mu, so a Wait that finds it nil under mu
	// knows every call begun before has ended. (A sync.WaitGroup here had
	// its Add from zero race a concurrent Wait.)
	call *call[T]
}

type call[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// Do returns the result of the call in flight, starting work in a new
// goroutine if none is. It returns early with ctx's error when ctx ends
// first; the work goes on for the other callers and for Wait. work should
// bound itself (its own timeout): no caller's context reaches it.
func (f *Flight[T]) Do(ctx context.Context, work func() (T, error)) (T, error) {
	c := f.join(work)
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (f *Flight[T]) join(work func() (T, error)) *call[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.call; c != nil {
		return c
	}
	c := &call[T]{done: make(chan struct{})}
	f.call = c
	go func() {
		c.val, c.err = work()
		f.mu.Lock()
		f.call = nil
		close(c.done)
		f.mu.Unlock()
	}()
	return c
}

// Start starts work in a new goroutine unless a call is in flight, and
// returns at once; later callers of Do share that call.
func (f *Flight[T]) Start(work func() (T, error)) { f.join(work) }

// Running reports whether a call is in flight.
func (f *Flight[T]) Running() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.call != nil
}

// Wait waits until no call is in flight, or ctx ends. It does not stop a
// running call: the owner stops the work (e.g. by cancelling the context the
// work was given) and then waits.
func (f *Flight[T]) Wait(ctx context.Context) error {
	for {
		f.mu.Lock()
		c := f.call
		f.mu.Unlock()
		if c == nil {
			return nil
		}
		// Once c ends, look again: a call begun since is waited for too.
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
