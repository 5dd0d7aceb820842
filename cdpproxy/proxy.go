package cdpproxy

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/portrange"
)

// Proxy states reported by [Proxy.State] (the bridge's cdp.state).
const (
	StateReady       = "ready"
	StateUnavailable = "unavailable"
)

// Proxy serves one leased port: the discovery routes and WebSockets under
// /cdp/<capability>, forwarded to the current browser generation's loopback
// DevTools endpoint. At most one capability is live at a time. All methods
// are safe for concurrent use.
type Proxy struct {
	lease  *Lease
	limits Limits
	logf   func(format string, args ...any)
	scheme string // advertised: http or https
	auth   string // advertised authority, host:port
	policy policy
	files  *fileGuard // nil: unrestricted file access (the target rules still hold)

	srv       *http.Server
	transport *http.Transport // to the browser; no proxies, no keep-alive
	serveDone chan struct{}

	current atomic.Pointer[generation]

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup // ServeHTTP calls in progress, WebSocket relays included
	ws       int            // WebSocket slots taken
	http     int            // HTTP requests being proxied
	pairs    map[*wsPair]struct{}
	done     chan struct{} // closed when Close has finished

	rejCapability, rejHost, rejOrigin atomic.Uint64
	lastRejectionLog                  atomic.Int64 // unix nanos
}

// generation is one published capability and the upstream it reaches.
type generation struct {
	digest   capDigest
	upstream *url.URL // http://127.0.0.1:<port>
	rw       rewriter
	discover string       // the discovery URL (holds the capability)
	targets  *targetTable // what the proxy knows of the browser's targets

	ctx    context.Context // cancelled with ErrRevoked (or ErrClosed) on revocation
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	revoked bool
	pairs   map[*wsPair]struct{}
}

// New starts serving on lease's listener. The capability is not published
// until [Proxy.Publish]; until then every /cdp/ route answers 404. Close
// stops it; releasing the lease stays the caller's.
func New(lease *Lease, cfg Config) (*Proxy, error) {
	if lease == nil {
		return nil, errors.New("cdpproxy: New: nil lease")
	}
	if cfg.BindHost == "" {
		cfg.BindHost = lease.Host()
	} else if !strings.EqualFold(strings.Trim(cfg.BindHost, "[]"), strings.Trim(lease.Host(), "[]")) {
		return nil, fmt.Errorf("cdpproxy: BindHost %q differs from the lease's host %q", cfg.BindHost, lease.Host())
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.AdvertisedScheme == "" {
		cfg.AdvertisedScheme = "http"
	}
	adv := cfg.AdvertisedHost
	if adv == "" {
		adv = cfg.BindHost
	}
	p := &Proxy{
		lease:     lease,
		limits:    cfg.Limits.withDefaults(),
		logf:      cfg.Logf,
		scheme:    cfg.AdvertisedScheme,
		auth:      authority(adv, lease.Port()),
		serveDone: make(chan struct{}),
		pairs:     make(map[*wsPair]struct{}),
		done:      make(chan struct{}),
		files:     newFileGuard(cfg.Files),
	}
	if p.logf == nil {
		p.logf = func(string, ...any) {}
	}
	advHP, _ := parseAuthority(p.auth, 0)
	p.policy = policy{
		scheme:         p.scheme,
		advertised:     advHP,
		loopbackBind:   isLoopbackHost(cfg.BindHost),
		port:           lease.Port(),
		allowedOrigins: make(map[string]bool),
	}
	for _, o := range cfg.AllowedOrigins {
		n, _ := normalizeOrigin(o)
		p.policy.allowedOrigins[n] = true
	}
	p.transport = &http.Transport{
		Proxy:                  nil, // never route the browser's endpoint through HTTP_PROXY
		DialContext:            dialUpstream(p.limits.Timeout),
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: int64(p.limits.MaxHeaderBytes),
	}
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		MaxHeaderBytes:    p.limits.MaxHeaderBytes,
		ReadHeaderTimeout: p.limits.Timeout,
		IdleTimeout:       2 * p.limits.Timeout,
		ErrorLog:          log.New(logfWriter(p.logf), "cdpproxy: http: ", 0),
	}
	go func() {
		defer close(p.serveDone)
		err := p.srv.Serve(lease.Listener())
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.logf("cdpproxy: serve port %d: %v", lease.Port(), err)
		}
	}()
	return p, nil
}

// logfWriter adapts Logf for http.Server.ErrorLog.
type logfWriter func(format string, args ...any)

func (f logfWriter) Write(b []byte) (int, error) {
	f("%s", strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

// Port is the leased port the proxy listens on.
func (p *Proxy) Port() int { return p.lease.Port() }

// State is StateReady while a capability is published, else StateUnavailable.
func (p *Proxy) State() string {
	if p.current.Load() != nil {
		return StateReady
	}
	return StateUnavailable
}

// DiscoveryURL is http(s)://<advertised host>:<port>/cdp/<capability>, or ""
// while nothing is published. It is a secret: whoever holds it controls the
// browser. Do not log it.
func (p *Proxy) DiscoveryURL() string {
	if g := p.current.Load(); g != nil {
		return g.discover
	}
	return ""
}

// Stats reports open connections, in-flight requests and rejections.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	s := Stats{ActiveConnections: p.ws, ActiveRequests: p.http}
	p.mu.Unlock()
	s.Rejections = p.Rejections()
	return s
}

// Rejections counts the security rejections (capability, Host, Origin) so far.
func (p *Proxy) Rejections() Rejections {
	return Rejections{
		Capability: p.rejCapability.Load(),
		Host:       p.rejHost.Load(),
		Origin:     p.rejOrigin.Load(),
	}
}

// Publish makes a new capability live for upstream, the browser's internal
// endpoint "http://127.0.0.1:<port>" (a loopback http URL; nothing else is
// accepted), and returns its discovery URL. A capability published before is
// revoked first, with its sockets: an old URL never reaches the new browser.
func (p *Proxy) Publish(upstream string) (string, error) {
	u, err := parseUpstream(upstream)
	if err != nil {
		return "", err
	}
	token := newCapability()
	ctx, cancel := context.WithCancelCause(context.Background())
	g := &generation{
		digest:   digestOf(token),
		upstream: u,
		rw:       newRewriter(p.scheme, p.auth, token),
		discover: p.scheme + "://" + p.auth + "/cdp/" + token,
		targets:  newTargetTable(),
		ctx:      ctx,
		cancel:   cancel,
		pairs:    make(map[*wsPair]struct{}),
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		cancel(ErrClosed)
		return "", fmt.Errorf("cdpproxy: publish on port %d: %w", p.Port(), ErrClosed)
	}
	old := p.current.Swap(g)
	p.mu.Unlock()
	if old != nil {
		p.revoke(old, ErrRevoked)
	}
	p.logf("cdpproxy: port %d: published a new capability for upstream port %s", p.Port(), u.Port())
	return g.discover, nil
}

// parseUpstream accepts only http://<loopback>:<port>.
func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("cdpproxy: upstream %q: %w", s, err)
	}
	if u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("cdpproxy: upstream %q: want http://127.0.0.1:<port>", s)
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("cdpproxy: upstream %q: the browser's DevTools endpoint must be on loopback", s)
	}
	if _, err := portrange.ParsePort(u.Port()); err != nil {
		return nil, fmt.Errorf("cdpproxy: upstream %q: %w", s, err)
	}
	return &url.URL{Scheme: "http", Host: u.Host}, nil
}

// Revoke invalidates the current capability, if any: its URLs answer 404 from
// now on, in-flight HTTP requests to the browser are cancelled, the browser
// side of every proxied WebSocket is closed before Revoke returns, and each
// client gets close code 1001 "browser gone".
func (p *Proxy) Revoke() {
	p.mu.Lock()
	old := p.current.Swap(nil)
	p.mu.Unlock()
	if old != nil {
		p.revoke(old, ErrRevoked)
		p.logf("cdpproxy: port %d: capability revoked", p.Port())
	}
}

func (p *Proxy) revoke(g *generation, cause error) {
	g.mu.Lock()
	g.revoked = true
	pairs := make([]*wsPair, 0, len(g.pairs))
	for pr := range g.pairs {
		pairs = append(pairs, pr)
	}
	g.mu.Unlock()
	g.cancel(cause)
	for _, pr := range pairs {
		pr.closeUpstream()
	}
}

// Close revokes the capability, stops the server (closing the lease's
// listener), and waits until every request and relay has ended. WebSocket
// close handshakes get Limits.ShutdownTimeout before their connections are
// dropped. Releasing the lease stays the caller's. Close is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.done
		return nil
	}
	p.closed = true
	old := p.current.Swap(nil)
	p.mu.Unlock()
	defer close(p.done)

	if old != nil {
		p.revoke(old, ErrClosed)
	}
	err := p.srv.Close() // listener and non-hijacked connections
	waited := make(chan struct{})
	go func() {
		p.handlers.Wait()
		close(waited)
	}()
	timer := time.NewTimer(p.limits.ShutdownTimeout)
	select {
	case <-waited:
		timer.Stop()
	case <-timer.C:
		p.mu.Lock()
		pairs := make([]*wsPair, 0, len(p.pairs))
		for pr := range p.pairs {
			pairs = append(pairs, pr)
		}
		p.mu.Unlock()
		for _, pr := range pairs {
			pr.drop()
		}
		<-waited
	}
	<-p.serveDone
	p.transport.CloseIdleConnections()
	p.logf("cdpproxy: port %d: closed", p.Port())
	if err != nil {
		return fmt.Errorf("cdpproxy: close port %d: %w", p.Port(), err)
	}
	return nil
}

// enter registers a request; false once the proxy is closed.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.handlers.Add(1)
	return true
}

// reject counts a security rejection and logs a throttled summary.
func (p *Proxy) reject(w http.ResponseWriter, r *http.Request, counter *atomic.Uint64, status int, code, reason string) {
	counter.Add(1)
	now := time.Now().UnixNano()
	last := p.lastRejectionLog.Load()
	if now-last >= int64(10*time.Second) && p.lastRejectionLog.CompareAndSwap(last, now) {
		rj := p.Rejections()
		p.logf("cdpproxy: port %d: rejected %s %s (%s); rejections so far: capability=%d host=%d origin=%d",
			p.Port(), r.Method, redactPath(r.URL.EscapedPath()), reason, rj.Capability, rj.Host, rj.Origin)
	}
	if status == http.StatusNotFound {
		writeNotFound(w)
		return
	}
	writeError(w, status, code, reason)
}

// redactPath hides the capability segment of a /cdp/ path.
func redactPath(path string) string {
	rest, ok := strings.CutPrefix(path, "/cdp/")
	if !ok {
		return path
	}
	if _, tail, found := strings.Cut(rest, "/"); found {
		return "/cdp/<redacted>/" + tail
	}
	return "/cdp/<redacted>"
}

// serveHTTP is the proxy's only handler: security checks, then routing.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "CDP proxy is closing")
		return
	}
	defer p.handlers.Done()

	// Host and Origin first, on every path: a rebinding or cross-site page
	// learns nothing, not even whether a path exists.
	if !p.policy.hostAllowed(r.Host) {
		p.reject(w, r, &p.rejHost, http.StatusForbidden, codeForbidden, "Host header does not name this CDP endpoint")
		return
	}
	if !p.policy.originAllowed(r) {
		p.reject(w, r, &p.rejOrigin, http.StatusForbidden, codeForbidden, "Origin not allowed")
		return
	}

	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/cdp/")
	if !ok {
		writeNotFound(w)
		return
	}
	presented, tail, hasTail := strings.Cut(rest, "/")
	rest = ""
	if hasTail {
		rest = "/" + tail
	}
	g := p.current.Load()
	digest := &unmatchable
	if g != nil {
		digest = &g.digest
	}
	// Always compare, against a random digest when nothing is published, so
	// a probe's timing says nothing about the proxy's state.
	if !digest.matches(presented) || g == nil {
		p.reject(w, r, &p.rejCapability, http.StatusNotFound, codeNotFound, "unknown capability")
		return
	}

	rt := classify(rest)
	switch rt.kind {
	case routeNone:
		writeNotFound(w)
		return
	case routeBadID:
		writeError(w, http.StatusBadRequest, codeBadRequest, "invalid target id")
		return
	}
	if !methodAllowed(r.Method, rt.methods) {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		writeError(w, http.StatusMethodNotAllowed, codeMethodNotAllowed, "method not allowed on this CDP route")
		return
	}
	if rt.kind == routeWebSocket {
		p.serveWebSocket(w, r, g, rt.upstream)
		return
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, codePayloadTooLarge, "CDP discovery requests take no body")
		return
	}
	p.serveDiscovery(w, r, g, rt)
}

func methodAllowed(m string, allowed []string) bool {
	for _, a := range allowed {
		if m == a {
			return true
		}
	}
	return false
}

// acquire takes one slot of *n if it is below max.
func (p *Proxy) acquire(n *int, max int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *n >= max {
		return false
	}
	*n++
	return true
}

func (p *Proxy) release(n *int) {
	p.mu.Lock()
	*n--
	p.mu.Unlock()
}
