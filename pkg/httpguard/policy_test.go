package httpguard_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

const (
	tokenA = "tok-alpha-7f3c9e1d5b"
	tokenB = "tok-bravo-2a8e6c4f0d"
	port   = 8931
)

// TestPrincipalName: a token's principal is a path-safe name derived from
// its digest, never the token, and not from its place in the list.
func TestPrincipalName(t *testing.T) {
	re := regexp.MustCompile(`^t-[0-9a-f]{12}$`)
	a, b := httpguard.PrincipalName(tokenA), httpguard.PrincipalName(tokenB)
	for _, n := range []string{a, b} {
		if !re.MatchString(n) {
			t.Fatalf("principal %q is not t-<12 hex>", n)
		}
	}
	if a == b || a != httpguard.PrincipalName(tokenA) {
		t.Fatalf("names not distinct or not stable: %q %q", a, b)
	}
	if strings.Contains(tokenA, strings.TrimPrefix(a, "t-")) {
		t.Fatal("the name is part of the token")
	}
}

// rpcError decodes a JSON-RPC error answer; code 0 when there is none.
func rpcError(t *testing.T, body []byte) (int, string) {
	t.Helper()
	var v struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Error == nil {
		return 0, ""
	}
	if v.JSONRPC != "2.0" || string(v.ID) != "null" {
		t.Errorf("not a JSON-RPC error with id null: %s", body)
	}
	return v.Error.Code, v.Error.Message
}

// TestHostOrigin: the Host and Origin of every request, on every path,
// against the loopback names, --http-host, --allowed-hosts and
// --allowed-origins-http; probes on a foreign Host are served (marked).
func TestHostOrigin(t *testing.T) {
	base := config.HTTP{
		Endpoint:       "/mcp",
		Host:           "10.0.0.5",
		AllowedHosts:   []string{"mcp.example.com", "proxy.example.com:8443", "[fd00::1]:9000"},
		AllowedOrigins: []string{"https://app.example.com", "http://dev.example.com:3000/"},
	}
	cases := []struct {
		name   string
		cfg    *config.HTTP // nil: base
		tls    bool
		path   string
		host   string
		origin string
		want   int
		text   string // in the refusal
	}{
		{name: "localhost with port", host: "localhost:8931", want: 200},
		{name: "127.0.0.1 with port", host: "127.0.0.1:8931", want: 200},
		{name: "[::1] with port", host: "[::1]:8931", want: 200},
		{name: "host in any case", host: "LocalHost:8931", want: 200},
		{name: "--http-host with port", host: "10.0.0.5:8931", want: 200},
		{name: "--http-host other port", host: "10.0.0.5:80", want: 403},
		{name: "localhost without port", host: "localhost", want: 403},
		{name: "localhost without port on 80", cfg: &config.HTTP{}, host: "localhost", want: 403},
		{name: "localhost other port", host: "localhost:1", want: 403},
		{name: "allowed name any port", host: "mcp.example.com:1234", want: 200},
		{name: "allowed name no port", host: "mcp.example.com", want: 200},
		{name: "allowed name and port", host: "proxy.example.com:8443", want: 200},
		{name: "allowed name wrong port", host: "proxy.example.com:9999", want: 403, text: `Host "proxy.example.com:9999" is not allowed`},
		{name: "allowed IPv6 and port", host: "[fd00::1]:9000", want: 200},
		{name: "rebinding name", host: "evil.example:8931", want: 403, text: "--allowed-hosts"},
		{name: "empty host", host: "", want: 403},
		{name: "any host", cfg: &config.HTTP{AllowedHosts: []string{"*"}}, host: "evil.example", want: 200},
		{name: "wildcard bind is not a name", cfg: &config.HTTP{Host: "0.0.0.0"}, host: "0.0.0.0:8931", want: 403},
		{name: "foreign host on a probe", path: "/healthz", host: "10.1.2.3:8931", want: 200},
		{name: "foreign host on readyz", path: "/readyz", host: "kubelet", want: 200},
		{name: "foreign host on other paths", path: "/other", host: "evil.example", want: 403},
		{name: "no origin", host: "localhost:8931", want: 200},
		{name: "listed origin", host: "localhost:8931", origin: "https://app.example.com", want: 200},
		{name: "listed origin trailing slash", host: "localhost:8931", origin: "http://dev.example.com:3000", want: 200},
		{name: "listed origin wrong scheme", host: "localhost:8931", origin: "http://app.example.com", want: 403, text: `Origin "http://app.example.com" is not allowed`},
		{name: "own origin", host: "localhost:8931", origin: "http://localhost:8931", want: 200},
		{name: "origin of an allowed host", host: "localhost:8931", origin: "https://mcp.example.com", want: 200},
		{name: "origin default port https", host: "localhost:8931", origin: "https://proxy.example.com:443", want: 403},
		{name: "origin of another local port", host: "localhost:8931", origin: "http://localhost:6274", want: 403},
		{name: "foreign origin", host: "localhost:8931", origin: "https://evil.example", want: 403, text: "--allowed-origins-http"},
		{name: "origin null", host: "localhost:8931", origin: "null", want: 403},
		{name: "origin with a path", host: "localhost:8931", origin: "https://app.example.com/x", want: 403},
		{name: "origin with user info", host: "localhost:8931", origin: "https://u@app.example.com", want: 403},
		{name: "any origin", cfg: &config.HTTP{AllowedOrigins: []string{"*"}}, host: "localhost:8931", origin: "https://evil.example", want: 200},
		{name: "origin checked on probes", path: "/healthz", host: "localhost:8931", origin: "https://evil.example", want: 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			if tc.cfg != nil {
				cfg = *tc.cfg
			}
			p := httpguard.New(cfg, port, tc.tls)
			var served *http.Request
			h := p.HostOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served = r }), zerolog.Nop())
			path := tc.path
			if path == "" {
				path = "/mcp"
			}
			r := httptest.NewRequest(http.MethodPost, "http://x"+path, nil)
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
			if tc.want != 200 {
				code, msg := rpcError(t, w.Body.Bytes())
				if code != httpguard.CodeForbidden || !strings.Contains(msg, tc.text) {
					t.Fatalf("refusal %d %q, want %d with %q", code, msg, httpguard.CodeForbidden, tc.text)
				}
				if served != nil {
					t.Fatal("refused, yet served")
				}
				return
			}
			if served == nil {
				t.Fatal("allowed, yet not served")
			}
		})
	}
}

// TestPrincipal: the bearer token names the caller; without tokens
// everyone is anonymous.
func TestPrincipal(t *testing.T) {
	withTokens := config.HTTP{AuthToken: tokenA, AuthTokens: []string{tokenB}}
	cases := []struct {
		name   string
		cfg    config.HTTP
		header string // Authorization
		want   string
		ok     bool
	}{
		{"no tokens configured", config.HTTP{}, "", httpguard.Anonymous, true},
		{"no tokens configured, one sent", config.HTTP{}, "Bearer " + tokenA, httpguard.Anonymous, true},
		{"first token", withTokens, "Bearer " + tokenA, httpguard.PrincipalName(tokenA), true},
		{"second token", withTokens, "Bearer " + tokenB, httpguard.PrincipalName(tokenB), true},
		{"scheme in any case", withTokens, "bearer " + tokenA, httpguard.PrincipalName(tokenA), true},
		{"spaces around the token", withTokens, "Bearer  " + tokenA + " ", httpguard.PrincipalName(tokenA), true},
		{"no header", withTokens, "", "", false},
		{"wrong token", withTokens, "Bearer tok-alpha-7f3c9e1d5c", "", false},
		{"token prefix", withTokens, "Bearer tok-alpha", "", false},
		{"token and more", withTokens, "Bearer " + tokenA + "x", "", false},
		{"basic scheme", withTokens, "Basic " + tokenA, "", false},
		{"no scheme", withTokens, tokenA, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := httpguard.New(tc.cfg, port, false)
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			got, ok := p.Principal(r)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Principal = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if n := httpguard.New(withTokens, port, false).Tokens(); n != 2 {
		t.Errorf("Tokens() = %d, want 2", n)
	}
}

// TestProbeCaller: a probe answers in detail only to a caller the MCP
// endpoint would accept, through an allowed Host.
func TestProbeCaller(t *testing.T) {
	p := httpguard.New(config.HTTP{AuthToken: tokenA}, port, false)
	cases := []struct {
		name, host, token string
		ok                bool
	}{
		{"allowed host, token", "localhost:8931", tokenA, true},
		{"allowed host, no token", "localhost:8931", "", false},
		{"allowed host, wrong token", "localhost:8931", tokenB, false},
		{"foreign host, token", "10.1.2.3:8931", tokenA, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			var ok bool
			h := p.HostOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, ok = p.ProbeCaller(r) }), zerolog.Nop())
			r := httptest.NewRequest(http.MethodGet, "http://x/readyz", nil)
			r.Host = tc.host
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if ok != tc.ok || (ok && got != httpguard.PrincipalName(tokenA)) {
				t.Fatalf("ProbeCaller = %q, %v; want ok %v", got, ok, tc.ok)
			}
		})
	}
}

// TestAllowAdvertised: the host of --cluster-advertise-url is accepted as
// Host (fleet instances forward with it); a URL without a host is refused.
func TestAllowAdvertised(t *testing.T) {
	cases := []struct {
		name, url, host string
		err             bool
	}{
		{"name and port", "http://mcp-a:8931", "mcp-a:8931", false},
		{"IP and port", "http://10.0.0.7:9000/", "10.0.0.7:9000", false},
		{"http without port", "http://mcp-b", "mcp-b", false},
		{"https without port", "https://mcp-c", "mcp-c:443", false},
		{"IPv6", "http://[fd00::7]:8931", "[fd00::7]:8931", false},
		{"upper case", "http://MCP-D:8931", "mcp-d:8931", false},
		{"no scheme", "mcp-a:8931", "", true},
		{"not a URL", "http://%zz", "", true},
		{"empty", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := httpguard.New(config.HTTP{}, port, false)
			err := p.AllowAdvertised(tc.url)
			if (err != nil) != tc.err {
				t.Fatalf("AllowAdvertised(%q) = %v, want error %v", tc.url, err, tc.err)
			}
			if tc.err {
				if !strings.Contains(err.Error(), "--cluster-advertise-url") {
					t.Fatalf("error does not name the flag: %v", err)
				}
				return
			}
			h := p.HostOrigin(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), zerolog.Nop())
			r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
			r.Host = tc.host
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 {
				t.Fatalf("Host %q after AllowAdvertised(%q): %d", tc.host, tc.url, w.Code)
			}
		})
	}
}

// TestWarnRisks: an unauthenticated non-loopback address and a wildcard
// bind without --allowed-hosts are logged at start-up; loopback is quiet.
func TestWarnRisks(t *testing.T) {
	cases := []struct {
		name string
		cfg  config.HTTP
		want []string
	}{
		{"loopback without token", config.HTTP{Host: "127.0.0.1"}, nil},
		{"localhost without token", config.HTTP{Host: "localhost"}, nil},
		{"IPv6 loopback", config.HTTP{Host: "[::1]"}, nil},
		{"address without token", config.HTTP{Host: "10.0.0.5"}, []string{"WITHOUT authentication"}},
		{"address with token", config.HTTP{Host: "10.0.0.5", AuthToken: tokenA}, nil},
		{"wildcard without names", config.HTTP{Host: "0.0.0.0", AuthToken: tokenA}, []string{"--allowed-hosts"}},
		{"IPv6 wildcard without names or token", config.HTTP{Host: "::"}, []string{"WITHOUT authentication", "--allowed-hosts"}},
		{"wildcard with names", config.HTTP{Host: "0.0.0.0", AuthToken: tokenA, AllowedHosts: []string{"mcp.example.com"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			httpguard.New(tc.cfg, port, false).WarnRisks(zerolog.New(&buf))
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if buf.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tc.want) {
				t.Fatalf("%d warnings, want %d:\n%s", len(lines), len(tc.want), buf.String())
			}
			for i, w := range tc.want {
				if !strings.Contains(lines[i], w) || !strings.Contains(lines[i], `"level":"warn"`) {
					t.Errorf("warning %d lacks %q: %s", i, w, lines[i])
				}
			}
		})
	}
}
