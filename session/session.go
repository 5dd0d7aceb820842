package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/flight"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

var (
	// ErrClosed means the session was closed; no browser call is admitted.
	ErrClosed = errors.New("session closed")
	// ErrBrowserGone means the browser of the current generation was lost
	// (the door's own error, page.ErrBrowserGone).
	ErrBrowserGone = page.ErrBrowserGone
)

// Config is the launch configuration of a session. It stays the same for
// every browser generation of the session.
type Config struct {
	// ResolveBinary returns the browser binary to launch; it may wait for a
	// resolution running in the background.
	ResolveBinary func(ctx context.Context) (cloakbrowser.BinaryInfo, error)
	// Headless runs the browser without a window.
	Headless bool
	// NoSandbox adds --no-sandbox (needed as root).
	NoSandbox bool
	// ExtraArgs are appended to the browser's command line.
	ExtraArgs []string
	// UserDataDir is a persistent profile directory. If empty, each
	// generation gets a fresh temporary profile that is removed when it ends.
	UserDataDir string
	// FingerprintSeed fixes CloakBrowser's --fingerprint seed. If zero, random.
	FingerprintSeed int
	// ActionTimeout bounds element actions. If zero, 5s.
	ActionTimeout time.Duration
	// NavigationTimeout bounds navigations. If zero, 60s.
	NavigationTimeout time.Duration
	// LaunchTimeout bounds one browser launch. If zero, 60s.
	LaunchTimeout time.Duration
	// Viewport sets the page size (emulated); if nil, the browser window's
	// (Window).
	Viewport *page.Size
	// Window is the browser window (and, headless, the screen) a browser of
	// ours gets when neither Viewport nor a device is set. If nil, New (or
	// NewSharedBrowser) picks a common desktop size; a session in a shared
	// browser has the shared browser's.
	Window *cloakbrowser.Window
	// Shared, if set, makes each generation a fresh BrowserContext in this
	// shared browser ("context" isolation) instead of a browser of the
	// session's own with a temporary profile. If nil, the session launches
	// its own browser.
	Shared *SharedBrowser
	// OutputDir is where downloads are saved, under names the server makes
	// (never a path from the page). If empty, downloads are reported but not
	// saved.
	OutputDir string
	// MaxDownloadBytes caps the bytes all of a session's downloads may take
	// in OutputDir; a download that would pass it is refused and deleted.
	// If zero, 256 MiB.
	MaxDownloadBytes int64
	// MaxDownloads caps the downloads a session may start. If zero, 100.
	MaxDownloads int
	// MaxTabs caps the tabs a session may have open: browser_tabs new is
	// refused past it, and a popup a page opens past it is closed. If
	// zero, 32.
	MaxTabs int
	// MaxConcurrentCalls caps the tool calls a session may have in flight
	// (BeginCall). If zero, 8.
	MaxConcurrentCalls int
	// CDPEndpoint, if set, attaches each generation to the browser at this
	// DevTools endpoint (http://host:port or ws://…) instead of launching
	// one: its first context and pages become the generation's. Closing the
	// generation disconnects and leaves the browser running.
	CDPEndpoint string
	// SettleTimeout bounds how long an action waits for the requests it
	// set off to end (--timeout-settle). If zero, 500ms.
	SettleTimeout time.Duration
	// CDPHeaders are sent with the CDP connect request.
	CDPHeaders map[string]string
	// CDPTimeout bounds connecting to CDPEndpoint or Endpoint. If zero, 30s.
	CDPTimeout time.Duration
	// Endpoint, if set, connects each generation to the Playwright server at
	// this URL (ws://…, e.g. `playwright run-server`) and opens a new context
	// there with Context's options. Closing the generation disconnects; the
	// server lives on.
	Endpoint string
	// EndpointHeaders are sent with the Endpoint connect request.
	EndpointHeaders map[string]string
	// PickEndpoint, if set, chooses the remote browser each generation
	// attaches to (a browser pool): ws:// or wss:// is a Playwright server
	// (as Endpoint), http:// or https:// a CDP endpoint (as CDPEndpoint).
	// failed is the endpoint the last attach could not reach ("" when none
	// failed): the pool may answer another one.
	PickEndpoint func(ctx context.Context, failed string) (string, error)
	// RecordVideo, if set, records every page from its start
	// (contextOptions.recordVideo; video.go). Recording needs the ffmpeg
	// the driver links (pkg/driver).
	RecordVideo *RecordVideo
	// Context are the options of every browser context (context_options.go).
	Context ContextOptions
	// Launch are more browser process options (context_options.go).
	Launch LaunchOptions
	// RefCache keeps what re-resolves snapshot refs per browser target. If
	// nil, the session keeps a cache of its own (50 targets).
	RefCache *snapshot.RefCache
	// IdleTimeout closes the browser after this long without a completed
	// call through Do (none in flight); the next call launches a new one
	// (idle.go). If zero, never.
	IdleTimeout time.Duration
	// Log receives structured logs; the zero value discards them.
	Log zerolog.Logger
	// Notify, if set, receives the session's notices (notice.go) as they
	// happen: console messages, page crashes, a lost or relaunched browser,
	// an idle close, finished downloads. It is called on the goroutine that
	// saw the event (Playwright's dispatch among them), so it must be quick
	// and must not call back into the session. If nil, nothing is reported.
	Notify func(Notice)
	// WebMCP launches the browser with --enable-features=WebMCP and keeps,
	// per tab, the tools its page registers through document.modelContext
	// (page.WebMCPList); WebMCPChanged, if set, hears that the current
	// tab's list may have changed (tools added or removed, a navigation, a
	// tab closed, the browser lost), with the session's id. It is called on
	// the goroutine that saw the event, so it must be quick and must not
	// call back into the session. If false, pages get no modelContext.
	WebMCP        bool
	WebMCPChanged func(sessionID string)
}

// EffectiveActionTimeout is ActionTimeout with its default applied.
func (c Config) EffectiveActionTimeout() time.Duration { return c.actionTimeout() }

func (c Config) actionTimeout() time.Duration { return orDefault(c.ActionTimeout, 5*time.Second) }

func (c Config) navigationTimeout() time.Duration {
	return orDefault(c.NavigationTimeout, 60*time.Second)
}

func (c Config) settleTimeout() time.Duration {
	return orDefault(c.SettleTimeout, page.DefaultSettleTimeout)
}

func (c Config) launchTimeout() time.Duration { return orDefault(c.LaunchTimeout, 60*time.Second) }

// orDefault is v, or def when v is not positive (a Config field left zero).
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Args is the browser command line this configuration produces for bin
// (without the flags Playwright adds itself).
func (c Config) Args(bin cloakbrowser.BinaryInfo) []string {
	extra := append(c.timezoneArgs(bin), c.ExtraArgs...)
	if c.WebMCP {
		// Merged with the other --enable-features values (LaunchArgs).
		extra = append(extra, "--enable-features=WebMCP")
	}
	o := cloakbrowser.LaunchOptions{NoSandbox: c.NoSandbox, FingerprintSeed: c.FingerprintSeed, Headless: c.Headless,
		ExtraArgs: extra}
	if c.wantsWindow() {
		o.Window = c.Window
	}
	return cloakbrowser.LaunchArgs(bin, o)
}

// LaunchError is a browser launch that failed: Error is Playwright's first
// line and the browser's fatal lines; the cause is kept.
type LaunchError struct {
	Path, Engine, Source string
	Summary              string
	Err                  error
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("launch %s (%s browser from %s): %s", e.Path, e.Engine, e.Source, e.Summary)
}

func (e *LaunchError) Unwrap() error { return e.Err }

func launchError(bin cloakbrowser.BinaryInfo, err error) error {
	return &LaunchError{Path: bin.BinaryPath, Engine: bin.Engine, Source: bin.Source, Summary: cloakbrowser.LaunchFailure(err.Error()), Err: err}
}

// Session is one MCP session's browser ownership. It is safe for concurrent
// use: tool calls run on several goroutines.
type Session struct {
	id  string
	drv *driver.Driver
	cfg Config
	log zerolog.Logger

	// ctx ends when the session closes; launches run under it.
	ctx    context.Context
	cancel context.CancelFunc

	launches flight.Flight[*Generation]

	mu       sync.Mutex
	gen      *Generation
	lastGen  int
	closed   bool
	hooks    []func(*Generation)
	lostHook []func(*Generation)
	cdp      *CDP // set by EnableCDP before the first launch
	watchers sync.WaitGroup

	// refs keeps what re-resolves snapshot refs per browser target.
	refs  *snapshot.RefCache
	refMu sync.Mutex // one read-modify-write of an entry at a time

	// versionWarned is set once a --user-agent's version was checked
	// against the browser's (warnVersion).
	versionWarned atomic.Bool

	// downloads are the session's downloads and its use of the limits
	// (downloads.go).
	downloads downloadLog

	// idle records call activity for Config.IdleTimeout (idle.go).
	idle idleWatch
	// calls counts the tool calls in flight (calls.go).
	calls callGate

	// principal is who owns the session (files.go); set once by the
	// registry before the session is published, "" for stdio.
	principal string
}

// New creates a session; its browser is launched on first use.
func New(id string, drv *driver.Driver, cfg Config) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	refs := cfg.RefCache
	if refs == nil {
		refs = &snapshot.RefCache{}
	}
	if cfg.Shared != nil {
		cfg.Window = cfg.Shared.cfg.Window
	} else {
		cfg = cfg.withWindow()
	}
	s := &Session{id: id, drv: drv, cfg: cfg, log: cfg.Log.With().Str("session", id).Logger(), ctx: ctx, cancel: cancel, refs: refs}
	for _, w := range cfg.Warnings() {
		s.log.Warn().Msg(w)
	}
	s.startIdleWatch()
	return s
}

// ID is the session's identifier.
func (s *Session) ID() string { return s.id }

// Config returns the session's launch configuration.
func (s *Session) Config() Config { return s.cfg }

// OnGeneration registers fn to run after each new generation is ready and
// before any waiting call is forwarded to it. If fn's generation is then
// rejected, the error comes back from Do. Used by the CDP publisher.
func (s *Session) OnGeneration(fn func(*Generation)) {
	s.mu.Lock()
	s.hooks = append(s.hooks, fn)
	s.mu.Unlock()
}

// OnLost registers fn to run once when a generation's browser is lost.
func (s *Session) OnLost(fn func(*Generation)) {
	s.mu.Lock()
	s.lostHook = append(s.lostHook, fn)
	s.mu.Unlock()
}

// Current returns the ready generation without launching one, or nil.
func (s *Session) Current() *Generation {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != nil && !s.gen.Lost() {
		return s.gen
	}
	return nil
}

// Generation returns a ready browser generation, launching one if there is
// none or the last one was lost. Concurrent callers share one launch (the
// restart rule); if it fails they all get its error and nothing is kept, so a
// later call may try again.
func (s *Session) Generation(ctx context.Context) (*Generation, error) {
	if g, err := s.live(); g != nil || err != nil {
		return g, err
	}
	return s.launches.Do(ctx, s.relaunch)
}

// live returns the current generation if it is alive, ErrClosed after Close.
func (s *Session) live() (*Generation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.gen != nil && !s.gen.Lost() {
		return s.gen, nil
	}
	return nil, nil
}

// relaunch is the shared launch: it disposes of a lost generation, launches
// the next one and makes it current. It runs on the flight's goroutine,
// bounded by the launch timeout and the session's life.
func (s *Session) relaunch() (*Generation, error) {
	g, replaced, err := restartRule[*Generation]{
		mu: &s.mu, cur: &s.gen, n: &s.lastGen, closed: &s.closed,
		alive:   func(g *Generation) bool { return !g.Lost() },
		ctx:     s.ctx,
		timeout: s.cfg.launchTimeout(),
		launch:  s.launchReady,
		dispose: func(ctx context.Context, g *Generation) { g.dispose(ctx) },
	}.relaunch()
	if g != nil && replaced {
		s.notify(NoticeNotice, "browser", "browser relaunched (generation %d) after the previous one was lost", g.N)
	}
	return g, err
}

// launchReady launches generation n and readies it; a generation that
// fails to get ready is disposed of.
func (s *Session) launchReady(ctx context.Context, n int) (*Generation, error) {
	g, err := s.launch(ctx, n)
	if err != nil {
		return nil, err
	}
	if err := s.ready(ctx, g); err != nil {
		g.dispose(context.Background())
		return nil, err
	}
	return g, nil
}

// ready runs the OnGeneration hooks on a just-launched generation, then, if
// the session has a CDP endpoint, the ownership proof and the publication of
// a new capability: the last step, so that nothing is published for a
// generation that is refused.
func (s *Session) ready(ctx context.Context, g *Generation) error {
	s.mu.Lock()
	hooks := append([]func(*Generation){}, s.hooks...)
	c := s.cdp
	s.mu.Unlock()
	if err := g.startRecordVideo(ctx); err != nil {
		return fmt.Errorf("contextOptions.recordVideo: %w", err)
	}
	for _, h := range hooks {
		h(g)
	}
	if g.Lost() {
		return fmt.Errorf("generation %d: %w during start", g.N, ErrBrowserGone)
	}
	if err := g.readyErr(); err != nil {
		return err
	}
	if c != nil {
		if err := c.publish(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// Do runs fn on the session's ready generation, launching or restarting the
// browser first when needed. fn runs at most once. The call counts as
// activity for Config.IdleTimeout from its start to its end.
func (s *Session) Do(ctx context.Context, fn func(ctx context.Context, g *Generation) error) error {
	if err := s.idle.begin(ctx); err != nil {
		return err
	}
	defer s.idle.end()
	g, err := s.Generation(ctx) // refuses with ErrClosed after Close
	if err != nil {
		return err
	}
	return fn(ctx, g)
}

// CloseBrowser disposes of the current browser generation on request (the
// agent closed the browser); the next call launches a new one. It waits,
// within ctx, for a launch in flight first. Dispose hooks (e.g. saving a
// running trace) run while the browser still answers.
func (s *Session) CloseBrowser(ctx context.Context) error {
	if err := s.launches.Wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	g := s.gen
	s.gen = nil
	s.mu.Unlock()
	if g != nil {
		g.runDisposers(ctx)
		g.dispose(ctx)
	}
	return ctx.Err()
}

// Close stops admission, disposes of the browser and removes temporary
// profiles, waiting (within ctx) for the browser processes and every
// goroutine of the session to be gone. With a CDP endpoint, cleanup runs in
// reverse reachability order: stop admission, revoke the capability and
// close its proxied sockets, dispose of the browser, close the proxy's
// listener, release the port lease. Calls after the first return nil.
func (s *Session) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	// A launch in flight stops at its next step; its browser is disposed.
	s.cancel()
	_ = s.launches.Wait(ctx)
	s.mu.Lock()
	g := s.gen
	s.gen = nil
	c := s.cdp
	s.mu.Unlock()
	if c != nil {
		c.revoke()
	}
	if g != nil {
		g.runDisposers(ctx)
		g.dispose(ctx)
	}
	s.waitWatchers(ctx)
	var err error
	if c != nil {
		err = c.close()
	}
	if cerr := ctx.Err(); cerr != nil && err == nil {
		err = fmt.Errorf("close session %s: %w", s.id, cerr)
	}
	return err
}

func (s *Session) waitWatchers(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.watchers.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (s *Session) launch(ctx context.Context, n int) (*Generation, error) {
	if s.cfg.Shared != nil {
		return s.launchShared(ctx, n)
	}
	if s.cfg.CDPEndpoint != "" || s.cfg.Endpoint != "" || s.cfg.PickEndpoint != nil {
		return s.attachRemote(ctx, n)
	}
	if s.cfg.ResolveBinary == nil {
		return nil, errors.New("no browser binary configured")
	}
	// The binary is found by the server in the background from its start:
	// by the first launch it mostly is.
	bin, err := s.cfg.ResolveBinary(ctx)
	if err != nil {
		s.drv.Begin()
		return nil, fmt.Errorf("find a browser: %w", err)
	}
	args := s.cfg.Args(bin)
	var probe *uaProbe
	if s.cfg.wantsHeadfulUA() {
		pctx, cancel := context.WithCancel(ctx)
		probe = s.cfg.startUAProbe(pctx, bin, args)
		defer func() {
			cancel()
			<-probe.done
		}()
	}
	profile := s.cfg.UserDataDir
	temp := false
	if profile == "" {
		profile, err = ownedTempDir("profile-")
		if err != nil {
			s.drv.Begin()
			return nil, fmt.Errorf("create temp profile: %w", err)
		}
		temp = true
	}
	// The driver starts now, and a driver not yet running starts the
	// browser as it loads (prelaunch.go).
	prelaunched := s.beginDriver(bin, args, profile, probe)
	// dropProfile undoes the profile's part of a launch that failed before
	// Playwright took it: a prelaunched browser may run in it.
	dropProfile := func() {
		if prelaunched {
			killAndWait(profile, 5*time.Second)
		}
		if temp {
			_ = removeAllRetry(profile)
		}
	}
	pw, err := s.drv.Get(ctx)
	if err != nil {
		dropProfile()
		return nil, err
	}
	driverExited := s.drv.Exited(pw)
	var ua string
	if probe != nil {
		// Before the profile's launch: its user agent is fixed then.
		<-probe.done
		ua = probe.ua
		if !probe.ok {
			ua = s.cfg.probeUserAgent(ctx, pw, bin, args)
		}
	}
	c := s.CDP()
	launched := false
	if c != nil {
		// The internal port stays reserved from its pick until publish
		// ends the reservation, or a failed launch here.
		defer func() {
			if !launched {
				c.releasePending()
			}
		}()
	}
	start := time.Now()
	timeout := s.cfg.launchTimeout()
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Second)
	}
	opts := playwright.BrowserTypeLaunchPersistentContextOptions{
		ExecutablePath:    playwright.String(bin.BinaryPath),
		Headless:          playwright.Bool(s.cfg.Headless),
		Args:              args,
		IgnoreDefaultArgs: cloakbrowser.IgnoredDefaultArgs(),
		Env:               browserEnv(),
		AcceptDownloads:   playwright.Bool(true),
		Timeout:           playwright.Float(float64(timeout.Milliseconds())),
	}
	// Device, user agent, viewport, proxy, permissions, … (context_options.go).
	if err := s.cfg.persistentOptions(pw, &opts, bin, ua); err != nil {
		dropProfile()
		return nil, err
	}
	base := opts.Args
	var bc playwright.BrowserContext
	for attempt := 1; ; attempt++ {
		if c != nil {
			// An internal loopback DevTools endpoint beside Playwright's
			// pipe, on a port no page can load from.
			port, err := c.pickInternalPort()
			if err != nil {
				if temp {
					_ = os.RemoveAll(profile)
				}
				return nil, err
			}
			opts.Args = cloakbrowser.DedupeArgs(append(slices.Clone(base), internalDebuggingArgs(port)...))
			s.log.Debug().Int("generation", n).Int("internalPort", port).Msg("internal DevTools port picked")
			if afterInternalPortPick != nil {
				afterInternalPortPick(port)
			}
		}
		// Bounded by Playwright's own timeout; this runs on the launch flight's
		// goroutine, which Close waits for.
		bc, err = pw.Chromium.LaunchPersistentContext(profile, opts)
		if err == nil && ctx.Err() != nil {
			// The session closed during the launch.
			_ = bc.Close()
			err = ctx.Err()
		}
		if err != nil {
			if temp {
				killAndWait(profile, 5*time.Second)
				_ = removeAllRetry(profile)
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("launch %s: %w", bin.BinaryPath, ctx.Err())
			}
			return nil, launchError(bin, err)
		}
		if c == nil {
			break
		}
		perr := awaitInternalPort(ctx, bc, c.pendingPort())
		if perr == nil {
			break
		}
		_ = bc.Close()
		if temp {
			killAndWait(profile, 5*time.Second)
		}
		if !errors.Is(perr, errInternalPortTaken) || attempt == internalPortAttempts {
			if temp {
				_ = removeAllRetry(profile)
			}
			return nil, fmt.Errorf("launch %s: internal DevTools endpoint: %w", bin.BinaryPath, perr)
		}
		// Another process bound the port between its pick and the launch:
		// launch again on another one.
		s.log.Info().Int("generation", n).Int("attempt", attempt).Err(perr).Msg("internal DevTools port taken during the launch; launching again")
	}
	g := newGeneration(s, n, bc, profile, temp, nil, s.cfg.contextUA(ua))
	// A persistent context takes no storage state option: load it after.
	if err := g.prepare(ctx, pw, true, false); err != nil {
		g.dispose(context.Background())
		return nil, fmt.Errorf("prepare the browser context: %w", err)
	}
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		s.watchDriver(g, driverExited)
	}()
	s.log.Info().Int("generation", n).Int64("ms", time.Since(start).Milliseconds()).Str("engine", bin.Engine).Msg("browser launched")
	s.warnVersion(g)
	launched = true
	return g, nil
}

// watchDriver ends with g: if the Playwright driver that launched g exits
// first, g's browser is out of reach, so g is lost, and it is disposed of at
// once (its orphaned processes killed, its profile removed) rather than at
// the next call. Nothing is relaunched here.
func (s *Session) watchDriver(g *Generation, exited <-chan struct{}) {
	select {
	case <-g.LostCh():
	case <-exited:
		if !g.Lost() {
			s.log.Warn().Int("generation", g.N).Msg("playwright driver exited")
			g.markLost()
			g.dispose(s.ctx)
		}
	}
}

func (s *Session) lost(g *Generation) {
	s.mu.Lock()
	hooks := append([]func(*Generation){}, s.lostHook...)
	c := s.cdp
	current := s.gen == g
	s.mu.Unlock()
	if current {
		// Not a close we asked for (those unset s.gen first).
		s.log.Warn().Int("generation", g.N).Msg("browser lost")
		s.notify(NoticeError, "browser", "browser lost (generation %d): the next call relaunches it", g.N)
	} else {
		s.log.Debug().Int("generation", g.N).Msg("browser closed")
	}
	defer s.webmcpChanged() // the lost browser's tools are gone
	if c != nil {
		// First: a stale capability must not outlive the browser.
		c.lost(g)
	}
	for _, h := range hooks {
		h(g)
	}
}
