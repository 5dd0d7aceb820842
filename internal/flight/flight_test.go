package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestSharedByConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f Flight[int]
		var runs atomic.Int32
		work := func() (int, error) {
			n := runs.Add(1)
			time.Sleep(time.Second)
			return int(n), nil
		}
		var wg sync.WaitGroup
		got := make([]int, 8)
		for i := range got {
			wg.Go(func() {
				v, err := f.Do(context.Background(), work)
				if err != nil {
					t.Errorf("caller %d: %v", i, err)
				}
				got[i] = v
			})
		}
		wg.Wait()
		if runs.Load() != 1 {
			t.Fatalf("work ran %d times, want 1", runs.Load())
		}
		for i, v := range got {
			if v != 1 {
				t.Errorf("caller %d got %d, want the shared result 1", i, v)
			}
		}
	})
}

func TestNewCallAfterTheLastEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f Flight[int]
		var runs atomic.Int32
		boom := errors.New("boom")
		work := func() (int, error) {
			if runs.Add(1) == 1 {
				return 0, boom
			}
			return 7, nil
		}
		if _, err := f.Do(context.Background(), work); !errors.Is(err, boom) {
			t.Fatalf("first call: %v, want boom", err)
		}
		v, err := f.Do(context.Background(), work)
		if err != nil || v != 7 {
			t.Fatalf("second call: %d, %v; want 7 after a failed call (nothing is kept)", v, err)
		}
		if f.Running() {
			t.Fatal("Running after every call ended")
		}
	})
}

func TestCallerContextEndsEarlyWorkGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f Flight[string]
		release := make(chan struct{})
		finished := make(chan struct{})
		work := func() (string, error) {
			<-release
			close(finished)
			return "done", nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := f.Do(ctx, work); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Do = %v, want the caller's deadline", err)
		}
		if !f.Running() {
			t.Fatal("the work stopped with its first caller")
		}
		// A second caller joins the same call.
		res := make(chan string, 1)
		go func() {
			v, _ := f.Do(context.Background(), func() (string, error) { return "second", nil })
			res <- v
		}()
		synctest.Wait()
		close(release)
		if v := <-res; v != "done" {
			t.Fatalf("joining caller got %q, want the running call's result", v)
		}
		<-finished
	})
}

func TestWaitHonoursItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f Flight[int]
		release := make(chan struct{})
		go func() { _, _ = f.Do(context.Background(), func() (int, error) { <-release; return 1, nil }) }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		if err := f.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v, want its deadline", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("Wait returned after %v, want at its 5s deadline", d)
		}
		close(release)
		if err := f.Wait(context.Background()); err != nil {
			t.Fatalf("Wait after the call ended: %v", err)
		}
	})
}

func TestStartDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f Flight[int]
		var runs atomic.Int32
		release := make(chan struct{})
		work := func() (int, error) { runs.Add(1); <-release; return 3, nil }
		f.Start(work)
		f.Start(work) // joins the call in flight
		synctest.Wait()
		if !f.Running() || runs.Load() != 1 {
			t.Fatalf("running %v, runs %d; want one call in flight", f.Running(), runs.Load())
		}
		got := make(chan int, 1)
		go func() { v, _ := f.Do(context.Background(), work); got <- v }()
		synctest.Wait() // Do has joined the started call
		close(release)
		if v := <-got; v != 3 {
			t.Fatalf("Do after Start = %d; want the started call's 3", v)
		}
		if runs.Load() != 1 {
			t.Fatalf("work ran %d times, want 1", runs.Load())
		}
	})
}

// TestWaitRacesStart starts calls while others wait, with no order between
// them: under -race, a Wait must not race the start of a call (a
// sync.WaitGroup's Add from zero concurrent with its Wait does).
func TestWaitRacesStart(t *testing.T) {
	var f Flight[int]
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { f.Start(func() (int, error) { return 1, nil }) })
		wg.Go(func() {
			if err := f.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := f.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.Running() {
		t.Fatal("a call is in flight after Wait returned")
	}
}
