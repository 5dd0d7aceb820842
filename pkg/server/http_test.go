package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

// Distinctive tokens, so a leak into the logs is easy to spot.
const (
	tokenA = "tok-alpha-7f3c9e1d5b"
	tokenB = "tok-bravo-2a8e6c4f0d"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawReq is one HTTP request against a test server; zero fields get
// defaults that make a valid request (POST, JSON, loopback Host).
type rawReq struct {
	method, path, host, origin, token, ctype, session, body string
	header                                                  map[string]string
}

type rawResp struct {
	status int
	header http.Header
	body   string
}

func (r rawResp) rpcError() (code int, msg string) {
	var v struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(r.body), &v)
	return v.Error.Code, v.Error.Message
}

var rawClient = &http.Client{Timeout: 30 * time.Second}

func doRaw(t *testing.T, h *mcptest.HTTPServer, q rawReq) rawResp {
	t.Helper()
	r, err := tryDoRaw(h, q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryDoRaw is doRaw returning its error: it never fails the test, so it may
// run on any goroutine.
func tryDoRaw(h *mcptest.HTTPServer, q rawReq) (rawResp, error) {
	if q.method == "" {
		q.method = http.MethodPost
	}
	if q.path == "" {
		q.path = "/mcp"
	}
	if q.ctype == "" && q.method == http.MethodPost {
		q.ctype = "application/json"
	}
	req, err := http.NewRequest(q.method, h.Base+q.path, strings.NewReader(q.body))
	if err != nil {
		return rawResp{}, err
	}
	if q.host != "" {
		req.Host = q.host
	}
	if q.ctype != "-" {
		req.Header.Set("Content-Type", q.ctype)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if q.origin != "" {
		req.Header.Set("Origin", q.origin)
	}
	if q.token != "" {
		req.Header.Set("Authorization", "Bearer "+q.token)
	}
	if q.session != "" {
		req.Header.Set("Mcp-Session-Id", q.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for k, v := range q.header {
		req.Header.Set(k, v)
	}
	res, err := rawClient.Do(req)
	if err != nil {
		return rawResp{}, fmt.Errorf("%s %s: %w", q.method, q.path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return rawResp{status: res.StatusCode, header: res.Header, body: string(b)}, nil
}

// openRaw initializes a session with raw requests and returns its ID.
func openRaw(t *testing.T, h *mcptest.HTTPServer, token string) string {
	t.Helper()
	r := doRaw(t, h, rawReq{token: token, body: initBody})
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q (session %q)", r.status, r.body, sid)
	}
	if r := doRaw(t, h, rawReq{token: token, session: sid, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	return sid
}

const toolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// httpArgs are the flags every HTTP test server gets.
func httpArgs(extra ...string) []string {
	return append([]string{"--no-download", "--log-level", "debug"}, extra...)
}

// TestHTTPPolicy checks each HTTP policy (Host, Origin, auth, method,
// content type, body, session) on the MCP endpoint and the probes.
func TestHTTPPolicy(t *testing.T) {
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs(
		"--http-auth-tokens", tokenA+","+tokenB,
		"--allowed-hosts", "mcp.example.com,proxy.example.com:8443",
		"--allowed-origins-http", "https://app.example.com",
		"--http-max-body-bytes", "65536",
		"--http-session-max", "8",
	)})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(h.Base, "http://"))
	sidA := openRaw(t, h, tokenA)
	ended := openRaw(t, h, tokenA)
	if r := doRaw(t, h, rawReq{method: http.MethodDelete, token: tokenA, session: ended}); r.status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 70000) + `"}}`
	modern := `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`

	cases := []struct {
		name     string
		req      rawReq
		want     int
		wantCode int    // JSON-RPC error code, if any
		wantText string // in the body
	}{
		// Host: loopback names with the served port, plus --allowed-hosts.
		{"host localhost:port", rawReq{host: "localhost:" + port, token: tokenA, session: sidA, body: toolsList}, 200, 0, "browser_navigate"},
		{"host 127.0.0.1:port", rawReq{host: "127.0.0.1:" + port, token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"host [::1]:port", rawReq{host: "[::1]:" + port, token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"host allowed name any port", rawReq{host: "mcp.example.com:1234", token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"host allowed name and port", rawReq{host: "proxy.example.com:8443", token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"host allowed name wrong port", rawReq{host: "proxy.example.com:9999", token: tokenA, session: sidA, body: toolsList}, 403, -32003, "Host"},
		{"host localhost without port", rawReq{host: "localhost", token: tokenA, session: sidA, body: toolsList}, 403, -32003, ""},
		{"host localhost other port", rawReq{host: "localhost:1", token: tokenA, session: sidA, body: toolsList}, 403, -32003, ""},
		{"host rebinding name", rawReq{host: "evil.example:" + port, token: tokenA, session: sidA, body: toolsList}, 403, -32003, "evil.example"},
		{"host checked on GET", rawReq{method: "GET", host: "evil.example", token: tokenA, session: sidA}, 403, -32003, ""},
		{"host checked on DELETE", rawReq{method: "DELETE", host: "evil.example", token: tokenA, session: sidA}, 403, -32003, ""},
		{"host checked on other paths", rawReq{method: "GET", path: "/other", host: "evil.example"}, 403, -32003, ""},
		{"host checked before auth", rawReq{host: "evil.example", body: initBody}, 403, -32003, ""},
		// Origin: absent, listed, or the server's own; anything else is 403.
		{"origin listed", rawReq{origin: "https://app.example.com", token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"origin same as server", rawReq{origin: "http://localhost:" + port, token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"origin allowed host", rawReq{origin: "https://mcp.example.com", token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"origin foreign", rawReq{origin: "https://evil.example", token: tokenA, session: sidA, body: toolsList}, 403, -32003, "Origin"},
		{"origin other local port", rawReq{origin: "http://localhost:6274", token: tokenA, session: sidA, body: toolsList}, 403, -32003, ""},
		{"origin null", rawReq{origin: "null", token: tokenA, session: sidA, body: toolsList}, 403, -32003, ""},
		{"origin listed but http", rawReq{origin: "http://app.example.com", token: tokenA, session: sidA, body: toolsList}, 403, -32003, ""},
		{"origin on GET", rawReq{method: "GET", origin: "https://evil.example", token: tokenA, session: sidA}, 403, -32003, ""},
		{"origin on DELETE", rawReq{method: "DELETE", origin: "https://evil.example", token: tokenA, session: sidA}, 403, -32003, ""},
		{"origin on initialize", rawReq{origin: "https://evil.example", token: tokenA, body: initBody}, 403, -32003, ""},
		// Auth.
		{"no token", rawReq{body: initBody}, 401, -32002, "Bearer"},
		{"wrong token", rawReq{token: "tok-alpha-7f3c9e1d5c", body: initBody}, 401, -32002, ""},
		{"token prefix", rawReq{token: "tok-alpha", body: initBody}, 401, -32002, ""},
		{"basic scheme", rawReq{header: map[string]string{"Authorization": "Basic " + tokenA}, body: initBody}, 401, -32002, ""},
		{"no token on GET", rawReq{method: "GET", session: sidA}, 401, -32002, ""},
		{"no token on DELETE", rawReq{method: "DELETE", session: sidA}, 401, -32002, ""},
		{"bearer scheme any case", rawReq{header: map[string]string{"Authorization": "bearer " + tokenA}, session: sidA, body: toolsList}, 200, 0, ""},
		{"probes need no token", rawReq{method: "GET", path: "/healthz"}, 200, 0, `"status":"ok"`},
		// Sessions: bound to their principal; unknown and ended ones are 404.
		{"other principal POST", rawReq{token: tokenB, session: sidA, body: toolsList}, 404, -32001, "Session not found"},
		{"other principal GET", rawReq{method: "GET", token: tokenB, session: sidA}, 404, -32001, ""},
		{"other principal DELETE", rawReq{method: "DELETE", token: tokenB, session: sidA}, 404, -32001, ""},
		{"unknown session", rawReq{token: tokenA, session: "mcp-session-NOTAREALSESSION0000000000000", body: toolsList}, 404, -32001, ""},
		{"unknown session GET", rawReq{method: "GET", token: tokenA, session: "mcp-session-NOTAREALSESSION0000000000000"}, 404, -32001, ""},
		{"ended session", rawReq{token: tokenA, session: ended, body: toolsList}, 404, -32001, ""},
		{"ended session DELETE", rawReq{method: "DELETE", token: tokenA, session: ended}, 404, -32001, ""},
		{"missing session", rawReq{token: tokenA, body: toolsList}, 400, -32600, "Mcp-Session-Id"},
		{"missing session GET", rawReq{method: "GET", token: tokenA}, 400, -32600, ""},
		// Methods and bodies.
		{"PUT", rawReq{method: "PUT", token: tokenA, session: sidA, body: toolsList}, 405, -32600, "not allowed"},
		{"PATCH", rawReq{method: "PATCH", token: tokenA, session: sidA, body: toolsList}, 405, -32600, ""},
		{"HEAD", rawReq{method: "HEAD", token: tokenA, session: sidA}, 405, 0, ""},
		{"wrong content type", rawReq{ctype: "text/plain", token: tokenA, session: sidA, body: toolsList}, 415, -32600, "application/json"},
		{"form content type", rawReq{ctype: "application/x-www-form-urlencoded", token: tokenA, body: initBody}, 415, -32600, ""},
		{"no content type", rawReq{ctype: "-", token: tokenA, session: sidA, body: toolsList}, 415, -32600, ""},
		{"json with charset", rawReq{ctype: "application/json; charset=utf-8", token: tokenA, session: sidA, body: toolsList}, 200, 0, ""},
		{"oversized body", rawReq{token: tokenA, session: sidA, body: big}, 413, -32600, "65536"},
		{"malformed json", rawReq{token: tokenA, session: sidA, body: `{"jsonrpc":"2.0","id":5,"method":`}, 400, -32700, "Parse error"},
		{"empty body", rawReq{token: tokenA, session: sidA, body: ``}, 400, -32700, ""},
		{"batch", rawReq{token: tokenA, session: sidA, body: `[` + toolsList + `]`}, 400, -32600, "batches"},
		{"not an object", rawReq{token: tokenA, session: sidA, body: `"tools/list"`}, 400, -32600, ""},
		{"unknown method", rawReq{token: tokenA, session: sidA, body: `{"jsonrpc":"2.0","id":6,"method":"no/such"}`}, 200, -32601, ""},
		{"unknown path", rawReq{method: "GET", path: "/sse", token: tokenA}, 404, -32600, "/mcp"},
		// 2026-07-28 (sessionless) is refused with the versions to fall back to.
		{"sessionless protocol", rawReq{token: tokenA, body: modern, header: map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}}, 400, mcp.UNSUPPORTED_PROTOCOL_VERSION, "2025-11-25"},
		{"sessionless GET", rawReq{method: "GET", token: tokenA, header: map[string]string{"Mcp-Protocol-Version": "2026-07-28"}}, 405, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := doRaw(t, h, tc.req)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if tc.wantCode != 0 {
				if code, _ := r.rpcError(); code != tc.wantCode {
					t.Fatalf("JSON-RPC error code %d, want %d: %s", code, tc.wantCode, r.body)
				}
			}
			if !strings.Contains(r.body, tc.wantText) {
				t.Fatalf("body lacks %q: %s", tc.wantText, r.body)
			}
			if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}

	t.Run("session survives foreign DELETE and serves its owner", func(t *testing.T) {
		if r := doRaw(t, h, rawReq{token: tokenA, session: sidA, body: toolsList}); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("CORS preflight for a listed origin", func(t *testing.T) {
		r := doRaw(t, h, rawReq{method: "OPTIONS", origin: "https://app.example.com", header: map[string]string{
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"}})
		if r.status/100 != 2 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Fatalf("preflight: %d %v", r.status, r.header)
		}
	})
	t.Run("no token in the logs", func(t *testing.T) {
		log := h.Stderr.String()
		if !strings.Contains(log, httpguard.PrincipalName(tokenA)) {
			t.Fatalf("the principal should be logged by name; log:\n%s", log)
		}
		for _, tok := range []string{tokenA, tokenB, "tok-alpha", "tok-bravo"} {
			if strings.Contains(log, tok) {
				t.Fatalf("token %q appears in the log", tok)
			}
		}
		if strings.Contains(log, sidA) {
			t.Fatal("a full session ID appears in the log")
		}
	})
}

// TestHTTPSessionlessClientFallsBack checks that mcp-go's default client,
// which tries 2026-07-28 first, ends up in a session of its own.
func TestHTTPSessionlessClientFallsBack(t *testing.T) {
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})
	c := h.Connect(t, mcptest.ConnectOptions{ProtocolVersion: mcptest.Negotiate})
	if c.Init.ProtocolVersion != mcp.ProtocolVersion20251125 || c.SessionID == "" {
		t.Fatalf("negotiated %q with session %q; want 2025-11-25 with a session", c.Init.ProtocolVersion, c.SessionID)
	}
	for _, v := range []string{mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326} {
		c := h.Connect(t, mcptest.ConnectOptions{ProtocolVersion: v})
		if c.Init.ProtocolVersion != v || c.SessionID == "" {
			t.Fatalf("pinned %s: got %q, session %q", v, c.Init.ProtocolVersion, c.SessionID)
		}
	}
	if st := h.Server.Sessions().Stats(); st.Active != 3 {
		t.Fatalf("stats %+v, want 3 active", st)
	}
}

type readyz struct {
	Status   string `json:"status"`
	Sessions struct {
		Active, Pending, Max, Available int
	} `json:"sessions"`
}

func getReady(t *testing.T, h *mcptest.HTTPServer) (int, readyz) {
	t.Helper()
	r := doRaw(t, h, rawReq{method: "GET", path: "/readyz"})
	var v readyz
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("readyz %d: %s", r.status, r.body)
	}
	return r.status, v
}

// TestHTTPSessionCap floods initialize past the cap: the extra ones get 503
// at once, the admitted sessions keep working, and a freed slot is reusable.
func TestHTTPSessionCap(t *testing.T) {
	const max, flood = 3, 24
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-session-max", fmt.Sprint(max))})
	if code, v := getReady(t, h); code != 200 || v.Status != "ready" || v.Sessions.Available != max || v.Sessions.Max != max {
		t.Fatalf("readyz before: %d %+v", code, v)
	}
	var (
		mu   sync.Mutex
		sids []string
		busy int
		wg   sync.WaitGroup
	)
	for range flood {
		wg.Go(func() {
			r, err := tryDoRaw(h, rawReq{body: initBody})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch r.status {
			case 200:
				sids = append(sids, r.header.Get("Mcp-Session-Id"))
			case 503:
				busy++
				if code, msg := r.rpcError(); code != -32000 || !strings.Contains(msg, "all 3 sessions are in use") || r.header.Get("Retry-After") == "" {
					t.Errorf("503 body: %s", r.body)
				}
			default:
				t.Errorf("initialize: %d %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	if len(sids) != max || busy != flood-max {
		t.Fatalf("%d admitted, %d refused; want %d and %d", len(sids), busy, max, flood-max)
	}
	code, v := getReady(t, h)
	if code != 503 || v.Status != "full" || v.Sessions.Active != max || v.Sessions.Available != 0 || v.Sessions.Pending != 0 {
		t.Fatalf("readyz when full: %d %+v", code, v)
	}
	for _, sid := range sids {
		if r := doRaw(t, h, rawReq{session: sid, body: toolsList}); r.status != 200 {
			t.Fatalf("admitted session refused: %d %s", r.status, r.body)
		}
	}
	if r := doRaw(t, h, rawReq{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Fatalf("healthz when full: %d", r.status)
	}
	if r := doRaw(t, h, rawReq{method: "DELETE", session: sids[0]}); r.status != 200 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if code, v := getReady(t, h); code != 200 || v.Sessions.Available != 1 {
		t.Fatalf("readyz after DELETE: %d %+v", code, v)
	}
	openRaw(t, h, "")
}

// TestHTTPSessionChurn opens and ends 200 sessions; afterwards nothing is
// left: no session, no metadata, no goroutines beyond the baseline.
func TestHTTPSessionChurn(t *testing.T) {
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--log-level", "warn")})
	reg := h.Server.Sessions()
	// The driver starts in the background with its own goroutines: let it
	// settle before taking the baseline.
	_, _ = h.Server.Driver().Get(t.Context())
	openRaw(t, h, "") // warm up connections
	rawClient.CloseIdleConnections()
	base := stableGoroutines()
	for i := range 200 {
		sid := openRaw(t, h, "")
		if r := doRaw(t, h, rawReq{session: sid, body: toolsList}); r.status != 200 {
			t.Fatalf("cycle %d: tools/list %d", i, r.status)
		}
		if r := doRaw(t, h, rawReq{method: "DELETE", session: sid}); r.status != 200 {
			t.Fatalf("cycle %d: DELETE %d", i, r.status)
		}
	}
	rawClient.CloseIdleConnections()
	if st := reg.Stats(); st.Active != 1 || st.Pending != 0 {
		t.Fatalf("stats after churn: %+v (want only the warm-up session)", st)
	}
	var n int
	for range 100 {
		if n = runtime.NumGoroutine(); n <= base+2 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("goroutines: %d after churn, baseline %d\n%s", n, base, buf[:runtime.Stack(buf, true)])
}

// stableGoroutines waits for the goroutine count to settle and returns it.
func stableGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

// TestHTTPS serves over TLS with a certificate made here.
func TestHTTPS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := testCert(t, dir)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-protocol", "https", "--https-cert", certFile, "--https-key", keyFile)})
	if !strings.HasPrefix(h.URL, "https://") {
		t.Fatalf("URL %s", h.URL)
	}
	h.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c := h.Connect(t, mcptest.ConnectOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	res, err := h.HTTPClient.Get(h.Base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("healthz over https: %d", res.StatusCode)
	}
}

func testCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
