package cdpproxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// WebSocket forwarding uses github.com/coder/websocket on both ends rather
// than httputil.ReverseProxy's hijack-and-copy: a byte copy cannot enforce a
// per-message size limit (1009), cannot send a close code when a capability
// is revoked (1001), and cannot tell a protocol error (1002) from a lost
// browser (1011). Each message is forwarded whole, as one frame, because
// Chromium's DevTools server has long refused fragmented frames.

// Reasons sent in close frames. Fixed strings: nothing secret, nothing upstream.
const (
	reasonBrowserGone  = "browser gone"
	reasonProxyClosed  = "proxy closed"
	reasonTooBig       = "message too big"
	reasonUpstreamBig  = "browser message too big"
	reasonProtocol     = "protocol error"
	reasonUpstreamLost = "browser connection lost"
	reasonUpstreamBad  = "browser protocol error"
)

// side names one end of a relay.
type side int

const (
	sideClient side = iota
	sideUpstream
)

// wsPair is one relayed WebSocket: the CDP client and the browser.
type wsPair struct {
	client    *websocket.Conn
	clientRaw net.Conn // the hijacked connection under client
	upstream  *websocket.Conn
	upRaw     net.Conn // the dialed connection under upstream
}

// closeUpstream drops the browser side at once, so nothing more reaches it.
func (pr *wsPair) closeUpstream() {
	if pr.upRaw != nil {
		_ = pr.upRaw.Close()
		return
	}
	_ = pr.upstream.CloseNow()
}

// drop closes both connections without handshakes (shutdown timeout).
func (pr *wsPair) drop() {
	pr.closeUpstream()
	if pr.clientRaw != nil {
		_ = pr.clientRaw.Close()
	}
}

// connHook carries the dialed net.Conn out of the transport's DialContext.
type connHook struct {
	mu sync.Mutex
	c  net.Conn
}

type connHookKey struct{}

func (h *connHook) set(c net.Conn) {
	h.mu.Lock()
	h.c = c
	h.mu.Unlock()
}

func (h *connHook) get() net.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

// hijackRecorder keeps the connection websocket.Accept hijacks.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		h.conn = c
	}
	return c, brw, err
}

// isWebSocketUpgrade checks the handshake headers, so a malformed upgrade
// gets this package's JSON error rather than the library's plain text.
func isWebSocketUpgrade(r *http.Request) bool {
	return r.ProtoAtLeast(1, 1) &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		headerHasToken(r.Header, "Upgrade", "websocket") &&
		r.Header.Get("Sec-WebSocket-Version") == "13" &&
		r.Header.Get("Sec-WebSocket-Key") != ""
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func (g *generation) addPair(pr *wsPair) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revoked {
		return false
	}
	g.pairs[pr] = struct{}{}
	return true
}

func (g *generation) removePair(pr *wsPair) {
	g.mu.Lock()
	delete(g.pairs, pr)
	g.mu.Unlock()
}

// serveWebSocket dials the browser first, so every refusal (limit, revoked,
// browser unreachable) is an HTTP status before the client's upgrade; then it
// accepts the client and relays until either side ends or the capability is
// revoked.
func (p *Proxy) serveWebSocket(w http.ResponseWriter, r *http.Request, g *generation, path string) {
	logPath := redactPath(r.URL.EscapedPath())
	if !isWebSocketUpgrade(r) {
		w.Header().Set("Sec-WebSocket-Version", "13")
		writeError(w, http.StatusBadRequest, codeBadRequest, "expected a WebSocket upgrade (version 13)")
		return
	}
	if !p.acquire(&p.ws, p.limits.MaxWebSockets) {
		p.logf("cdpproxy: port %d: refused WebSocket %s: %v", p.Port(), logPath,
			fmt.Errorf("%d open: %w", p.limits.MaxWebSockets, ErrLimit))
		writeError(w, http.StatusServiceUnavailable, codeLimit,
			fmt.Sprintf("too many CDP WebSockets (max %d); try again later", p.limits.MaxWebSockets))
		return
	}
	defer p.release(&p.ws)

	self := pageTarget(path)
	if self != "" {
		ok, err := p.reachable(g, self)
		switch {
		case err != nil:
			p.upstreamFailed(w, g, g.ctx, route{upstream: "/json/list"}, err)
			return
		case !ok:
			writeNotFound(w)
			return
		}
	}
	hook := &connHook{}
	dialCtx, cancel := context.WithTimeout(context.WithValue(g.ctx, connHookKey{}, hook), p.limits.Timeout)
	up, resp, err := websocket.Dial(dialCtx, "ws://"+g.upstream.Host+path, &websocket.DialOptions{
		HTTPClient: &http.Client{
			Transport:     p.transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		// No Origin and no client headers: the browser sees only the proxy.
	})
	dialErr := dialCtx.Err()
	cancel()
	if err != nil {
		switch {
		case g.ctx.Err() != nil:
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "CDP endpoint revoked: the browser is gone")
		case errors.Is(dialErr, context.DeadlineExceeded):
			p.logf("cdpproxy: port %d: WebSocket %s: browser handshake timed out after %v", p.Port(), logPath, p.limits.Timeout)
			writeError(w, http.StatusGatewayTimeout, codeGatewayTimeout, "the browser did not answer in time")
		case resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500:
			writeError(w, resp.StatusCode, codeUpstreamError, "the browser refused the WebSocket")
		default:
			p.logf("cdpproxy: port %d: WebSocket %s: dial browser: %v", p.Port(), logPath, err)
			writeError(w, http.StatusBadGateway, codeBadGateway, "the browser could not be reached")
		}
		return
	}
	up.SetReadLimit(p.limits.MaxMessageBytes)
	pr := &wsPair{upstream: up, upRaw: hook.get()}
	if !g.addPair(pr) {
		_ = up.CloseNow()
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "CDP endpoint revoked: the browser is gone")
		return
	}
	defer g.removePair(pr)

	hr := &hijackRecorder{ResponseWriter: w}
	// Origin was checked by the proxy's policy; the library's own check
	// (same host only) would refuse Config.AllowedOrigins.
	client, err := websocket.Accept(hr, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		_ = up.CloseNow()
		p.logf("cdpproxy: port %d: WebSocket %s: accept: %v", p.Port(), logPath, err)
		return // Accept has answered
	}
	client.SetReadLimit(p.limits.MaxMessageBytes)
	pr.client, pr.clientRaw = client, hr.conn

	p.mu.Lock()
	p.pairs[pr] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pairs, pr)
		p.mu.Unlock()
	}()

	in := newInspector(p.files, g.targets, func() error { return p.listTargets(g) }, self)
	in.logf = func(format string, args ...any) {
		p.logf("cdpproxy: port %d: WebSocket %s: "+format, append([]any{p.Port(), logPath}, args...)...)
	}
	why := p.relay(g, pr, in)
	p.logf("cdpproxy: port %d: WebSocket %s closed: %s", p.Port(), logPath, why)
}

// pumpResult is how one direction of a relay ended.
type pumpResult struct {
	from     side  // the side being read
	readErr  error // reading from `from` failed
	writeErr error // writing to the other side failed
}

// pump forwards whole messages from src to dst until one of them fails.
// With an inspector, a client message it refuses is answered on src with
// the CDP error instead of being forwarded, and a browser message is
// forwarded as the inspector has filtered it (or not at all).
func pump(dst, src *websocket.Conn, from side, in *inspector) pumpResult {
	ctx := context.Background() // ended by closing the connections, never by cancellation (that would skip the close frame)
	var buf bytes.Buffer
	for {
		typ, r, err := src.Reader(ctx)
		if err != nil {
			return pumpResult{from: from, readErr: err}
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return pumpResult{from: from, readErr: err}
		}
		msg := buf.Bytes()
		if in != nil {
			if from == sideUpstream {
				if msg = in.upstream(msg); msg == nil {
					continue
				}
			} else if reply := in.client(msg); reply != nil {
				if err := src.Write(ctx, websocket.MessageText, reply); err != nil {
					return pumpResult{from: sideUpstream, writeErr: err} // writing to the client failed
				}
				continue
			}
		}
		if err := dst.Write(ctx, typ, msg); err != nil {
			return pumpResult{from: from, writeErr: err}
		}
		if buf.Cap() > 1<<20 {
			buf = bytes.Buffer{} // do not keep a large message's buffer
		}
	}
}

// relay runs both directions and closes the pair by the first event: one
// direction ending, or the generation's revocation. It returns once both
// directions have stopped.
func (p *Proxy) relay(g *generation, pr *wsPair, in *inspector) string {
	results := make(chan pumpResult, 2)
	go func() { results <- pump(pr.upstream, pr.client, sideClient, in) }()
	go func() { results <- pump(pr.client, pr.upstream, sideUpstream, in) }()

	pending := 2
	var plan closePlan
	select {
	case res := <-results:
		pending--
		plan = planFor(res)
		if g.ctx.Err() != nil {
			// Revocation cancels the context before it drops the browser
			// side, so an error seen now may be its doing: report 1001.
			plan = planRevoked(context.Cause(g.ctx))
		}
	case <-g.ctx.Done():
		plan = planRevoked(context.Cause(g.ctx))
	}
	plan.execute(pr)
	for ; pending > 0; pending-- {
		<-results
	}
	return plan.why
}

// closePlan says how to close each side. A zero code means close at once,
// without a close handshake.
type closePlan struct {
	clientCode     websocket.StatusCode
	clientReason   string
	upstreamCode   websocket.StatusCode
	upstreamReason string
	why            string // for the log
}

func (c closePlan) execute(pr *wsPair) {
	if c.upstreamCode == 0 {
		pr.closeUpstream()
		_ = pr.upstream.CloseNow()
	} else {
		_ = pr.upstream.Close(c.upstreamCode, c.upstreamReason)
	}
	if c.clientCode == 0 {
		_ = pr.client.CloseNow()
	} else {
		_ = pr.client.Close(c.clientCode, c.clientReason)
	}
}

func planRevoked(cause error) closePlan {
	if errors.Is(cause, ErrClosed) {
		return closePlan{clientCode: websocket.StatusGoingAway, clientReason: reasonProxyClosed, why: "proxy closed"}
	}
	return closePlan{clientCode: websocket.StatusGoingAway, clientReason: reasonBrowserGone, why: "capability revoked"}
}

// planFor maps how a direction ended to the close codes of both sides:
// a peer's close is relayed; 1009 for an oversized message; 1002 for a
// client's protocol error; 1011 when the browser side fails.
func planFor(res pumpResult) closePlan {
	if res.writeErr != nil {
		if res.from == sideClient { // writing to the browser failed
			return closePlan{clientCode: websocket.StatusInternalError, clientReason: reasonUpstreamLost,
				why: "browser connection lost"}
		}
		return closePlan{why: "client connection lost"} // writing to the client failed
	}
	err := res.readErr
	code := websocket.CloseStatus(err)
	if res.from == sideClient {
		switch {
		case code != -1:
			var ce websocket.CloseError
			errors.As(err, &ce)
			return closePlan{upstreamCode: relayable(code), upstreamReason: truncateReason(ce.Reason),
				why: fmt.Sprintf("client closed with %d", int(code))}
		case errors.Is(err, websocket.ErrMessageTooBig):
			return closePlan{clientCode: websocket.StatusMessageTooBig, clientReason: reasonTooBig,
				why: "client message too big"}
		case isAbrupt(err):
			return closePlan{why: "client connection lost"}
		default:
			return closePlan{clientCode: websocket.StatusProtocolError, clientReason: reasonProtocol,
				why: "client protocol error"}
		}
	}
	switch {
	case code != -1:
		var ce websocket.CloseError
		errors.As(err, &ce)
		return closePlan{clientCode: relayable(code), clientReason: truncateReason(ce.Reason),
			why: fmt.Sprintf("browser closed with %d", int(code))}
	case errors.Is(err, websocket.ErrMessageTooBig):
		return closePlan{clientCode: websocket.StatusMessageTooBig, clientReason: reasonUpstreamBig,
			why: "browser message too big"}
	case isAbrupt(err):
		return closePlan{clientCode: websocket.StatusInternalError, clientReason: reasonUpstreamLost,
			why: "browser connection lost"}
	default:
		return closePlan{clientCode: websocket.StatusInternalError, clientReason: reasonUpstreamBad,
			why: "browser protocol error"}
	}
}

// relayable turns a received close code into one that may be sent.
func relayable(code websocket.StatusCode) websocket.StatusCode {
	switch {
	case code == websocket.StatusNoStatusRcvd:
		return websocket.StatusNormalClosure
	case code >= 1000 && code <= 1014 && code != 1004 && code != 1005 && code != 1006, code >= 3000 && code <= 4999:
		return code
	}
	return websocket.StatusNormalClosure
}

// truncateReason keeps a relayed reason within a close frame (123 bytes),
// as valid UTF-8.
func truncateReason(s string) string {
	const max = 123
	s = strings.ToValidUTF8(s, "")
	for len(s) > max {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// isAbrupt reports a connection that ended without a close frame.
func isAbrupt(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &opErr)
}

// dialUpstream dials the browser's loopback endpoint. It records the
// connection for WebSocket dials (see connHook) so a relay can be dropped
// without waiting on a close handshake.
func dialUpstream(timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			if hook, ok := ctx.Value(connHookKey{}).(*connHook); ok {
				hook.set(c)
			}
		}
		return c, err
	}
}
