package session

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestIdleWatch: idle time counts only from the end of the last call, never
// while one is in flight; a call waits for an idle close in progress.
func TestIdleWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const d = time.Second
		var w idleWatch
		w.last = time.Now()
		if due, next := w.due(d); due || next != d {
			t.Fatalf("just started: due=%v next=%v", due, next)
		}
		ctx := context.Background()
		if err := w.begin(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * d)
		if due, _ := w.due(d); due {
			t.Fatal("due with a call in flight")
		}
		w.end()
		time.Sleep(d / 2)
		if due, next := w.due(d); due || next != d/2 {
			t.Fatalf("half idle: due=%v next=%v", due, next)
		}
		time.Sleep(d / 2)
		due, _ := w.due(d)
		if !due {
			t.Fatal("not due after a full idle period")
		}
		// A call arriving during the close waits for it.
		started := make(chan struct{})
		go func() {
			if err := w.begin(ctx); err != nil {
				t.Error(err)
			}
			close(started)
			w.end()
		}()
		synctest.Wait()
		select {
		case <-started:
			t.Fatal("a call started during the idle close")
		default:
		}
		w.closed()
		<-started
		synctest.Wait() // its end() too: it ran after close(started)
		// A call whose context ends while it waits gives up.
		if due, _ := w.due(0); !due {
			t.Fatal("not due with a zero period")
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := w.begin(cctx); err == nil {
			t.Fatal("begin with an ended context during a close succeeded")
		}
		w.closed()
	})
}
