package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

var (
	// ErrClosed means the session was closed; no browser call is admitted.
	ErrClosed = errors.New("session closed")
	// ErrBrowserGone means the browser of the current generation was lost.
	ErrBrowserGone = errors.New("browser gone")
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
	// Viewport sets the page size; if nil, Playwright's default (1280x720).
	Viewport *playwright.Size
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
	// Log receives structured logs; the zero value discards them.
	Log zerolog.Logger
}

func (c Config) actionTimeout() time.Duration {
	if c.ActionTimeout <= 0 {
		return 5 * time.Second
	}
	return c.ActionTimeout
}

func (c Config) navigationTimeout() time.Duration {
	if c.NavigationTimeout <= 0 {
		return 60 * time.Second
	}
	return c.NavigationTimeout
}

func (c Config) launchTimeout() time.Duration {
	if c.LaunchTimeout <= 0 {
		return 60 * time.Second
	}
	return c.LaunchTimeout
}

// NetworkQuietArgs are the flags a browser needs on a closed network: without
// them Chromium keeps dialling Google services that never answer.
var NetworkQuietArgs = []string{
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
	"--disable-quic",
}

// Args is the browser command line this configuration produces for bin
// (without the flags Playwright adds itself).
func (c Config) Args(bin cloakbrowser.BinaryInfo) []string {
	args := append([]string(nil), NetworkQuietArgs...)
	if c.NoSandbox {
		args = append(args, "--no-sandbox")
	}
	args = append(args, cloakbrowser.StealthArgs(bin, c.FingerprintSeed, "")...)
	args = append(args, c.ExtraArgs...)
	return dedupeArgs(args)
}

// dedupeArgs keeps the last occurrence of each --flag (by the part before
// '='), so later sources override earlier ones.
func dedupeArgs(args []string) []string {
	last := map[string]int{}
	for i, a := range args {
		last[flagName(a)] = i
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if last[flagName(a)] == i {
			out = append(out, a)
		}
	}
	return out
}

func flagName(a string) string {
	for i := 0; i < len(a); i++ {
		if a[i] == '=' {
			return a[:i]
		}
	}
	return a
}

// Session is one MCP session's browser ownership. It is safe for concurrent
// use: tool calls run on several goroutines.
type Session struct {
	id  string
	drv *driver.Driver
	cfg Config
	log zerolog.Logger

	mu       sync.Mutex
	gen      *Generation
	lastGen  int
	flight   *launchFlight
	closed   bool
	hooks    []func(*Generation)
	lostHook []func(*Generation)
	cdp      *CDP // set by EnableCDP before the first launch

	// downloads are the session's downloads and its use of the limits
	// (downloads.go).
	downloads downloadLog
}

// New creates a session; its browser is launched on first use.
func New(id string, drv *driver.Driver, cfg Config) *Session {
	return &Session{id: id, drv: drv, cfg: cfg, log: cfg.Log.With().Str("session", id).Logger()}
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

// launchFlight is one bounded launch shared by every caller waiting for it.
type launchFlight struct {
	done chan struct{}
	gen  *Generation
	err  error
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
// none or the last one was lost. Concurrent callers share one launch; if it
// fails they all get its error and nothing is kept, so a later call may try
// again.
func (s *Session) Generation(ctx context.Context) (*Generation, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if s.gen != nil && !s.gen.Lost() {
		g := s.gen
		s.mu.Unlock()
		return g, nil
	}
	f := s.flight
	if f == nil {
		f = &launchFlight{done: make(chan struct{})}
		s.flight = f
		old := s.gen
		s.gen = nil
		s.lastGen++
		n := s.lastGen
		go s.runLaunch(f, old, n)
	}
	s.mu.Unlock()
	select {
	case <-f.done:
		return f.gen, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *Session) runLaunch(f *launchFlight, old *Generation, n int) {
	if old != nil {
		// The old generation is unreachable from here on; dispose of it.
		old.dispose()
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.launchTimeout())
	defer cancel()
	g, err := s.launch(ctx, n)
	if err == nil {
		if err = s.ready(ctx, g); err != nil {
			g.dispose()
			g = nil
		}
	}
	s.mu.Lock()
	if s.closed && g != nil {
		s.mu.Unlock()
		g.dispose()
		g, err = nil, ErrClosed
		s.mu.Lock()
	}
	s.gen = g
	s.flight = nil
	s.mu.Unlock()
	f.gen, f.err = g, err
	close(f.done)
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
// browser first when needed. fn runs at most once.
func (s *Session) Do(ctx context.Context, fn func(ctx context.Context, g *Generation) error) error {
	g, err := s.Generation(ctx) // refuses with ErrClosed after Close
	if err != nil {
		return err
	}
	return fn(ctx, g)
}

// Close stops admission, disposes of the browser and removes temporary
// profiles. It waits for the browser processes to be gone. With a CDP
// endpoint, cleanup runs in reverse reachability order: stop admission,
// revoke the capability and close its proxied sockets, dispose of the
// browser, close the proxy's listener, release the port lease.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	f := s.flight
	s.mu.Unlock()
	if f != nil {
		<-f.done
	}
	s.mu.Lock()
	g := s.gen
	s.gen = nil
	c := s.cdp
	s.mu.Unlock()
	if c != nil {
		c.revoke()
	}
	if g != nil {
		// Hooks first (e.g. save a running trace): the browser still answers.
		g.runDisposers()
		g.dispose()
	}
	if c != nil {
		return c.close()
	}
	return nil
}

func (s *Session) launch(ctx context.Context, n int) (*Generation, error) {
	if s.cfg.Shared != nil {
		return s.launchShared(ctx, n)
	}
	pw, err := s.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	driverExited := s.drv.Exited(pw)
	if s.cfg.ResolveBinary == nil {
		return nil, errors.New("no browser binary configured")
	}
	bin, err := s.cfg.ResolveBinary(ctx)
	if err != nil {
		return nil, fmt.Errorf("find a browser: %w", err)
	}
	profile := s.cfg.UserDataDir
	temp := false
	if profile == "" {
		profile, err = os.MkdirTemp("", "cloakbrowser-mcp-profile-")
		if err != nil {
			return nil, fmt.Errorf("create temp profile: %w", err)
		}
		temp = true
	}
	args := s.cfg.Args(bin)
	if s.CDP() != nil {
		// An internal loopback DevTools endpoint beside Playwright's pipe. A
		// persistent profile may hold the file of an earlier run: remove it
		// so the port read after the launch is this browser's.
		args = dedupeArgs(append(args, internalDebuggingArgs...))
		if err := os.Remove(filepath.Join(profile, "DevToolsActivePort")); err != nil && !os.IsNotExist(err) {
			if temp {
				_ = os.RemoveAll(profile)
			}
			return nil, fmt.Errorf("remove a stale DevToolsActivePort: %w", err)
		}
	}
	start := time.Now()
	opts := playwright.BrowserTypeLaunchPersistentContextOptions{
		ExecutablePath:    playwright.String(bin.BinaryPath),
		Headless:          playwright.Bool(s.cfg.Headless),
		Args:              args,
		IgnoreDefaultArgs: cloakbrowser.IgnoredDefaultArgs(),
		AcceptDownloads:   playwright.Bool(true),
		Timeout:           playwright.Float(float64(s.cfg.launchTimeout().Milliseconds())),
	}
	if s.cfg.Viewport != nil {
		opts.Viewport = s.cfg.Viewport
	}
	type result struct {
		bc  playwright.BrowserContext
		err error
	}
	ch := make(chan result, 1)
	go func() {
		bc, err := pw.Chromium.LaunchPersistentContext(profile, opts)
		ch <- result{bc, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		// The launch goes on in the driver; close whatever it produces.
		go func() {
			if r := <-ch; r.bc != nil {
				_ = r.bc.Close()
			}
			if temp {
				_ = os.RemoveAll(profile)
			}
		}()
		return nil, fmt.Errorf("launch %s: %w", bin.BinaryPath, ctx.Err())
	}
	if r.err != nil {
		if temp {
			_ = os.RemoveAll(profile)
		}
		return nil, fmt.Errorf("launch %s (%s browser from %s): %s", bin.BinaryPath, bin.Engine, bin.Source, launchFailure(r.err))
	}
	g := newGeneration(s, n, r.bc, profile, temp)
	go s.watchDriver(g, driverExited)
	s.log.Info().Int("generation", n).Int64("ms", time.Since(start).Milliseconds()).Str("engine", bin.Engine).Msg("browser launched")
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
			g.dispose()
		}
	}
}

func (s *Session) lost(g *Generation) {
	s.mu.Lock()
	hooks := append([]func(*Generation){}, s.lostHook...)
	c := s.cdp
	s.mu.Unlock()
	s.log.Warn().Int("generation", g.N).Msg("browser lost")
	if c != nil {
		// First: a stale capability must not outlive the browser.
		c.lost(g)
	}
	for _, h := range hooks {
		h(g)
	}
}

// launchFailure condenses Playwright's launch error (the whole browser log)
// to its first line and the browser's fatal lines.
func launchFailure(err error) string {
	lines := strings.Split(err.Error(), "\n")
	out := []string{strings.TrimPrefix(lines[0], "playwright: ")}
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		if i := strings.Index(l, "FATAL:"); i >= 0 {
			msg := l[i:]
			if j := strings.Index(msg, "] "); j >= 0 {
				msg = msg[j+2:]
			}
			if !seen[msg] {
				seen[msg] = true
				out = append(out, "browser: "+msg)
			}
		}
	}
	return strings.Join(out, "; ")
}

// Reset disposes of the current browser generation on request (the agent
// closed the browser); the next call launches a new one. It waits for a
// launch in flight first.
func (s *Session) Reset() {
	s.mu.Lock()
	f := s.flight
	s.mu.Unlock()
	if f != nil {
		<-f.done
	}
	s.mu.Lock()
	g := s.gen
	s.gen = nil
	s.mu.Unlock()
	if g != nil {
		// Hooks first (e.g. save a running trace): the browser still answers.
		g.runDisposers()
		g.dispose()
	}
}
