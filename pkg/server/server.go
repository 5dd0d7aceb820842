package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/cdpproxy"
	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/flight"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/tools"
)

// Version is the server version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// Options are the process-level parts of a Server that are not configuration.
type Options struct {
	// Log is where logs go. If nil, os.Stderr. Never stdout in stdio mode.
	Log io.Writer
	// NoPrewarm stops the stdio server from launching the browser in the
	// background before the first browser call.
	NoPrewarm bool
	// Driver is a Playwright driver to use instead of starting one: several
	// servers in one process (tests, an embedding program) then share one
	// driver process. The server leaves it running on Close. If nil, the
	// server starts its own driver and stops it on Close.
	Driver *driver.Driver
	// Browser is a browser to share: several servers in one process (tests,
	// an embedding program that runs many short sessions) then share one
	// browser process. The stdio session opens a fresh context in it, as an
	// HTTP session does in "context" isolation, when its launch settings are
	// the browser's (session.SharedBrowser.Fits) and no CDP endpoint is
	// published; otherwise it launches its own. HTTP sessions in "context"
	// isolation open their contexts in it under the same rule when the
	// server cannot publish CDP endpoints (no --cdp-enabled, no
	// --cdp-port-range) and uses no browser pool; otherwise (and in
	// "browser" isolation, unless HTTPInBrowser) they launch as
	// --http-isolation says. The server leaves it running on Close. If nil,
	// each session launches its own browser (HTTP: as --http-isolation says).
	Browser *session.SharedBrowser
	// HTTPInBrowser makes HTTP sessions in "browser" isolation open their
	// contexts in Browser too (under the rule above): one browser process
	// for every client, for tests and embedders that accept that; without
	// it "browser" isolation keeps a process per session.
	HTTPInBrowser bool
}

// Server is a configured MCP server with its driver, binary and sessions.
type Server struct {
	cfg  config.Config
	log  zerolog.Logger
	opts Options

	drv *driver.Driver
	// ownDriver: the server started drv and stops it on Close.
	ownDriver bool
	bin       *binaryResolver
	// ffmpegErr says why video cannot be recorded (nil: it can); set once
	// by New (video.go).
	ffmpegErr error
	// recordVideoDir is contextOptions.recordVideo.dir relative to the
	// output directory.
	recordVideoDir string

	mcp   *server.MCPServer
	stdio *session.Session
	httpT *httpTransport // set while serving Streamable HTTP

	mu     sync.Mutex
	closed bool
	bg     sync.WaitGroup // background work the server owns (the prewarm)
	// warm: the stdio session's prewarm is due at the client's first
	// request (warmArmed) or has started (warmed); under mu.
	warmArmed, warmed bool

	stdioInit flight.Flight[*session.Session] // creates s.stdio once

	// life ends when the client is gone or Close starts: tool calls in
	// flight end then, so the shutdown never waits on a stuck page.
	life    context.Context
	endLife context.CancelFunc

	// notes sends session notices as MCP log notifications; cancels drops
	// the responses of cancelled calls (notify.go, cancel.go).
	notes   *notifier
	cancels *cancels

	// env is what the tools see; webmcp keeps each MCP session's WebMCP
	// tools in step with its page (webmcp.go), nil without --caps webmcp.
	env    *tools.Env
	webmcp *webmcpMirror

	cdpOnce sync.Once // makes leaser
	leaser  *cdpproxy.Leaser
	cdpErr  error
}

// NewLogger builds the zerolog logger for a level, writing to w.
func NewLogger(w io.Writer, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// CloakOptions turns the configuration into binary-resolution options.
func CloakOptions(cfg config.Config) cloakbrowser.Options {
	return cloakbrowser.Options{
		BinaryPath:       cfg.BinaryPath,
		BinaryPathSource: cfg.BinaryPathSource,
		AllowDownload:    !cfg.NoDownload,
	}
}

// DriverOptions turns the configuration into driver options.
func DriverOptions(cfg config.Config, log io.Writer) driver.Options {
	// Streamable HTTP serves many sessions from one driver: there its
	// memory counts more than each call's speed (driver.LeanHeapFlag).
	return driver.Options{Dir: cfg.DriverDir, NodePath: cfg.NodePath, Log: log, LeanHeap: cfg.Transport == config.TransportHTTP}
}

// New validates cfg and starts the process-wide pieces in the background:
// the Playwright driver and the binary resolution. It does not wait for them.
func New(cfg config.Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	// --secrets values never reach a log line (ours or the driver's).
	secrets := tools.NewSecrets(cfg.Secrets)
	opts.Log = secrets.Writer(opts.Log)
	log := NewLogger(opts.Log, cfg.LogLevel)
	s := &Server{cfg: cfg, log: log, opts: opts}
	s.life, s.endLife = context.WithCancel(context.Background())
	if cfg.CDP.Enabled || cfg.CDP.PortRange != "" {
		if err := s.cdpProxyConfig().Validate(); err != nil {
			return nil, err
		}
	}
	sweepStale(log)
	if s.drv = opts.Driver; s.drv == nil {
		// Started by the first need: HTTP serving, the stdio prewarm (at
		// the client's first request) or a browser call.
		s.drv, s.ownDriver = driver.New(DriverOptions(cfg, opts.Log), !cfg.NoAutoInstall), true
	}
	s.bin = newBinaryResolver(func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
		co := CloakOptions(cfg)
		co.Logf = func(format string, args ...any) { log.Info().Msgf(format, args...) }
		info, err := cloakbrowser.Resolve(ctx, co)
		switch {
		case err != nil && ctx.Err() != nil:
			// The server closed before the binary was resolved (stdin
			// closed at once): nothing was missing.
			log.Debug().Err(err).Msg("browser binary resolution stopped: the server is closing")
		case err != nil:
			log.Error().Err(err).Msg("no browser binary")
		case info.Source == cloakbrowser.SourceSystem:
			log.Warn().Str("path", info.BinaryPath).Str("reason", info.FallbackReason).
				Msg("CloakBrowser not available: using a system Chromium WITHOUT stealth patches (run `cloakbrowser-mcp install` to get CloakBrowser)")
		default:
			log.Info().Str("path", info.BinaryPath).Str("engine", info.Engine).Str("source", info.Source).Msg("browser binary resolved")
		}
		return info, err
	})
	s.bin.start()
	if err := s.linkFFmpeg(); err != nil {
		s.bin.close()
		s.closeDriver()
		return nil, err
	}
	if name := cfg.DeviceName(); name != "" {
		// Device names come from the driver: check now rather than at the
		// first browser call.
		ctx, cancel := context.WithTimeout(s.life, 2*time.Minute)
		err := session.CheckDevice(ctx, s.drv, name)
		cancel()
		if err != nil {
			s.bin.close()
			s.closeDriver()
			return nil, err
		}
	}

	hooks := &server.Hooks{}
	s.cancels = newCancels(log)
	s.cancels.hooks(hooks)
	s.shortUnknownURIs(hooks)
	hooks.AddBeforeAny(func(context.Context, any, mcp.MCPMethod, any) { s.startPrewarm() })
	if cfg.WebMCPEnabled() {
		s.webmcp = newWebMCPMirror(s)
		s.webmcp.hooks(hooks)
	}
	s.mcp = server.NewMCPServer("cloakbrowser-mcp", Version,
		// The tool list changes only with --caps webmcp (a page's tools).
		server.WithToolCapabilities(cfg.WebMCPEnabled()),
		// The files tools write, per MCP session (resources.go); the list
		// changes as they are written. No subscriptions.
		server.WithResourceCapabilities(false, true),
		server.WithLogging(),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithInstructions("Browser automation over a real Chromium (CloakBrowser when installed). Take browser_snapshot to see the page; act with refs like e12 from it. Action results show what changed."),
	)
	s.notes = newNotifier(s.mcp.SendLogMessageToSpecificClient, log)
	s.notes.hooks(hooks)
	env := &tools.Env{
		Session:                     s.sessionFor,
		Binary:                      s.binaryInfo,
		Version:                     Version,
		Caps:                        cfg.CapSet(),
		OutputDir:                   cfg.OutputDir,
		AllowUnrestrictedFileAccess: cfg.AllowUnrestrictedFileAccess,
		ConsoleLevel:                cfg.ConsoleLevel,
		BridgeInfo:                  s.bridgeInfo,
		Log:                         log,
		Lifetime:                    s.life,
		// A backstop: every step has its own bound; evaluate_with_timeout
		// may run 120 s, a navigation --timeout-navigation.
		CallTimeout:   max(cfg.TimeoutNavigation, 120*time.Second) + time.Minute,
		SnapshotMode:  cfg.SnapshotMode,
		OutputMaxSize: cfg.OutputMaxSize,
		FilePaths:     cfg.FilePaths,
		Output: tools.Output{
			Codegen:        codegen.Language(cfg.Codegen),
			Secrets:        secrets,
			ImageResponses: cfg.ImageResponses,
			ImageMaxSide:   noBound(cfg.ImageMaxSide),
			ImageMaxBytes:  noBound(cfg.ImageMaxBytes),
		},
		Config:  func() any { return shownConfig(cfg) },
		Publish: s.publishResource,
		FFmpeg:  func() error { return s.ffmpegErr },
	}
	if cfg.SaveSession {
		env.SessionLog = tools.NewSessionLog()
	}
	if caps := cfg.CapSet(); caps["export"] || cfg.SaveSession {
		// --save-session also writes the steps log smoke record reads.
		env.Recorder = tools.NewRecorder(cfg.SaveSession)
	}
	if err := tools.Register(s.mcp, env); err != nil {
		s.bin.close()
		s.closeDriver()
		return nil, err
	}
	s.env = env
	if s.webmcp != nil {
		s.bg.Go(s.webmcp.run)
	}
	return s, nil
}

// MCP returns the underlying mcp-go server.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Driver returns the process's Playwright driver.
func (s *Server) Driver() *driver.Driver { return s.drv }

// closeDriver stops the driver if the server started it.
func (s *Server) closeDriver() error {
	if !s.ownDriver {
		return nil
	}
	return s.drv.Close()
}

// Binary waits for the binary resolution and returns it.
func (s *Server) Binary(ctx context.Context) (cloakbrowser.BinaryInfo, error) { return s.bin.get(ctx) }

func (s *Server) binaryInfo(ctx context.Context) cloakbrowser.BinaryInfo {
	info, _ := s.bin.get(ctx)
	return info
}

// sessionConfig is the launch configuration every session starts from.
func (s *Server) sessionConfig() session.Config { return s.sessionConfigOf(s.cfg) }

// sessionConfigOf is the session configuration of cfg (the server's, or
// one HTTP session's own: config.Config.WithSession).
func (s *Server) sessionConfigOf(cfg config.Config) session.Config {
	sc := session.Config{
		ResolveBinary:      s.bin.get,
		Headless:           cfg.Headless,
		NoSandbox:          cfg.SandboxOff(),
		ExtraArgs:          cfg.ExtraArgs,
		UserDataDir:        cfg.UserDataDir,
		FingerprintSeed:    cfg.FingerprintSeed,
		ActionTimeout:      cfg.TimeoutAction,
		NavigationTimeout:  cfg.TimeoutNavigation,
		MaxDownloadBytes:   cfg.MaxDownloadBytes,
		MaxDownloads:       cfg.MaxDownloads,
		MaxTabs:            cfg.MaxTabs,
		MaxConcurrentCalls: cfg.MaxConcurrentCalls,
		IdleTimeout:        cfg.IdleAfter(),
		Log:                s.log,
		Notify:             s.notes.notice,
	}
	if s.webmcp != nil {
		sc.WebMCP, sc.WebMCPChanged = true, s.webmcp.changed
	}
	if dir, err := filepath.Abs(cfg.OutputDir); err == nil {
		sc.OutputDir = dir
	}
	if w, h, ok := cfg.Viewport(); ok {
		sc.Viewport = &page.Size{Width: w, Height: h}
	}
	// Drop-in options (upstream's flags; pkg/config).
	c := cfg
	sc.CDPEndpoint, sc.CDPHeaders, sc.CDPTimeout = c.CDPEndpoint, c.CDPHeaders, c.CDPTimeout
	sc.Endpoint, sc.EndpointHeaders = c.Endpoint, c.EndpointHeaders
	sc.SettleTimeout = c.TimeoutSettle
	scripts, _ := c.ReadInitScripts() // readable: checked by Validate
	x := c.Context
	sc.Context = session.ContextOptions{
		Device: c.DeviceName(), UserAgent: c.UserAgent, Permissions: c.GrantPermissions,
		IgnoreHTTPSErrors: c.IgnoreHTTPSErrors, BlockServiceWorkers: c.BlockServiceWorkers,
		StorageState: c.StorageState, InitScripts: scripts, TestIDAttribute: c.TestIDAttribute,
		AllowedOrigins: c.AllowedOrigins, BlockedOrigins: c.BlockedOrigins,
		Locale: x.Locale, TimezoneID: x.TimezoneID, ColorScheme: x.ColorScheme, ReducedMotion: x.ReducedMotion,
		DeviceScaleFactor: x.DeviceScaleFactor, IsMobile: x.IsMobile, HasTouch: x.HasTouch, JavaScriptEnabled: x.JavaScriptEnabled,
		BypassCSP: x.BypassCSP, Offline: x.Offline, ExtraHTTPHeaders: x.ExtraHTTPHeaders,
	}
	if g := x.Geolocation; g != nil {
		sc.Context.Geolocation = &page.Geolocation{Latitude: g.Latitude, Longitude: g.Longitude, Accuracy: g.Accuracy}
	}
	if hc := x.HTTPCredentials; hc != nil {
		sc.Context.HTTPUsername, sc.Context.HTTPPassword = hc.Username, hc.Password
	}
	if c.ProxyServer != "" {
		sc.Context.Proxy = &session.Proxy{Server: c.ProxyServer, Bypass: c.ProxyBypass, Username: c.Launch.ProxyUsername, Password: c.Launch.ProxyPassword}
	}
	if rv := x.RecordVideo; rv != nil {
		sc.RecordVideo = &session.RecordVideo{Dir: s.recordVideoDir, FPS: rv.FPS}
		if rv.Size != nil {
			sc.RecordVideo.Size = &page.Size{Width: rv.Size.Width, Height: rv.Size.Height}
		}
		if a := rv.ShowActions; a != nil {
			o := &page.ActionOptions{Duration: time.Duration(a.Duration * float64(time.Millisecond)), Position: a.Position, Cursor: a.Cursor, FontSize: a.FontSize}
			if st := a.Style; st != nil {
				o.PointStyle, o.HighlightStyle, o.TitleStyle = st.Point, st.Highlight, st.Title
			}
			sc.RecordVideo.Actions = o
		}
	}
	sc.Launch = session.LaunchOptions{Env: c.Launch.Env, SlowMo: c.Launch.SlowMo, IgnoreDefaultArgs: c.Launch.IgnoreDefaultArgs}
	if c.Launch.Timeout > 0 {
		sc.LaunchTimeout = c.Launch.Timeout
	}
	return sc
}

// LaunchConfig is the session configuration of cfg for a binary already
// resolved, with no server around it (no notices, errors-only logs): what
// doctor's launch check starts its one session from.
func LaunchConfig(cfg config.Config, bin cloakbrowser.BinaryInfo) session.Config {
	s := &Server{cfg: cfg, log: NewLogger(io.Discard, "error"), bin: knownBinary(bin)}
	sc := s.sessionConfig()
	sc.Notify = nil // no MCP client to tell
	return sc
}

func (s *Server) sessionFor(ctx context.Context) (*session.Session, error) {
	s.mu.Lock()
	closed, ht, sess := s.closed, s.httpT, s.stdio
	s.mu.Unlock()
	switch {
	case closed:
		return nil, session.ErrClosed
	case ht != nil:
		return ht.sessionFor(ctx)
	case sess != nil:
		return sess, nil
	}
	// No lock is held while the CDP port is leased: concurrent first calls
	// share one creation.
	return s.stdioInit.Do(ctx, s.newStdioSession)
}

// newStdioSession creates the stdio session once (with its CDP endpoint).
func (s *Server) newStdioSession() (*session.Session, error) {
	s.mu.Lock()
	if s.stdio != nil || s.closed {
		sess, closed := s.stdio, s.closed
		s.mu.Unlock()
		if closed {
			return nil, session.ErrClosed
		}
		return sess, nil
	}
	s.mu.Unlock()
	sc := s.sessionConfig()
	if b := s.opts.Browser; b != nil && !s.cfg.CDP.Enabled {
		ctx, cancel := context.WithTimeout(s.life, time.Minute)
		if b.Fits(ctx, sc) {
			sc.Shared = b
		}
		cancel()
	}
	sess := session.New("stdio", s.drv, sc)
	if s.cfg.CDP.Enabled {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := s.enableCDP(ctx, sess)
		cancel()
		if err != nil {
			_ = closeSession(sess)
			return nil, fmt.Errorf("CDP endpoint: %w", err)
		}
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.stdio = sess
	}
	s.mu.Unlock()
	if closed {
		_ = closeSession(sess)
		return nil, session.ErrClosed
	}
	return sess, nil
}

// ServeStdio serves one MCP client over in/out until in reaches EOF or ctx
// ends. It does not close the server: call Close after it returns.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.cfg.CDP.Enabled {
		// Lease the CDP port before serving: a port held by another process
		// is a configuration error the operator sees at once.
		if _, err := s.sessionFor(ctx); err != nil {
			return err
		}
	}
	if !s.opts.NoPrewarm {
		s.mu.Lock()
		s.warmArmed = true
		s.mu.Unlock()
	}
	ss := server.NewStdioServer(s.mcp)
	ss.SetErrorLogger(stdLogger(s.log, "mcp"))
	err := ss.Listen(ctx, eofReader{in, s.endLife}, s.cancels.stdioWriter(out))
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, context.Canceled)) {
		err = nil
	}
	return err
}

// startPrewarm starts the stdio session's prewarm at the client's first
// request (its initialize, a few milliseconds after the spawn), once: a
// process whose client leaves before asking anything (a probe, stdin
// closed at once) starts no driver and no browser.
func (s *Server) startPrewarm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.warmArmed || s.warmed || s.closed {
		return
	}
	s.warmed = true
	s.bg.Go(s.prewarm)
}

// prewarm launches the stdio session's browser in the background so the
// first browser call finds it ready; a failure is kept for that call to retry.
func (s *Server) prewarm() {
	sess, err := s.sessionFor(context.Background())
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := sess.Generation(ctx); err != nil && !errors.Is(err, session.ErrClosed) && s.life.Err() == nil {
		s.log.Warn().Err(err).Msg("browser prewarm failed; the first browser call will retry")
	}
}

// closeSession closes sess, bounded.
func closeSession(sess *session.Session) error {
	ctx, cancel := context.WithTimeout(context.Background(), sessionCloseTimeout)
	defer cancel()
	return sess.Close(ctx)
}

// Close disposes of every session's browser, then stops the driver and the
// binary resolution if it still runs, and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.endLife()
	sess := s.stdio
	ht := s.httpT
	s.mu.Unlock()
	s.bin.cancel() // a launch waiting for the binary gives up now
	var errs []error
	if ht != nil {
		errs = append(errs, ht.shutdown())
	}
	if sess != nil {
		errs = append(errs, closeSession(sess))
	}
	s.bg.Wait() // the prewarm ends with the session
	s.notes.close()
	errs = append(errs, s.closeDriver())
	s.bin.close()
	return errors.Join(errs...)
}

// Run serves cfg's transport until the client goes away or a signal arrives,
// then cleans up.
func Run(ctx context.Context, cfg config.Config, stdin io.Reader, stdout, stderr io.Writer) error {
	// A client that closes our stderr must not kill us before cleanup.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := New(cfg, Options{Log: stderr})
	if err != nil {
		return err
	}
	defer s.Close()
	switch cfg.Transport {
	case config.TransportHTTP:
		return s.ServeHTTP(ctx)
	default:
		s.log.Info().Str("version", Version).Msg("serving MCP over stdio")
		return s.ServeStdio(ctx, stdin, stdout)
	}
}

// eofReader ends the server's life when the client closes its end of stdio:
// mcp-go waits for the calls in flight before Listen returns, and they must
// not wait on a page that never answers.
type eofReader struct {
	r     io.Reader
	onEOF context.CancelFunc
}

func (e eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.onEOF()
	}
	return n, err
}

// noBound maps a configured bound where 0 means none to tools' form, where
// zero is the default and a negative value none.
func noBound(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
