package httpguard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
)

// JSON-RPC error codes of the policy's refusals (the transport has its own
// in the same -32000 range).
const (
	CodeUnauthorized = -32002 // missing or wrong bearer token
	CodeForbidden    = -32003 // Host or Origin not allowed
)

// Policy holds the HTTP security rules: which Host and Origin values are
// accepted, the bearer tokens, and the body cap. It is built once per
// listener (New) and only read afterwards, except AllowAdvertised, which
// runs before serving.
type Policy struct {
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
	// host and namedHosts (len --allowed-hosts) are kept for WarnRisks.
	host       string
	namedHosts int
}

// Anonymous is the principal of every request when no token is configured.
const Anonymous = "anonymous"

// New builds the policy of cfg for a listener on port (TLS or not): the
// loopback names and cfg.Host with that port, --allowed-hosts,
// --allowed-origins-http, the bearer tokens and the body cap (default 4 MiB).
func New(cfg config.HTTP, port int, tlsOn bool) *Policy {
	p := &Policy{endpoint: cfg.Endpoint, tls: tlsOn, hosts: map[string]bool{}, origins: map[string]bool{}, maxBody: cfg.MaxBodyBytes,
		host: cfg.Host, namedHosts: len(cfg.AllowedHosts)}
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
func (p *Policy) hostAllowed(host, defPort string) bool {
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

func (p *Policy) defaultPort() string {
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
func (p *Policy) originAllowed(origin string) bool {
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

// HostOrigin rejects, on every path and method, a request whose Host
// or Origin is not allowed (DNS rebinding and cross-site requests).
func (p *Policy) HostOrigin(next http.Handler, log zerolog.Logger) http.Handler {
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
			WriteError(w, http.StatusForbidden, nil, CodeForbidden, fmt.Sprintf("Forbidden: Host %q is not allowed (add it with --allowed-hosts)", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); !p.originAllowed(o) {
			log.Warn().Str("origin", o).Str("method", r.Method).Str("path", r.URL.Path).Str("remote", r.RemoteAddr).Msg("HTTP request refused: Origin not allowed")
			WriteError(w, http.StatusForbidden, nil, CodeForbidden, fmt.Sprintf("Forbidden: Origin %q is not allowed (add it with --allowed-origins-http)", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Principal authenticates r. With no token configured every request is
// "anonymous". The presented token is hashed and compared with every
// configured digest in constant time, so neither its length nor which token
// matched shows in the timing.
func (p *Policy) Principal(r *http.Request) (string, bool) {
	if len(p.tokens) == 0 {
		return Anonymous, true
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

// foreignHostKey marks a probe request whose Host is not allowed.
type foreignHostKey struct{}

// ProbeCaller is the principal a probe answers in detail, or false: a
// caller the MCP endpoint would accept, through an allowed Host.
func (p *Policy) ProbeCaller(r *http.Request) (string, bool) {
	if foreign, _ := r.Context().Value(foreignHostKey{}).(bool); foreign {
		return "", false
	}
	return p.Principal(r)
}

// AllowAdvertised adds the host of the advertised URL to the accepted Host
// names.
func (p *Policy) AllowAdvertised(advertise string) error {
	u, err := url.Parse(advertise)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--cluster-advertise-url %q: want a base URL like http://10.0.0.5:8931", advertise)
	}
	name, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		name, port = u.Host, "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	p.hosts[strings.ToLower(strings.Trim(name, "[]"))+"|"+port] = true
	return nil
}

// CORS reports whether --allowed-origins-http is set: CORS preflights
// (OPTIONS, which carry no credentials) are then let through to mcp-go.
func (p *Policy) CORS() bool { return p.cors }

// Tokens is the number of accepted bearer tokens (0: no authentication).
func (p *Policy) Tokens() int { return len(p.tokens) }

// WarnRisks logs what an operator should know about the policy at start-up:
// a non-loopback address served without authentication, and a wildcard
// bind that only loopback Host headers can reach.
func (p *Policy) WarnRisks(log zerolog.Logger) {
	if len(p.tokens) == 0 && !isLoopbackName(p.host) {
		log.Warn().Str("host", p.host).Msg("serving a non-loopback address WITHOUT authentication")
	}
	if isWildcard(strings.Trim(p.host, "[]")) && p.namedHosts == 0 {
		log.Warn().Str("host", p.host).Msg("bound to every interface, but only loopback Host headers are accepted: list the names clients use with --allowed-hosts")
	}
}
