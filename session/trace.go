package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// ErrNoTrace means no trace is running in the generation.
var ErrNoTrace = errors.New("no trace is running")

// ErrTraceBusy means the last trace is still being started or saved.
var ErrTraceBusy = errors.New("the last trace is still being saved")

// TraceRunningError says a trace is already running in the generation.
type TraceRunningError struct {
	// Started is when it started.
	Started time.Time
}

func (e *TraceRunningError) Error() string {
	return fmt.Sprintf("a trace is already running (started %s)", e.Started.Format("15:04:05"))
}

// TraceOptions shape a trace.
type TraceOptions struct {
	// Title names the trace in the trace viewer; if empty, it has none.
	Title string
	// Save keeps the trace when the browser is closed on purpose while it
	// runs (the session closes, the agent closes the browser): it reads the
	// trace and returns where it put it. If nil, such a trace is dropped.
	Save func(trace io.Reader) (string, error)
}

type traceState int

const (
	traceIdle traceState = iota
	traceStarting
	traceRunning
	traceStopping
)

// Trace is the state of a Playwright trace recorded in a generation
// (browser_start_tracing / browser_stop_tracing): one at a time.
type Trace struct {
	mu      sync.Mutex
	state   traceState
	started time.Time
}

// traceKey registers the save-on-close hook (OnDispose).
const traceKey = "session.trace"

func (g *Generation) trace() *Trace {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state.trace == nil {
		g.state.trace = &Trace{}
	}
	return g.state.trace
}

func (tr *Trace) set(s traceState) {
	tr.mu.Lock()
	tr.state = s
	tr.mu.Unlock()
}

// TraceRunning reports whether a trace runs, and since when.
func (g *Generation) TraceRunning() (started time.Time, ok bool) {
	tr := g.trace()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.started, tr.state == traceRunning
}

// StartTrace starts recording a Playwright trace of the generation, with
// screenshots and DOM snapshots. It fails with a *TraceRunningError when
// one runs, or ErrTraceBusy while the last one is being saved. A trace
// still running when the browser is closed on purpose is saved to
// o.SavePath.
func (g *Generation) StartTrace(ctx context.Context, o TraceOptions) error {
	tr := g.trace()
	tr.mu.Lock()
	switch tr.state {
	case traceRunning, traceStarting:
		started := tr.started
		tr.mu.Unlock()
		return &TraceRunningError{Started: started}
	case traceStopping:
		tr.mu.Unlock()
		return ErrTraceBusy
	}
	tr.state, tr.started = traceStarting, time.Now()
	tr.mu.Unlock()
	opts := playwright.TracingStartOptions{Screenshots: playwright.Bool(true), Snapshots: playwright.Bool(true)}
	if o.Title != "" {
		opts.Title = playwright.String(o.Title)
	}
	return g.traceCall(ctx, "start tracing", func() error { return g.bc.Tracing().Start(opts) }, func(err error) {
		if err != nil {
			tr.set(traceIdle)
			return
		}
		tr.set(traceRunning)
		if o.Save != nil {
			g.OnDispose(traceKey, func(ctx context.Context) { g.saveTraceOnClose(ctx, tr, o.Save) })
		}
	})
}

// StopTrace stops the running trace and hands it to save (a .zip the
// Playwright trace viewer opens): the driver writes it into a private
// temporary directory, never to a path the agent named. It returns when the
// trace started, or ErrNoTrace. The trace ends even when saving it fails.
func (g *Generation) StopTrace(ctx context.Context, save func(trace io.Reader) error) (started time.Time, err error) {
	tr := g.trace()
	tr.mu.Lock()
	switch tr.state {
	case traceIdle:
		tr.mu.Unlock()
		return time.Time{}, ErrNoTrace
	case traceStarting, traceStopping:
		tr.mu.Unlock()
		return time.Time{}, ErrTraceBusy
	}
	tr.state = traceStopping
	started = tr.started
	tr.mu.Unlock()
	g.OnDispose(traceKey, nil)
	err = g.traceCall(ctx, "stop tracing", func() error { return g.stopTraceInto(save) }, func(error) { tr.set(traceIdle) })
	return started, err
}

// stopTraceInto stops the trace into a private file and hands it to save;
// the file is removed afterwards.
func (g *Generation) stopTraceInto(save func(io.Reader) error) error {
	dir, err := ownedTempDir("trace-")
	if err != nil {
		_ = g.bc.Tracing().Stop() // end it all the same
		return err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "trace.zip")
	if err := g.bc.Tracing().Stop(p); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("read the trace: %w", err)
	}
	defer f.Close()
	return save(f)
}

// saveTraceOnClose is the dispose hook of a running trace.
func (g *Generation) saveTraceOnClose(ctx context.Context, tr *Trace, saveTo func(io.Reader) (string, error)) {
	tr.mu.Lock()
	if tr.state != traceRunning {
		tr.mu.Unlock()
		return
	}
	tr.state = traceStopping
	tr.mu.Unlock()
	err := g.traceCall(ctx, "save the running trace", func() error {
		return g.stopTraceInto(func(r io.Reader) error {
			p, err := saveTo(r)
			if err == nil {
				// Logged here: the save may end after ctx.
				g.s.log.Info().Str("path", p).Int("generation", g.N).Msg("saved the running trace on close")
			}
			return err
		})
	}, func(error) { tr.set(traceIdle) })
	if err != nil {
		g.s.log.Warn().Err(err).Int("generation", g.N).Msg("save the running trace on close")
	}
}

// traceCall runs fn through the door and then done with its result, once:
// when the browser call ends (which may be after ctx), or at once if it
// never started. So the trace's state follows the browser's, not the
// caller's patience.
func (g *Generation) traceCall(ctx context.Context, op string, fn func() error, done func(error)) error {
	var claimed atomic.Bool
	err := page.Run(ctx, g.Context, op, func() error {
		if !claimed.CompareAndSwap(false, true) {
			return nil // the caller gave up before the call started
		}
		err := fn()
		done(err)
		return err
	})
	if claimed.CompareAndSwap(false, true) {
		done(err)
	}
	return err
}
