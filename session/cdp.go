package session

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/cdpproxy"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// ErrOwnership means the browser's internal DevTools endpoint could not be
// shown to belong to the generation Playwright launched; nothing is
// published for it.
var ErrOwnership = errors.New("CDP ownership proof failed")

// Bounds of the steps between a launch and the publication of its capability.
const (
	// internalPortWait bounds the wait for the browser's internal DevTools
	// endpoint to answer after the launch.
	internalPortWait = 10 * time.Second
	// ownershipProofTimeout bounds the ownership proof.
	ownershipProofTimeout = 10 * time.Second
)

// internalDebuggingArgs make the browser listen on port, an internal DevTools
// port (see reserveInternalPort), beside Playwright's pipe. Chromium binds
// 127.0.0.1 whatever the address says (or [::1] when 127.0.0.1 is taken:
// awaitInternalPort tells); the address is for builds that honour it. With a
// port given, Chromium writes no DevToolsActivePort: the number is nowhere
// but in this process.
func internalDebuggingArgs(port int) []string {
	return []string{"--remote-debugging-port=" + strconv.Itoa(port), "--remote-debugging-address=127.0.0.1"}
}

// ErrNoInternalPort means every internal DevTools port is in use: by this
// process's browsers, other servers' or other programs.
var ErrNoInternalPort = errors.New("no free internal DevTools port")

// internalPorts are the internal DevTools ports this process has picked for
// browsers that have not yet shown they listen on them. A port a live
// browser listens on is found taken by binding it.
var internalPorts = struct {
	sync.Mutex
	held map[int]bool
}{held: map[int]bool{}}

// reserveInternalPort picks a free internal DevTools port: one of
// cloakbrowser.InternalDevToolsPorts, which every Chromium refuses to load
// anything from, so no page of any browser — another principal's, another
// session's, this one's — reaches the endpoint by navigation, fetch, iframe,
// WebSocket or redirect, under any host spelling or through a proxy. A port
// is free if this process holds no reservation of it and 127.0.0.1:port
// binds; the order is random within each tier, avoid (the session's last
// port) last, so that servers launching at once seldom pick the same one.
func reserveInternalPort(avoid int) (int, error) {
	internalPorts.Lock()
	defer internalPorts.Unlock()
	for _, tier := range cloakbrowser.InternalDevToolsPorts() {
		mrand.Shuffle(len(tier), func(i, j int) { tier[i], tier[j] = tier[j], tier[i] })
		if i := slices.Index(tier, avoid); i >= 0 {
			tier = append(append(tier[:i:i], tier[i+1:]...), avoid)
		}
		for _, p := range tier {
			if internalPorts.held[p] {
				continue
			}
			ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				continue
			}
			_ = ln.Close()
			internalPorts.held[p] = true
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: every port Chromium keeps closed to pages that this process may bind is taken; close a session with CDP", ErrNoInternalPort)
}

func releaseInternalPort(p int) {
	internalPorts.Lock()
	delete(internalPorts.held, p)
	internalPorts.Unlock()
}

// afterInternalPortPick, if set (by tests), runs after a launch's internal
// port is picked and before the browser is started on it.
var afterInternalPortPick func(port int)

// internalPortAttempts bounds the launches of one generation whose internal
// port another browser took between the pick and the bind.
const internalPortAttempts = 3

// errInternalPortTaken means the browser could not listen on its internal
// port on 127.0.0.1: another process took it after it was picked.
var errInternalPortTaken = errors.New("the internal DevTools port was taken by another process")

// CDP is a session's managed CDP endpoint: a port lease stable for the
// session's life, the capability proxy serving on it (clients reach the
// browser only through it, with a capability of the current generation),
// and the ownership proof that gates every publication. The browser, its internal
// endpoint, the generation and the capability are replaced on each restart;
// the port is not.
//
// A CDP is safe for concurrent use.
type CDP struct {
	lease *cdpproxy.Lease
	proxy *cdpproxy.Proxy
	cfg   cdpproxy.Config
	log   zerolog.Logger

	// mu orders publication against revocation, so that a loss noticed
	// while a capability is being published either prevents it or revokes it.
	mu        sync.Mutex
	published int // generation whose capability is live; 0 if none
	last      int // generation published last; 0 before the first
	internal  int // internal DevTools port of the published generation
	pending   int // internal port reserved for the generation being launched; 0 if none
	previous  int // internal port given to the last launch
	closed    bool
}

// CDPInfo is the state of a session's CDP endpoint, as
// cloakbrowser_bridge_info reports it.
type CDPInfo struct {
	// State is cdpproxy.StateReady while a capability is published, else
	// cdpproxy.StateUnavailable.
	State string
	// Generation is the browser generation published last (0 before any).
	Generation int
	// BindHost and Port are where the proxy listens.
	BindHost string
	Port     int
	// AdvertisedHost is --cdp-advertised-host, or "" if unset.
	AdvertisedHost string
	// DiscoveryURL is the capability URL, or "" while unavailable. It is a
	// secret: whoever holds it controls the browser. Never log it.
	DiscoveryURL string
	// ActiveConnections counts proxied WebSockets.
	ActiveConnections int
}

// EnableCDP gives the session a managed CDP endpoint on lease: a proxy
// serving on it from now on (404 until a capability is published), and, for
// every browser generation, an internal loopback DevTools endpoint whose
// capability is published only after the ownership proof. If cfg.Files
// restricts file access and names no OutputDir, the session's own directory
// is used (Session.OutputDir: its principal's directory, or the output
// directory for stdio and token-less HTTP; created if missing): CDP clients
// may send downloads there and give its files to pages, and nowhere else
// unless cfg.Files.InputRoots says so. It must be called before the
// session's first launch, and after the session's principal is set. The
// session owns lease from the call on (released by Close), also when
// EnableCDP fails.
func (s *Session) EnableCDP(lease *cdpproxy.Lease, cfg cdpproxy.Config) error {
	if lease == nil {
		return errors.New("enable CDP: no port lease")
	}
	fail := func(err error) error {
		lease.Release()
		return fmt.Errorf("enable CDP on port %d: %w", lease.Port(), err)
	}
	if s.cfg.Shared != nil {
		return fail(errors.New("a shared browser (context isolation) cannot expose CDP: every session's pages would be reachable"))
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return fail(ErrClosed)
	case s.cdp != nil:
		s.mu.Unlock()
		return fail(errors.New("already enabled"))
	case s.lastGen > 0:
		s.mu.Unlock()
		return fail(errors.New("the browser was launched already; enable CDP before the first browser call"))
	}
	if !cfg.Files.Unrestricted && cfg.Files.OutputDir == "" && s.cfg.OutputDir != "" {
		// The principal's own directory, never the whole output directory
		// (other principals' files) nor the working directory (--secrets).
		// Opened through outdir, so a symlink in its place is refused.
		root, dir, err := outdir.OpenRoot(s.cfg.OutputDir, s.principal)
		if err != nil {
			s.mu.Unlock()
			return fail(fmt.Errorf("the session's directory for CDP downloads and uploads: %w", err))
		}
		_ = root.Close()
		cfg.Files.OutputDir = dir
	}
	c := &CDP{lease: lease, cfg: cfg, log: s.log.With().Str("component", "cdp").Int("port", lease.Port()).Logger()}
	if cfg.Logf == nil {
		cfg.Logf = func(format string, args ...any) { c.log.Debug().Msgf(format, args...) }
	}
	p, err := cdpproxy.New(lease, cfg)
	if err != nil {
		s.mu.Unlock()
		return fail(err)
	}
	c.proxy = p
	s.cdp = c
	s.mu.Unlock()
	c.log.Info().Str("bindHost", lease.Host()).Msg("CDP endpoint leased")
	return nil
}

// CDP returns the session's managed CDP endpoint, or nil if it has none.
func (s *Session) CDP() *CDP {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cdp
}

// Proxy is the capability proxy (for its counters; publishing is the
// session's).
func (c *CDP) Proxy() *cdpproxy.Proxy { return c.proxy }

// Port is the leased port, stable for the session's life.
func (c *CDP) Port() int { return c.lease.Port() }

// InternalPort is the published generation's loopback DevTools port, or 0.
// CDP clients never reach it directly.
func (c *CDP) InternalPort() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.internal
}

// Info reports the endpoint's state.
func (c *CDP) Info() CDPInfo {
	c.mu.Lock()
	gen := c.last
	c.mu.Unlock()
	url := c.proxy.DiscoveryURL()
	info := CDPInfo{
		State:             cdpproxy.StateUnavailable,
		Generation:        gen,
		BindHost:          c.lease.Host(),
		Port:              c.lease.Port(),
		AdvertisedHost:    c.cfg.AdvertisedHost,
		DiscoveryURL:      url,
		ActiveConnections: c.proxy.Stats().ActiveConnections,
	}
	if url != "" {
		info.State = cdpproxy.StateReady
	}
	return info
}

// pickInternalPort reserves an internal DevTools port for the generation
// about to be launched, in place of any earlier reservation of c.
func (c *CDP) pickInternalPort() (int, error) {
	c.releasePending()
	c.mu.Lock()
	avoid := c.previous
	c.mu.Unlock()
	p, err := reserveInternalPort(avoid)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.pending, c.previous = p, p
	c.mu.Unlock()
	return p, nil
}

// pendingPort is the internal port reserved for the launch, or 0.
func (c *CDP) pendingPort() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending
}

// releasePending ends the reservation of the launch's internal port: the
// browser listens on it now, or will not.
func (c *CDP) releasePending() {
	c.mu.Lock()
	p := c.pending
	c.pending = 0
	c.mu.Unlock()
	if p != 0 {
		releaseInternalPort(p)
	}
}

// awaitInternalPort waits, bounded by internalPortWait, until the browser
// of bc lists its first page on 127.0.0.1:port. It fails with
// errInternalPortTaken if another browser lists its pages there, or if
// nothing answers there (Chromium listens on [::1] when 127.0.0.1 is taken):
// another process bound the port between its pick and the launch.
func awaitInternalPort(ctx context.Context, bc playwright.BrowserContext, port int) error {
	pages := bc.Pages()
	if len(pages) == 0 {
		return nil // the ownership proof opens a page and checks
	}
	ctx, cancel := context.WithTimeout(ctx, internalPortWait)
	defer cancel()
	id, err := pageTargetID(ctx, bc, pages[0])
	if err != nil {
		return fmt.Errorf("read the first page's target id: %w", err)
	}
	base := "127.0.0.1:" + strconv.Itoa(port)
	for {
		err := listsTarget(ctx, base, id)
		var listed *notListedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &listed):
			return fmt.Errorf("%w: %v", errInternalPortTaken, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: nothing of this browser answers on %s: %v", errInternalPortTaken, base, err)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// bounded runs fn on a goroutine of its own and returns its result, or
// ctx's cause once ctx ends first. For calls to the driver with no deadline
// of their own: the driver answers a command of a page's or the browser's
// CDP session only when the browser does (see session/page's sendCDP), so
// such a goroutine may stay behind; the caller does not wait for it.
func bounded[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	type answer struct {
		v   T
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := fn()
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

// pageTargetID reads p's target id over a CDP session of its own, bounded
// by ctx.
func pageTargetID(ctx context.Context, bc playwright.BrowserContext, p playwright.Page) (string, error) {
	id, err := bounded(ctx, func() (string, error) {
		sess, err := bc.NewCDPSession(p)
		if err != nil {
			return "", err
		}
		res, err := sess.Send("Target.getTargetInfo", nil)
		// Detached on a goroutine of its own: the answer does not wait
		// for it.
		go func() { _ = sess.Detach() }()
		if err != nil {
			return "", err
		}
		info, _ := res.(map[string]any)["targetInfo"].(map[string]any)
		id, _ := info["targetId"].(string)
		if !validTargetID(id) {
			return "", fmt.Errorf("Target.getTargetInfo gave target id %q", id)
		}
		return id, nil
	})
	if err != nil && ctx.Err() != nil {
		return "", fmt.Errorf("no answer: %w", err)
	}
	return id, err
}

// publish proves that g's internal endpoint is g's browser and only then
// makes a new capability live for it. It is the last step before waiting
// calls are forwarded to g.
func (c *CDP) publish(ctx context.Context, g *Generation) error {
	start := time.Now()
	// The browser listens on its port now (awaitInternalPort), so the
	// reservation ends here, whatever the proof says.
	port := c.pendingPort()
	defer c.releasePending()
	if !cloakbrowser.IsInternalDevToolsPort(port) {
		// Pages could reach any other port: never publish it.
		return fmt.Errorf("generation %d: %w: no internal DevTools port was given to the browser", g.N, ErrOwnership)
	}
	pctx, cancel := context.WithTimeout(ctx, ownershipProofTimeout)
	defer cancel()
	if err := proveOwnership(pctx, g, port); err != nil {
		if g.Lost() {
			return fmt.Errorf("generation %d: %w during the CDP ownership proof", g.N, ErrBrowserGone)
		}
		return fmt.Errorf("generation %d: %w: %v", g.N, ErrOwnership, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return ErrClosed
	case g.Lost():
		// Its loss has been handled (nothing was published); do not publish now.
		return fmt.Errorf("generation %d: %w before the CDP capability was published", g.N, ErrBrowserGone)
	}
	if _, err := c.proxy.Publish("http://127.0.0.1:" + strconv.Itoa(port)); err != nil {
		return fmt.Errorf("generation %d: publish CDP capability: %w", g.N, err)
	}
	c.published, c.last, c.internal = g.N, g.N, port
	// The capability URL is a secret: log where, never what.
	c.log.Info().Int("generation", g.N).Int("internalPort", port).Int64("ms", time.Since(start).Milliseconds()).
		Msg("CDP capability published after the ownership proof")
	return nil
}

// lost revokes the capability of g, if it is the published one: its URLs
// answer 404 from now on and its proxied sockets are closed with 1001.
// Nothing is relaunched.
func (c *CDP) lost(g *Generation) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.published != g.N {
		return
	}
	c.proxy.Revoke()
	c.published, c.internal = 0, 0
	c.log.Info().Int("generation", g.N).Msg("CDP capability revoked: browser lost")
}

// revoke invalidates any live capability and closes its sockets, and stops
// further publication (session close).
func (c *CDP) revoke() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.proxy.Revoke()
	c.published, c.internal = 0, 0
}

// close closes the proxy's listener and releases the port lease; it waits
// for every proxied request and socket to end.
func (c *CDP) close() error {
	c.releasePending()
	err := c.proxy.Close()
	c.lease.Release()
	c.log.Info().Msg("CDP endpoint closed; port released")
	return err
}

// loopbackClient talks to the browser's internal endpoint: never through a
// proxy, no keep-alive (each proof is one exchange).
var loopbackClient = &http.Client{
	Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, MaxResponseHeaderBytes: 64 << 10},
	Timeout:   ownershipProofTimeout,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// proveOwnership shows that the DevTools endpoint on 127.0.0.1:port is the
// browser Playwright launched for g: through Playwright's pipe, an isolated
// world with a one-time random name is made in g's page and given a random
// token; through the endpoint, that world's context (execution context ids
// are the renderer's, the same in every DevTools session) is asked for the
// token, which must match. Another process's browser on that port (a port
// reused after a crash, a squatter) cannot know the secret. The page sees
// nothing of it: no global, no script in its own world.
func proveOwnership(ctx context.Context, g *Generation, port int) error {
	tab, err := proofTab(ctx, g)
	if err != nil {
		return err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	world := "proof-" + hex.EncodeToString(nonce[:])
	token := rand.Text() + rand.Text() // ≥ 256 random bits
	targetID, err := tab.TargetID(ctx)
	if err != nil {
		return fmt.Errorf("target id through Playwright: %w", err)
	}
	if !validTargetID(targetID) {
		return fmt.Errorf("Target.getTargetInfo gave target id %q", targetID)
	}
	res, err := tab.CDP(ctx, "Page.createIsolatedWorld", map[string]any{"frameId": targetID, "worldName": world})
	if err != nil {
		return fmt.Errorf("place the challenge through Playwright: %w", err)
	}
	cid, _ := res.(map[string]any)["executionContextId"].(float64)
	if cid == 0 {
		return fmt.Errorf("place the challenge through Playwright: no context in %v", res)
	}
	key, _ := json.Marshal(token)
	res, err = tab.CDP(ctx, "Runtime.evaluate", map[string]any{"contextId": cid, "expression": "globalThis.token = " + string(key) + ", true", "returnByValue": true})
	if r, _ := res.(map[string]any)["result"].(map[string]any); err != nil || r["value"] != true {
		return fmt.Errorf("place the challenge through Playwright: %v %w", res, err)
	}
	base := "127.0.0.1:" + strconv.Itoa(port)
	if err := listsTarget(ctx, base, targetID); err != nil {
		return err
	}
	got, err := consumeToken(ctx, "ws://"+base+"/devtools/page/"+targetID, int(cid))
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		return errors.New("the internal endpoint's page does not hold the challenge: it is not this generation's browser")
	}
	return nil
}

// proofTab is the generation's first tab (a persistent context opens with
// one), or a new tab if it has none.
func proofTab(ctx context.Context, g *Generation) (*page.Tab, error) {
	if tabs := g.Tabs(); len(tabs) > 0 {
		return tabs[0], nil
	}
	t, err := g.CurrentTab(ctx)
	if err != nil {
		return nil, fmt.Errorf("open a page for the challenge: %w", err)
	}
	return t, nil
}

// validTargetID accepts DevTools target ids (hex or UUID-like tokens).
func validTargetID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

// listsTarget checks that the endpoint's /json/list has the page target.
func listsTarget(ctx context.Context, base, targetID string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+base+"/json/list", nil)
	if err != nil {
		return err
	}
	resp, err := loopbackClient.Do(req)
	if err != nil {
		return fmt.Errorf("list targets on the internal endpoint: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("list targets on the internal endpoint: status %d", resp.StatusCode)
	}
	var targets []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&targets); err != nil {
		return fmt.Errorf("list targets on the internal endpoint: %w", err)
	}
	for _, t := range targets {
		if t.ID == targetID && t.Type == "page" {
			return nil
		}
	}
	return &notListedError{targetID}
}

// notListedError means the internal endpoint answered without the page:
// another browser's endpoint.
type notListedError struct{ id string }

func (e *notListedError) Error() string {
	return "the internal endpoint does not list page " + e.id
}

// consumeToken reads and deletes globalThis.token in the execution context
// cid of the page at wsURL with Runtime.evaluate, returning it ("" if
// absent or not a string).
func consumeToken(ctx context.Context, wsURL string, cid int) (string, error) {
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: loopbackClient})
	if err != nil {
		return "", fmt.Errorf("connect to the page on the internal endpoint: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	expr := `(() => { const v = globalThis.token; delete globalThis.token; return typeof v === "string" ? v : ""; })()`
	msg, _ := json.Marshal(map[string]any{
		"id": 1, "method": "Runtime.evaluate",
		"params": map[string]any{"expression": expr, "contextId": cid, "returnByValue": true},
	})
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return "", fmt.Errorf("Runtime.evaluate on the internal endpoint: %w", err)
	}
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return "", fmt.Errorf("Runtime.evaluate on the internal endpoint: %w", err)
		}
		var reply struct {
			ID     int `json:"id"`
			Result struct {
				Result struct {
					Value any `json:"value"`
				} `json:"result"`
				ExceptionDetails json.RawMessage `json:"exceptionDetails"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &reply) != nil || reply.ID != 1 {
			continue // an event
		}
		if reply.Error != nil {
			return "", fmt.Errorf("Runtime.evaluate on the internal endpoint: %s", reply.Error.Message)
		}
		if len(reply.Result.ExceptionDetails) > 0 {
			return "", errors.New("Runtime.evaluate on the internal endpoint threw")
		}
		v, _ := reply.Result.Result.Value.(string)
		_ = conn.Close(websocket.StatusNormalClosure, "")
		return v, nil
	}
}
