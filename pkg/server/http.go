package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/fleet"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// HTTPProtocolVersions returns the MCP revisions served over Streamable
// HTTP, newest first: the ones with protocol sessions. 2026-07-28 has none
// (no Mcp-Session-Id, so nothing would tell two clients' browsers apart); its
// clients are told so (UnsupportedProtocolVersion, listing these) and fall
// back to initialize with one of these, getting a session and a browser of
// their own.
func HTTPProtocolVersions() []string {
	return []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326}
}

// Shutdown bounds.
const (
	// httpDrainTimeout bounds the wait for in-flight HTTP requests at
	// shutdown, after which connections are closed.
	httpDrainTimeout = 10 * time.Second
	// sessionCloseTimeout bounds the wait for the sessions' browsers.
	sessionCloseTimeout = 30 * time.Second
)

// httpTransport is the Streamable HTTP transport of a Server: the listener's
// HTTP server, the mcp-go handler, the policy middleware and the sessions.
type httpTransport struct {
	s   *Server
	cfg config.HTTP
	reg *session.Registry
	// shared is the browser whose contexts the sessions are: in "context"
	// isolation one of the transport's own (ownShared), or Options.Browser
	// when the sessions fit it (sharesBrowser); otherwise nil.
	shared    *session.SharedBrowser
	ownShared bool
	mcpHTTP   *server.StreamableHTTPServer
	policy    *httpguard.Policy
	srv       *http.Server
	addr      net.Addr
	url       string
	started   time.Time
	streams   streams // open GET streams, one per session

	// The fleet (http_fleet.go): nil unless --http-session-backend redis.
	fleet *fleet.Registry
	fwd   *fleet.Forwarder
	// pool hands sessions remote browsers (--browser-endpoint-pool); nil
	// when sessions launch their own. seats are the sessions' places in it.
	pool    *browserPool
	seatsMu sync.Mutex
	seats   map[string]*seat
	// profiles are the profile directories sessions chose (initialize
	// _meta userDataDir); profileHeld releases each session's claim when
	// it closes.
	profiles    profileClaims
	profileMu   sync.Mutex
	profileHeld map[string]func()

	draining     chan struct{} // closed when shutdown starts
	shutdownOnce sync.Once
	shutdownDone chan struct{}
	shutdownErr  error
}

// ServeHTTP serves the Streamable HTTP transport on the configured host and
// port until ctx ends or the server is closed, then shuts down gracefully:
// it stops accepting, closes every session's browser and waits (bounded) for
// requests in flight. It does not close the server: call Close after it.
func (s *Server) ServeHTTP(ctx context.Context) error {
	addr := net.JoinHostPort(s.cfg.HTTP.Host, strconv.Itoa(s.cfg.HTTP.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http-host/--http-port: listen on %s: %w", addr, err)
	}
	return s.ServeHTTPListener(ctx, ln)
}

// ServeHTTPListener is ServeHTTP on a listener the caller made (for example
// on port 0 in tests). It takes ownership of ln.
func (s *Server) ServeHTTPListener(ctx context.Context, ln net.Listener) error {
	// Sessions come at any time: the driver starts now, not with the first.
	s.drv.Begin()
	t, err := s.startHTTP(ln)
	if err != nil {
		_ = ln.Close()
		return err
	}
	serveErr := make(chan error, 1)
	go func() {
		var err error
		if t.srv.TLSConfig != nil {
			err = t.srv.Serve(tls.NewListener(ln, t.srv.TLSConfig))
		} else {
			err = t.srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		serveErr <- err
	}()
	s.log.Info().Str("url", t.url).Str("version", Version).Str("isolation", t.cfg.Isolation).
		Int("sessionMax", t.cfg.SessionMax).Int("sessionMaxPerPrincipal", t.cfg.SessionMaxPerPrincipal).Dur("sessionIdleTTL", t.cfg.SessionIdleTTL).
		Strs("protocolVersions", HTTPProtocolVersions()).Int("authTokens", t.policy.Tokens()).
		Msg("serving MCP over streamable HTTP")
	t.policy.WarnRisks(s.log)
	var err2 error
	select {
	case <-ctx.Done():
	case <-t.draining:
	case err2 = <-serveErr:
		if err2 != nil {
			err2 = fmt.Errorf("serve HTTP on %s: %w", t.addr, err2)
		}
	}
	return errors.Join(err2, t.shutdown())
}

// HTTPAddr is the address the HTTP transport listens on, or nil when it is
// not serving.
func (s *Server) HTTPAddr() net.Addr {
	if t := s.transport(); t != nil {
		return t.addr
	}
	return nil
}

// HTTPURL is the MCP endpoint's URL, or "" when HTTP is not being served.
func (s *Server) HTTPURL() string {
	if t := s.transport(); t != nil {
		return t.url
	}
	return ""
}

// Sessions is the registry of HTTP sessions, or nil when HTTP is not being
// served.
func (s *Server) Sessions() *session.Registry {
	if t := s.transport(); t != nil {
		return t.reg
	}
	return nil
}

// SharedBrowser is the browser whose contexts the HTTP sessions are (in
// "context" isolation, or Options.Browser when they fit it), or nil.
func (s *Server) SharedBrowser() *session.SharedBrowser {
	if t := s.transport(); t != nil {
		return t.shared
	}
	return nil
}

func (s *Server) transport() *httpTransport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.httpT
}

// portOf is the TCP port of a listener's address (0 if not TCP).
func portOf(a net.Addr) int {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.Port
	}
	return 0
}

// sharesBrowser reports whether HTTP sessions configured with base open a
// context in Options.Browser instead of a browser of their own (or of the
// transport's own shared browser): the isolation allows it ("context", or
// Options.HTTPInBrowser), they fit it, and none can publish a CDP
// endpoint, which would reach every context in it.
func (s *Server) sharesBrowser(base session.Config) bool {
	b := s.opts.Browser
	if b == nil || s.cfg.CDP.Enabled || s.cfg.CDP.PortRange != "" || (s.cfg.HTTP.Isolation != "context" && !s.opts.HTTPInBrowser) {
		return false
	}
	ctx, cancel := context.WithTimeout(s.life, time.Minute)
	defer cancel()
	return b.Fits(ctx, base)
}

// startHTTP builds the transport for ln and records it on the server.
func (s *Server) startHTTP(ln net.Listener) (*httpTransport, error) {
	cfg := s.cfg.HTTP
	t := &httpTransport{
		s: s, cfg: cfg, addr: ln.Addr(), started: time.Now(),
		draining: make(chan struct{}), shutdownDone: make(chan struct{}),
	}
	port := portOf(ln.Addr())
	tlsOn := cfg.Protocol == "https"
	var tlsCfg *tls.Config
	if tlsOn {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--https-cert=%s --https-key=%s: %w", cfg.CertFile, cfg.KeyFile, err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	t.policy = httpguard.New(cfg, port, tlsOn)
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	t.url = scheme + "://" + ln.Addr().String() + cfg.Endpoint

	fctx, fcancel := context.WithTimeout(context.Background(), 5*time.Second)
	err := t.openFleet(fctx, ln, scheme)
	fcancel()
	if err != nil {
		return nil, err
	}
	t.pool = newBrowserPool(cfg.BrowserEndpointPool, t.fleet)
	t.seats = map[string]*seat{}

	base := s.sessionConfig()
	base.UserDataDir = "" // every HTTP session gets its own temporary profile
	switch {
	case t.pool != nil: // pool sessions attach to remote browsers
	case s.sharesBrowser(base):
		t.shared = s.opts.Browser
		base.Shared = t.shared
	case cfg.Isolation == "context":
		t.shared, t.ownShared = session.NewSharedBrowser(s.drv, base), true
		base.Shared = t.shared
	}
	t.reg = session.NewRegistry(session.RegistryOptions{
		Max:             cfg.SessionMax,
		MaxPerPrincipal: cfg.SessionMaxPerPrincipal,
		Isolation:       cfg.Isolation,
		Log:             s.log,
		New:             t.sessionFactory(base),
		OnClose: func(key, handle string) {
			t.releaseSeat(handle)
			t.releaseProfile(handle)
			if t.fleet != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				t.fleet.Release(ctx, key)
				cancel()
			}
		},
	})

	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath(cfg.Endpoint),
		// Our own stateful ID manager: IDs exist only while their session is
		// in the registry (unknown or ended → 404), and ending one through
		// mcp-go (DELETE, idle sweep, CloseSessions) closes its browser.
		server.WithSessionIdManager(&idManager{reg: t.reg}),
		server.WithSessionIdleTTL(cfg.SessionIdleTTL),
		// Resumable streams (a few recent events per session), and the
		// notifications a tool sends just before it answers arrive.
		server.WithEventStore(newBoundedEventStore()),
		server.WithStreamableHTTPProtocolVersions(HTTPProtocolVersions()...),
		// Our Host check (policy) is stricter and honours --allowed-hosts.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(slogToZerolog(s.log.With().Str("component", "mcp-http").Logger())),
	}
	if len(cfg.AllowedOrigins) > 0 {
		opts = append(opts, server.WithStreamableHTTPCORS(
			server.WithCORSAllowedOrigins(cfg.AllowedOrigins...),
			server.WithCORSAllowedHeaders("Content-Type", "Accept", "Authorization", server.HeaderKeySessionID,
				mcp.HeaderProtocolVersion, "Last-Event-ID"),
		))
	}
	t.mcpHTTP = server.NewStreamableHTTPServer(s.mcp, opts...)

	mux := http.NewServeMux()
	mux.Handle(cfg.Endpoint, t.endpoint(s.cancels.httpHandler(t.mcpHTTP)))
	mux.HandleFunc("/healthz", t.healthz)
	mux.HandleFunc("/readyz", t.readyz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpguard.WriteError(w, http.StatusNotFound, nil, mcp.INVALID_REQUEST, "not found: the MCP endpoint is "+cfg.Endpoint)
	})
	t.srv = &http.Server{
		// Body bounds come first, so they also cover the body net/http
		// discards after a refusal.
		Handler:           httpguard.BoundBody(t.policy.HostOrigin(mux, s.log), cfg.BodyReadTimeout, cfg.BodyIdleTimeout),
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          stdLogger(s.log, "http"),
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		t.mcpHTTP.Shutdown(context.Background()) //nolint:errcheck // stops its sweeper
		_ = t.closeFleet(context.Background())
		return nil, session.ErrClosed
	case s.httpT != nil:
		t.mcpHTTP.Shutdown(context.Background()) //nolint:errcheck
		_ = t.closeFleet(context.Background())
		return nil, errors.New("already serving HTTP")
	}
	s.httpT = t
	return t, nil
}

// shutdown stops the transport gracefully, once: new sessions are refused,
// the listener closes, every session's browser is closed in parallel, open
// streams end, and requests in flight get a bounded time to finish.
func (t *httpTransport) shutdown() error {
	t.shutdownOnce.Do(func() {
		defer close(t.shutdownDone)
		close(t.draining)
		start := time.Now()
		log := t.s.log
		log.Info().Int("sessions", t.reg.Stats().Active).Msg("HTTP shutdown: closing sessions")
		drainCtx, cancelDrain := context.WithTimeout(context.Background(), httpDrainTimeout)
		defer cancelDrain()
		drained := make(chan error, 1)
		go func() { drained <- t.srv.Shutdown(drainCtx) }()

		var errs []error
		sctx, cancel := context.WithTimeout(context.Background(), sessionCloseTimeout)
		errs = append(errs, t.reg.Shutdown(sctx))
		cancel()
		// The fleet forgets this instance at once (not after its TTL).
		fctx, fcancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := t.closeFleet(fctx); err != nil {
			log.Warn().Err(err).Msg("fleet: could not delete this instance's records; they expire with its heartbeat")
		}
		fcancel()
		if t.ownShared {
			bctx, bcancel := context.WithTimeout(context.Background(), sessionCloseTimeout)
			errs = append(errs, t.shared.Close(bctx))
			bcancel()
		}
		// Ends open GET streams and stops mcp-go's idle sweeper.
		_ = t.mcpHTTP.Shutdown(drainCtx)
		if err := <-drained; err != nil {
			log.Warn().Err(err).Msg("HTTP shutdown: requests still in flight; closing their connections")
			_ = t.srv.Close()
		}
		t.shutdownErr = errors.Join(errs...)
		log.Info().Int64("ms", time.Since(start).Milliseconds()).Msg("HTTP shutdown done")
	})
	<-t.shutdownDone
	return t.shutdownErr
}

// sessionFor finds the browser session of the MCP session a tool call
// belongs to.
func (t *httpTransport) sessionFor(ctx context.Context) (*session.Session, error) {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || cs.SessionID() == "" {
		return nil, fmt.Errorf("browser tools need an MCP session: initialize with protocol version %s (2026-07-28 has no sessions, so no browser of your own)",
			strings.Join(HTTPProtocolVersions(), ", "))
	}
	sess, err := t.reg.Get(cs.SessionID())
	if err != nil {
		return nil, fmt.Errorf("this MCP session has ended (closed, idle too long, or the server is stopping); start a new one: %w", session.ErrClosed)
	}
	return sess, nil
}

// healthz reports liveness: 200 while the process serves. Only a caller
// the MCP endpoint would accept (a valid bearer token, or anyone when no
// token is configured) also learns the version, transport and uptime.
func (t *httpTransport) healthz(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	if _, ok := t.policy.ProbeCaller(r); !ok {
		httpguard.WriteJSON(w, http.StatusOK, t.withRegistry(map[string]any{"status": "ok"}))
		return
	}
	httpguard.WriteJSON(w, http.StatusOK, t.withRegistry(map[string]any{
		"status":    "ok",
		"version":   Version,
		"transport": config.TransportHTTP,
		"uptimeMs":  time.Since(t.started).Milliseconds(),
	}))
}

// readyz reports whether a new session would be accepted: 503 when every
// slot is taken or the server is shutting down. Load balancers get the
// status (and, in a fleet, the registry's state) alone; an authenticated
// caller (as for healthz) also gets the version, the session counts and its
// own sessions against its quota. An unreachable Redis shows in the
// registry field, not in the status: every instance shares it, and a
// balancer that took them all out would cut off the sessions they still
// serve.
func (t *httpTransport) readyz(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	st := t.reg.Stats()
	status, code := "ready", http.StatusOK
	select {
	case <-t.draining:
		status, code = "stopping", http.StatusServiceUnavailable
	default:
		if st.Available == 0 {
			status, code = "full", http.StatusServiceUnavailable
		}
	}
	principal, ok := t.policy.ProbeCaller(r)
	if !ok {
		httpguard.WriteJSON(w, code, t.withRegistry(map[string]any{"status": status}))
		return
	}
	httpguard.WriteJSON(w, code, t.withRegistry(map[string]any{
		"status":    status,
		"version":   Version,
		"transport": config.TransportHTTP,
		"uptimeMs":  time.Since(t.started).Milliseconds(),
		"sessions":  st,
		"principal": map[string]any{
			"name":     principal,
			"sessions": t.reg.PrincipalSessions(principal),
			"max":      t.cfg.SessionMaxPerPrincipal, // 0: only sessions.max applies
		},
	}))
}

// probeMethod answers 405 unless r is a GET or HEAD.
func probeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	httpguard.WriteError(w, http.StatusMethodNotAllowed, nil, mcp.INVALID_REQUEST, "method not allowed")
	return false
}
