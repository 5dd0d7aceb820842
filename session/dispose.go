package session

import (
	"sync"
	"time"
)

// disposeBudget bounds all of a generation's dispose hooks together.
const disposeBudget = 15 * time.Second

const keyDisposers = "session.disposers"

type disposers struct {
	mu  sync.Mutex
	fns map[string]func()
}

func (g *Generation) disposers() *disposers {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, _ := g.values[keyDisposers].(*disposers)
	if d == nil {
		d = &disposers{fns: map[string]func(){}}
		g.values[keyDisposers] = d
	}
	return d
}

// OnDispose registers fn under key to run when the generation's browser is
// closed on purpose (the session closes, or the agent closes the browser),
// before it closes, while it still answers: e.g. to save a running trace.
// It does not run after the browser was lost. A later registration under the
// same key replaces the earlier one; nil removes it. The hooks get 15 s in
// all; one that takes longer is left behind.
func (g *Generation) OnDispose(key string, fn func()) {
	d := g.disposers()
	d.mu.Lock()
	if fn == nil {
		delete(d.fns, key)
	} else {
		d.fns[key] = fn
	}
	d.mu.Unlock()
}

// runDisposers runs the OnDispose hooks once, concurrently, bounded.
func (g *Generation) runDisposers() {
	d := g.disposers()
	d.mu.Lock()
	fns := d.fns
	d.fns = map[string]func(){}
	d.mu.Unlock()
	if len(fns) == 0 || g.Lost() {
		return
	}
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(disposeBudget):
		g.s.log.Warn().Int("generation", g.N).Msg("dispose hooks timed out")
	}
}
