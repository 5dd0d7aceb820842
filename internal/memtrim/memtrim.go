// Package memtrim gives back to the operating system the Go heap that a
// spike of work left behind. A snapshot of a 500,000-character page parses
// into a tree many times its size; once the answer is sent that memory is
// garbage, but the runtime keeps the pages for reuse (up to twice the live
// heap, and more until its scavenger catches up), so a server that took
// one big snapshot stays that size while it waits for the next call.
//
// After each tool call, Note reads the runtime's own accounting (a few
// microseconds) and, when the heap holds Slack more than it held after the
// last trim (or at start), schedules one debug.FreeOSMemory a
// moment later, in the background, at most once per interval. The live
// heap the collector reports is no guide here: it is as of the last
// collection, which a spike's own allocations set off while its tree was
// still live.
package memtrim

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Trimmer decides when to trim. The zero value uses the defaults below; a
// Trimmer is safe for concurrent use.
type Trimmer struct {
	// Slack is how much more than after the last trim the heap may hold
	// before a trim is due. If zero, 4 MiB: a trim is a collection of a
	// heap that holds a few MiB live (about a millisecond) at most once
	// per Interval, and 16 MiB left the server 35–45 MiB resident after a
	// session where 4 MiB leaves 27–34.
	Slack uint64
	// Delay is how long after the call a trim runs, so that the answer
	// has been sent and is garbage too. If zero, 200 ms.
	Delay time.Duration
	// Interval is the least time between two trims. If zero, 2 s.
	Interval time.Duration
	// trim replaces debug.FreeOSMemory in tests.
	trim func()

	mu sync.Mutex
	// base is what the heap held after the last trim (or at start); a
	// Trimmer made with none takes the heap at its first Note.
	base    uint64
	pending bool
	last    time.Time
}

// Default is the process's trimmer: the Go heap is one per process. Its
// base is the heap at start, before any call.
var Default = &Trimmer{base: heapHeld()}

// Note is Default.Note.
func Note() { Default.Note() }

const (
	defaultSlack    = 4 << 20
	defaultDelay    = 200 * time.Millisecond
	defaultInterval = 2 * time.Second
)

var sampleNames = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

// heapHeld is what the heap holds now: objects (live or not yet
// collected), unused parts of spans, and free pages not yet returned.
func heapHeld() (held uint64) {
	s := make([]metrics.Sample, len(sampleNames))
	for i, n := range sampleNames {
		s[i].Name = n
	}
	metrics.Read(s)
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			continue
		}
		held += s[i].Value.Uint64()
	}
	return held
}

// Note is called after a piece of work (a tool call) ends: it schedules a
// trim when the heap holds far more than it needs.
func (t *Trimmer) Note() { t.note(heapHeld()) }

func (t *Trimmer) note(held uint64) {
	slack := t.Slack
	if slack == 0 {
		slack = defaultSlack
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.base == 0 {
		t.base = held
	}
	if t.pending || held <= t.base+slack {
		return
	}
	interval, delay := t.Interval, t.Delay
	if interval == 0 {
		interval = defaultInterval
	}
	if delay == 0 {
		delay = defaultDelay
	}
	wait := delay
	if next := time.Until(t.last.Add(interval)); next > wait {
		wait = next
	}
	t.pending = true
	time.AfterFunc(wait, t.run)
}

func (t *Trimmer) run() {
	trim := t.trim
	if trim == nil {
		trim = debug.FreeOSMemory
	}
	trim()
	held := heapHeld()
	t.mu.Lock()
	t.base = held
	t.pending = false
	t.last = time.Now()
	t.mu.Unlock()
}
