package session

import (
	"context"
	"sync"
	"time"
)

// disposeBudget bounds all of a generation's dispose hooks together.
const disposeBudget = 15 * time.Second

// OnDispose registers fn under key to run when the generation's browser is
// closed on purpose (the session closes, or the agent closes the browser),
// before it closes, while it still answers: e.g. to save a running trace.
// It does not run after the browser was lost. A later registration under the
// same key replaces the earlier one; nil removes it. The hooks get 15 s in
// all (less if the caller's context ends first); fn gets that deadline.
func (g *Generation) OnDispose(key string, fn func(ctx context.Context)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.disposers == nil {
		g.state.disposers = map[string]func(context.Context){}
	}
	if fn == nil {
		delete(g.state.disposers, key)
	} else {
		g.state.disposers[key] = fn
	}
}

// runDisposers runs the OnDispose hooks once, concurrently, bounded by ctx
// and disposeBudget. It waits for every hook: each is bounded by the
// context it gets.
func (g *Generation) runDisposers(ctx context.Context) {
	g.mu.Lock()
	fns := g.state.disposers
	g.state.disposers = nil
	g.mu.Unlock()
	if len(fns) == 0 || g.Lost() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, disposeBudget)
	defer cancel()
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Go(func() { fn(ctx) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		g.s.log.Warn().Int("generation", g.N).Msg("dispose hooks timed out")
	}
}
