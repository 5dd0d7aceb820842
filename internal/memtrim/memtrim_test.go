package memtrim

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// TestNoteSchedulesOneTrimPerSpike: the first call sets the base; calls
// within the slack never trim; a spike trims once, after the delay, however
// many calls see it; the next spike waits out the interval.
func TestNoteSchedulesOneTrimPerSpike(t *testing.T) {
	var n atomic.Int32
	tr := &Trimmer{Slack: 10, Delay: 20 * time.Millisecond, Interval: 300 * time.Millisecond, trim: func() { n.Add(1) }}
	tr.note(100)
	tr.note(110)
	time.Sleep(60 * time.Millisecond)
	if got := n.Load(); got != 0 {
		t.Fatalf("trims within the slack = %d, want 0", got)
	}
	start := time.Now()
	tr.note(1 << 40) // a spike: far above any real heap, so the base after the trim stays below it
	tr.note(1 << 40)
	waitFor(t, func() bool { return n.Load() == 1 })
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("trim ran after %v, before its delay", d)
	}
	time.Sleep(60 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("trims for one spike = %d, want 1", got)
	}
	tr.note(1 << 40)
	time.Sleep(100 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("a second trim ran %v after the first, within the interval", time.Since(start))
	}
	waitFor(t, func() bool { return n.Load() == 2 })
}

// TestTrimGivesBackASpike: after a spike of garbage, the real trim returns
// it: the heap holds less than before the trim.
func TestTrimGivesBackASpike(t *testing.T) {
	var n atomic.Int32
	tr := &Trimmer{Delay: time.Millisecond, trim: func() { debug.FreeOSMemory(); n.Add(1) }}
	tr.Note()
	spike()
	before := heapHeld()
	tr.Note()
	waitFor(t, func() bool { return n.Load() == 1 })
	if after := heapHeld(); after >= before-32<<20 {
		t.Fatalf("heap held %d MiB before the trim, %d MiB after: want 32 MiB less at least", before>>20, after>>20)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// spike allocates 64 MiB and drops it.
func spike() {
	s := make([][]byte, 64)
	for i := range s {
		s[i] = make([]byte, 1<<20)
	}
	runtime.KeepAlive(s)
}
