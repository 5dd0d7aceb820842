package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/flight"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// SharedBrowser is one browser process shared by the sessions of a process
// in "context" isolation: each session's generation is a fresh
// BrowserContext in it (its own cookies, storage and cache; no profile on
// disk), instead of a browser of its own. It trades isolation for density:
// the sessions share one process, one fingerprint seed and one crash.
//
// The browser is launched on first use. When it is lost, every context in it
// is lost with it (so every session's generation), and the next NewContext
// launches a replacement, one launch shared by concurrent callers.
//
// A SharedBrowser is safe for concurrent use.
type SharedBrowser struct {
	drv    *driver.Driver
	cfg    Config
	log    zerolog.Logger
	marker string
	env    map[string]string // the browser's, taken at NewSharedBrowser

	ctx      context.Context // ends at Close; launches run under it
	cancel   context.CancelFunc
	launches flight.Flight[*sharedProc]

	mu     sync.Mutex
	cur    *sharedProc
	n      int
	closed bool
}

// sharedProc is one launched shared browser.
type sharedProc struct {
	n        int
	browser  playwright.Browser
	profile  string // the user data dir Playwright made for it, if found
	lost     chan struct{}
	lostOnce sync.Once
	dispOnce sync.Once
	closing  atomic.Bool // dispose began: a disconnect now is the close we asked for
	// headfulUA is the browser's user agent without its headless token, ""
	// when it has none (read at launch).
	headfulUA string
}

// NewSharedBrowser returns a shared browser launched with cfg (binary,
// headless, sandbox, extra args, fingerprint seed) on first use.
// cfg.UserDataDir is not used: contexts keep nothing on disk. The browser's
// environment (TMPDIR among it) is the process's now: the browser outlives
// whichever session first asks for it.
func NewSharedBrowser(drv *driver.Driver, cfg Config) *SharedBrowser {
	// One window for every context: one browser, one screen.
	cfg = cfg.withWindow()
	var b [6]byte
	_, _ = rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.Background())
	return &SharedBrowser{drv: drv, cfg: cfg, log: cfg.Log.With().Str("browser", "shared").Logger(), marker: hex.EncodeToString(b[:]), env: browserEnv(), ctx: ctx, cancel: cancel}
}

func (p *sharedProc) isLost() bool {
	select {
	case <-p.lost:
		return true
	default:
		return false
	}
}

func (p *sharedProc) markLost() { p.lostOnce.Do(func() { close(p.lost) }) }

// current returns the live shared browser, launching one if needed;
// concurrent callers share one launch.
func (b *SharedBrowser) current(ctx context.Context) (*sharedProc, error) {
	if p, err := b.live(); p != nil || err != nil {
		return p, err
	}
	return b.launches.Do(ctx, b.relaunch)
}

func (b *SharedBrowser) live() (*sharedProc, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if b.cur != nil && !b.cur.isLost() && !b.cur.browser.IsConnected() {
		// Gone, but the Disconnected event has not run yet.
		b.cur.markLost()
	}
	if b.cur != nil && !b.cur.isLost() {
		return b.cur, nil
	}
	return nil, nil
}

// relaunch is the shared launch under the restart rule (restart.go).
func (b *SharedBrowser) relaunch() (*sharedProc, error) {
	p, _, err := restartRule[*sharedProc]{
		mu: &b.mu, cur: &b.cur, n: &b.n, closed: &b.closed,
		alive:   func(p *sharedProc) bool { return !p.isLost() },
		ctx:     b.ctx,
		timeout: b.cfg.launchTimeout(),
		launch:  b.launch,
		dispose: func(_ context.Context, p *sharedProc) { b.dispose(p) },
	}.relaunch()
	return p, err
}

func (b *SharedBrowser) launch(ctx context.Context, n int) (*sharedProc, error) {
	pw, err := b.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	if b.cfg.ResolveBinary == nil {
		return nil, errors.New("no browser binary configured")
	}
	bin, err := b.cfg.ResolveBinary(ctx)
	if err != nil {
		return nil, fmt.Errorf("find a browser: %w", err)
	}
	// The marker lets us find the process (and so the profile Playwright
	// made for it) to make sure it is gone after Close. Chromium ignores
	// switches it does not know.
	marker := fmt.Sprintf("%s=%s-%d", sharedMarkerFlag, b.marker, n)
	opts := playwright.BrowserTypeLaunchOptions{
		ExecutablePath:    playwright.String(bin.BinaryPath),
		Headless:          playwright.Bool(b.cfg.Headless),
		Args:              append(b.cfg.Args(bin), marker),
		IgnoreDefaultArgs: cloakbrowser.IgnoredDefaultArgs(),
		Env:               b.env,
		Timeout:           playwright.Float(float64(b.cfg.launchTimeout().Milliseconds())),
	}
	start := time.Now()
	// Bounded by Playwright's timeout; runs on the launch flight's goroutine.
	br, err := pw.Chromium.Launch(opts)
	if err == nil && ctx.Err() != nil {
		_ = br.Close()
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("launch %s: %w", bin.BinaryPath, ctx.Err())
		}
		return nil, launchError(bin, err)
	}
	p := &sharedProc{n: n, browser: br, lost: make(chan struct{}), profile: markerProfile(marker)}
	if b.cfg.Headless {
		p.headfulUA, _ = b.cfg.headfulFrom(ctx, br) // an error is logged: the browser's own is kept
	}
	br.OnDisconnected(func(playwright.Browser) {
		p.markLost()
		if p.closing.Load() {
			b.log.Debug().Int("launch", n).Msg("shared browser closed")
			return
		}
		b.log.Warn().Int("launch", n).Msg("shared browser lost")
	})
	b.log.Info().Int("launch", n).Int64("ms", time.Since(start).Milliseconds()).Str("engine", bin.Engine).Msg("shared browser launched")
	return p, nil
}

// dispose closes a shared browser and makes sure its processes and profile
// are gone. Safe to call more than once.
func (b *SharedBrowser) dispose(p *sharedProc) {
	p.dispOnce.Do(func() {
		p.closing.Store(true)
		closeBrowser(context.Background(), browserClose{
			close:  func() { _ = p.browser.Close() },
			lost:   p.markLost,
			kill:   p.profile,
			remove: p.profile,
			log:    b.log.With().Int("launch", p.n).Logger(),
			what:   "shared browser",
		})
	})
}

// NewContext returns a fresh BrowserContext in the shared browser, launching
// or relaunching the browser first if needed. cfg supplies the context's
// viewport.
func (b *SharedBrowser) NewContext(ctx context.Context, cfg Config) (playwright.BrowserContext, error) {
	bc, err := b.newContext(ctx, cfg)
	if errors.Is(err, ErrBrowserGone) {
		// The browser died under us (a session notices before the browser's
		// own Disconnected event): relaunch once.
		bc, err = b.newContext(ctx, cfg)
	}
	return bc, err
}

func (b *SharedBrowser) newContext(ctx context.Context, cfg Config) (playwright.BrowserContext, error) {
	p, err := b.current(ctx)
	if err != nil {
		return nil, err
	}
	pw, err := b.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	ua := ""
	if cfg.wantsHeadfulUA() {
		ua = p.headfulUA
	}
	opts, err := cfg.newContextOptions(pw, b.cfg.Window != nil, ua)
	if err != nil {
		return nil, err
	}
	// Runs on the session's launch flight (owned and bounded by the
	// session); a browser that dies ends the call.
	bc, err := p.browser.NewContext(opts)
	if err != nil {
		if p.isLost() || !p.browser.IsConnected() {
			p.markLost()
			return nil, fmt.Errorf("new browser context: %w", ErrBrowserGone)
		}
		return nil, fmt.Errorf("new browser context: %w", err)
	}
	if ctx.Err() != nil {
		_ = bc.Close()
		return nil, fmt.Errorf("new browser context: %w", ctx.Err())
	}
	return bc, nil
}

// Fits reports whether a session configured with cfg may take a context in
// b instead of launching a browser of its own, and lose nothing by it: cfg
// runs the same binary with the same command line and the same launch
// options, keeps no profile on disk and attaches to no other browser. A
// binary that cannot be resolved does not fit.
func (b *SharedBrowser) Fits(ctx context.Context, cfg Config) bool {
	if cfg.UserDataDir != "" || cfg.CDPEndpoint != "" || cfg.Endpoint != "" || cfg.PickEndpoint != nil ||
		cfg.Context.Proxy != nil || cfg.Headless != b.cfg.Headless || cfg.ResolveBinary == nil || b.cfg.ResolveBinary == nil ||
		!launchOptionsEqual(cfg.Launch, b.cfg.Launch) {
		return false
	}
	mine, err := b.cfg.ResolveBinary(ctx)
	if err != nil {
		return false
	}
	theirs, err := cfg.ResolveBinary(ctx)
	if err != nil {
		return false
	}
	// A session's own window gives way to the shared browser's; a session
	// sized by its window needs a shared browser with one.
	if cfg.wantsWindow() && b.cfg.Window == nil {
		return false
	}
	noWindow := func(args []string) []string { return slices.DeleteFunc(args, cloakbrowser.IsWindowArg) }
	return mine.BinaryPath == theirs.BinaryPath && mine.Engine == theirs.Engine &&
		slices.Equal(noWindow(b.cfg.Args(mine)), noWindow(cfg.Args(theirs)))
}

// headfulUA is the current browser's headed user agent ("" when none).
func (b *SharedBrowser) headfulUA() string {
	if p := b.proc(); p != nil {
		return p.headfulUA
	}
	return ""
}

// proc is the shared browser's process now, alive or lost (nil before the
// first launch or after Close).
func (b *SharedBrowser) proc() *sharedProc {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// Window is the shared browser's window; nil when its pages are sized by
// an emulated viewport.
func (b *SharedBrowser) Window() *cloakbrowser.Window { return b.cfg.Window }

func launchOptionsEqual(a, b LaunchOptions) bool {
	return a.Channel == b.Channel && a.SlowMo == b.SlowMo && slices.Equal(a.IgnoreDefaultArgs, b.IgnoreDefaultArgs) &&
		len(a.Env) == 0 && len(b.Env) == 0
}

// PIDs lists the processes of the current shared browser (none before the
// first launch or after Close).
func (b *SharedBrowser) PIDs() []int {
	if p := b.proc(); p != nil {
		return ProfilePIDs(p.profile)
	}
	return nil
}

// ProfileDir is the current shared browser's user data directory (made and
// removed by Playwright), or "" when none is running or it is unknown.
func (b *SharedBrowser) ProfileDir() string {
	if p := b.proc(); p != nil {
		return p.profile
	}
	return ""
}

// Close disposes of the shared browser and waits until its processes are
// gone, within ctx. Contexts still open in it are lost. Later calls fail
// with ErrClosed.
func (b *SharedBrowser) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	_ = b.launches.Wait(ctx)
	b.mu.Lock()
	p := b.cur
	b.cur = nil
	b.mu.Unlock()
	if p != nil {
		b.dispose(p)
	}
	return ctx.Err()
}

// launchShared makes a generation that is a new context in cfg.Shared.
func (s *Session) launchShared(ctx context.Context, n int) (*Generation, error) {
	start := time.Now()
	bc, err := s.cfg.Shared.NewContext(ctx, s.cfg)
	if err != nil {
		return nil, err
	}
	// No profile directory: disposing the generation closes the context only.
	g := newGeneration(s, n, bc, "", false, nil, s.cfg.contextUA(s.cfg.Shared.headfulUA()))
	pw, err := s.drv.Get(ctx)
	if err == nil {
		err = g.prepare(ctx, pw, false, false)
	}
	if err != nil {
		_ = bc.Close()
		return nil, fmt.Errorf("prepare the browser context: %w", err)
	}
	s.log.Info().Int("generation", n).Int64("ms", time.Since(start).Milliseconds()).Msg("browser context opened in the shared browser")
	s.warnVersion(g)
	return g, nil
}
