package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// JSON-RPC error codes of the HTTP layer beyond the standard ones.
const (
	codeServerBusy      = -32000 // no session slot free, or stopping
	codeSessionNotFound = -32001 // unknown, ended or foreign session
	codeUnauthorized    = -32002 // missing or wrong bearer token
	codeForbidden       = -32003 // Host or Origin not allowed
	codeStreamConflict  = -32004 // a second GET stream for one session
)

// policy holds the HTTP security rules: which Host and Origin values are
// accepted, the bearer tokens, and the body cap.
type policy struct {
	endpoint string
	tls      bool
	// hosts holds accepted "name|port" pairs; port "*" accepts any port.
	hosts     map[string]bool
	anyHost   bool
	origins   map[string]bool
	anyOrigin bool
	cors      bool
	// tokens are SHA-256 digests of the accepted tokens; principals[i] names
	// tokens[i].
	tokens     [][sha256.Size]byte
	principals []string
	maxBody    int64
}

// anonymous is the principal of every request when no token is configured.
const anonymous = "anonymous"

func newPolicy(cfg config.HTTP, port int, tlsOn bool) *policy {
	p := &policy{endpoint: cfg.Endpoint, tls: tlsOn, hosts: map[string]bool{}, origins: map[string]bool{}, maxBody: cfg.MaxBodyBytes}
	if p.maxBody <= 0 {
		p.maxBody = 4 << 20
	}
	ps := strconv.Itoa(port)
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		p.hosts[name+"|"+ps] = true
	}
	if h := strings.ToLower(strings.Trim(cfg.Host, "[]")); h != "" && !isWildcard(h) {
		p.hosts[h+"|"+ps] = true
	}
	for _, h := range cfg.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			p.anyHost = true
			continue
		}
		if name, port, err := net.SplitHostPort(h); err == nil {
			p.hosts[strings.Trim(name, "[]")+"|"+port] = true
		} else if h != "" {
			p.hosts[strings.Trim(h, "[]")+"|*"] = true
		}
	}
	for _, o := range cfg.AllowedOrigins {
		o = strings.TrimSpace(o)
		if o == "*" {
			p.anyOrigin = true
		} else if n, ok := normalizeOrigin(o); ok {
			p.origins[n] = true
		}
	}
	p.cors = len(cfg.AllowedOrigins) > 0
	for _, tok := range cfg.Tokens() {
		p.tokens = append(p.tokens, sha256.Sum256([]byte(tok)))
		p.principals = append(p.principals, PrincipalName(tok))
	}
	return p
}

// PrincipalName is the name under which a bearer token's sessions are
// bound, logged and given files: "t-" and the first 12 hex digits of the
// token's SHA-256 digest. It does not depend on the order of the tokens, so
// it survives a restart with the tokens reordered, and it is safe as a
// directory name ([a-z0-9-]). Without tokens the principal is "anonymous".
// It reveals 48 bits of an unsalted hash: a low-entropy token could be
// guessed from it, so tokens should be random (openssl rand -hex 32).
func PrincipalName(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "t-" + hex.EncodeToString(sum[:6])
}

func isWildcard(h string) bool { return h == "0.0.0.0" || h == "::" }

func isLoopbackName(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// hostAllowed checks a Host header value (or an Origin's host) against the
// allowlist. defPort applies when it carries no port.
func (p *policy) hostAllowed(host, defPort string) bool {
	if p.anyHost {
		return true
	}
	host = strings.ToLower(host)
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, defPort
	}
	name = strings.Trim(name, "[]")
	if name == "" {
		return false
	}
	return p.hosts[name+"|"+port] || p.hosts[name+"|*"]
}

func (p *policy) defaultPort() string {
	if p.tls {
		return "443"
	}
	return "80"
}

// normalizeOrigin returns scheme://host[:port] in lower case, without a
// default port.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimRight(o, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if (u.Scheme == "http" && strings.HasSuffix(host, ":80")) || (u.Scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	return u.Scheme + "://" + host, true
}

// originAllowed accepts a request without Origin (not from a browser), an
// Origin listed in --allowed-origins-http, and the server's own origin (an
// Origin whose host:port is an accepted Host).
func (p *policy) originAllowed(origin string) bool {
	if origin == "" || p.anyOrigin {
		return true
	}
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false // includes "null"
	}
	if p.origins[n] {
		return true
	}
	scheme, host, _ := strings.Cut(n, "://")
	def := "80"
	if scheme == "https" {
		def = "443"
	}
	return p.hostAllowed(host, def)
}

// checkHostOrigin rejects, on every path and method, a request whose Host
// or Origin is not allowed (DNS rebinding and cross-site requests).
func (p *policy) checkHostOrigin(next http.Handler, log zerolog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.hostAllowed(r.Host, p.defaultPort()) {
			if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
				// Health checkers (kubelet, load balancers) send the pod
				// IP or their own name as Host: they get the status, and
				// never the details a rebound page could read.
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), foreignHostKey{}, true)))
				return
			}
			log.Warn().Str("host", r.Host).Str("method", r.Method).Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Msg("HTTP request refused: Host not allowed")
			writeRPCError(w, http.StatusForbidden, nil, codeForbidden, fmt.Sprintf("Forbidden: Host %q is not allowed (add it with --allowed-hosts)", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); !p.originAllowed(o) {
			log.Warn().Str("origin", o).Str("method", r.Method).Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Msg("HTTP request refused: Origin not allowed")
			writeRPCError(w, http.StatusForbidden, nil, codeForbidden, fmt.Sprintf("Forbidden: Origin %q is not allowed (add it with --allowed-origins-http)", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// principal authenticates r. With no token configured every request is
// "anonymous". The presented token is hashed and compared with every
// configured digest in constant time, so neither its length nor which token
// matched shows in the timing.
func (p *policy) principal(r *http.Request) (string, bool) {
	if len(p.tokens) == 0 {
		return anonymous, true
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	found := -1
	for i := range p.tokens {
		if subtle.ConstantTimeCompare(sum[:], p.tokens[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", false
	}
	return p.principals[found], true
}

// rpcMessage is the part of a JSON-RPC message the middleware looks at.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// protocolVersion returns the version a message declares in its _meta
// (2026-07-28 style), or "".
func (m rpcMessage) protocolVersion() string {
	var params struct {
		Meta *mcp.Meta `json:"_meta"`
	}
	if len(m.Params) == 0 || json.Unmarshal(m.Params, &params) != nil {
		return ""
	}
	return params.Meta.ProtocolVersion()
}

// endpoint wraps the mcp-go handler with the MCP endpoint's policy: method,
// auth, content type, body size, well-formed JSON, the session cap on
// initialize, and that a session exists and belongs to the caller.
func (t *httpTransport) endpoint(next http.Handler) http.Handler {
	p := t.policy
	log := t.s.log
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reject := func(status, code int, id json.RawMessage, msg string) {
			log.Debug().Int("status", status).Str("method", r.Method).Str("remote", r.RemoteAddr).Str("reason", msg).Msg("MCP request refused")
			writeRPCError(w, status, id, code, msg)
		}
		switch r.Method {
		case http.MethodPost, http.MethodGet, http.MethodDelete:
		case http.MethodOptions:
			if p.cors { // a CORS preflight carries no credentials
				next.ServeHTTP(w, r)
				return
			}
			fallthrough
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			reject(http.StatusMethodNotAllowed, mcp.INVALID_REQUEST, nil, fmt.Sprintf("method %s not allowed on the MCP endpoint (GET, POST, DELETE)", r.Method))
			return
		}
		principal, ok := p.principal(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cloakbrowser-mcp"`)
			reject(http.StatusUnauthorized, codeUnauthorized, nil, "Unauthorized: send Authorization: Bearer <token>")
			return
		}

		var msg rpcMessage
		modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				reject(http.StatusUnsupportedMediaType, mcp.INVALID_REQUEST, nil, fmt.Sprintf("Content-Type %q not supported: POST a JSON-RPC message as application/json", r.Header.Get("Content-Type")))
				return
			}
			body, status, err := readBody(w, r, p.maxBody)
			if err != nil {
				reject(status, mcp.INVALID_REQUEST, nil, err.Error())
				return
			}
			if !json.Valid(body) {
				reject(http.StatusBadRequest, mcp.PARSE_ERROR, nil, "Parse error: the body is not valid JSON")
				return
			}
			if err := json.Unmarshal(body, &msg); err != nil {
				what := "a JSON-RPC message is a JSON object with a string \"method\" (or a response with an \"id\")"
				if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
					what = "JSON-RPC batches are not supported: send one message per request"
				}
				reject(http.StatusBadRequest, mcp.INVALID_REQUEST, nil, "Invalid Request: "+what)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			modern = modern || mcp.IsModernProtocol(msg.protocolVersion())
		}
		if modern {
			// 2026-07-28 and later carry no session. mcp-go answers them
			// (POST: UnsupportedProtocolVersion listing HTTPProtocolVersions,
			// so clients fall back to initialize; GET/DELETE: 405); none
			// reaches a tool.
			next.ServeHTTP(w, r)
			return
		}
		sid := r.Header.Get(server.HeaderKeySessionID)
		if r.Method == http.MethodPost && msg.Method == string(mcp.MethodInitialize) {
			t.initialize(w, r, next, principal, msg)
			return
		}
		if sid == "" {
			reject(http.StatusBadRequest, mcp.INVALID_REQUEST, msg.ID, "Bad Request: Mcp-Session-Id header is required (send initialize first)")
			return
		}
		if _, err := t.reg.Lookup(sid, principal); err != nil {
			// Not here: another instance of the fleet may own it.
			if errors.Is(err, session.ErrNotFound) && t.forwardOrRefuse(w, r, sid, principal, msg.ID) {
				return
			}
			if errors.Is(err, session.ErrPrincipal) {
				log.Warn().Str("principal", principal).Str("method", r.Method).Str("remote", r.RemoteAddr).Msg("MCP request refused: session belongs to another principal")
			}
			reject(http.StatusNotFound, codeSessionNotFound, msg.ID, msgSessionNotFound)
			return
		}
		if r.Method == http.MethodGet {
			// One GET stream per session (as the TypeScript SDK): a second
			// one gets 409 and the first keeps receiving.
			release, ok := t.streams.acquire(sid)
			if !ok {
				reject(http.StatusConflict, codeStreamConflict, nil, "Conflict: this session already has an open GET stream; keep using it, or close it before opening another")
				return
			}
			defer release()
		}
		next.ServeHTTP(w, r)
		if r.Method == http.MethodDelete {
			// mcp-go terminated it through idManager; make sure the browser
			// is gone before the client hears back (Close waits).
			_ = t.reg.Close(sid)
		}
	})
}

// readBody reads at most max bytes of the body; a larger one is refused.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, int, error) {
	tooLarge := fmt.Errorf("Request body too large: the limit is %d bytes (--http-max-body-bytes)", max)
	if r.ContentLength > max {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, http.StatusRequestEntityTooLarge, tooLarge
		}
		var slow *slowBodyError
		if errors.As(err, &slow) {
			return nil, http.StatusRequestTimeout, slow
		}
		return nil, http.StatusBadRequest, fmt.Errorf("read request body: %w", err)
	}
	return body, 0, nil
}

// Request body bounds. A body must arrive within bodyReadTimeout and never
// pause longer than bodyIdleTimeout; past either it is cut and the
// connection closed. These are per request, not http.Server's ReadTimeout
// or WriteTimeout: the server-wide ones would also end SSE streams and
// long tool calls, whose bodies were read long before.
const (
	bodyReadTimeout = 60 * time.Second // 4 MiB at ~70 KB/s
	bodyIdleTimeout = 15 * time.Second
)

// boundBody bounds reading each request's body with read deadlines on its
// connection (http.ResponseController), extended while bytes arrive and
// cleared once the body has been read, so what follows (an SSE response)
// is not bounded. A body nobody reads (a refused request, which net/http
// then discards) stays bounded too. Zero total or idle means the default.
func boundBody(next http.Handler, total, idle time.Duration) http.Handler {
	if total <= 0 {
		total = bodyReadTimeout
	}
	if idle <= 0 {
		idle = bodyIdleTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &boundedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), total: total, idle: idle, end: time.Now().Add(total)}
		if b.extend() != nil {
			// Not supported by this connection (nothing of ours): serve
			// unbounded rather than not at all.
			next.ServeHTTP(w, r)
			return
		}
		r.Body = b
		next.ServeHTTP(w, r)
	})
}

// boundedBody is a request body whose connection read deadline moves on
// with every read that brings bytes, up to a fixed end.
type boundedBody struct {
	io.ReadCloser
	rc          *http.ResponseController
	total, idle time.Duration
	end         time.Time
	done        bool
}

func (b *boundedBody) extend() error {
	d := time.Now().Add(b.idle)
	if d.After(b.end) {
		d = b.end
	}
	return b.rc.SetReadDeadline(d)
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case b.done:
	case err == io.EOF:
		// Whole body read: nothing more to bound (net/http's own
		// background read now watches for the client going away).
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return n, &slowBodyError{total: b.total, idle: b.idle, cause: err}
		}
	case n > 0:
		_ = b.extend()
	}
	return n, err
}

// slowBodyError is a body cut by boundBody's deadlines.
type slowBodyError struct {
	total, idle time.Duration
	cause       error
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("Request body too slow: it must arrive within %s, with no pause over %s; send the whole body at once", e.total, e.idle)
}

func (e *slowBodyError) Unwrap() error { return e.cause }

// foreignHostKey marks a probe request whose Host is not allowed.
type foreignHostKey struct{}

// probeCaller is the principal a probe answers in detail, or false: a
// caller the MCP endpoint would accept, through an allowed Host.
func (p *policy) probeCaller(r *http.Request) (string, bool) {
	if foreign, _ := r.Context().Value(foreignHostKey{}).(bool); foreign {
		return "", false
	}
	return p.principal(r)
}

// msgSessionNotFound answers a request for a session this server (or, in a
// fleet, any instance) does not have.
const msgSessionNotFound = "Session not found: it was closed, expired or never existed; send initialize to start a new one"
