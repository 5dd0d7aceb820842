package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

// readyzAs reads /readyz with a token ("" for none).
func readyzAs(t *testing.T, h *mcptest.HTTPServer, token string) (int, map[string]any) {
	t.Helper()
	r := doRaw(t, h, rawReq{method: "GET", path: "/readyz", token: token})
	var v map[string]any
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("readyz %d: %s", r.status, r.body)
	}
	return r.status, v
}

// TestHTTPPrincipalsStableAcrossTokenOrder: the same token is the same
// principal whatever the order of --http-auth-tokens, and it is what the
// log shows.
func TestHTTPPrincipalsStableAcrossTokenOrder(t *testing.T) {
	for _, order := range []string{tokenA + "," + tokenB, tokenB + "," + tokenA} {
		h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-auth-tokens", order)})
		openRaw(t, h, tokenA)
		_, v := readyzAs(t, h, tokenA)
		p, _ := v["principal"].(map[string]any)
		if p["name"] != httpguard.PrincipalName(tokenA) || p["sessions"] != 1.0 {
			t.Fatalf("tokens %s: readyz principal %v, want %s with 1 session", order, p, httpguard.PrincipalName(tokenA))
		}
		log := h.Stderr.String()
		if !strings.Contains(log, `"principal":"`+httpguard.PrincipalName(tokenA)+`"`) || strings.Contains(log, "token-1") {
			t.Fatalf("tokens %s: the log should name the session's principal %s:\n%s", order, httpguard.PrincipalName(tokenA), mcptest.Tail(log, 3000))
		}
	}
}

// TestHTTPSessionQuotaPerPrincipal: one token cannot take every slot. At its
// quota it gets 503 (another message than the global cap), another token
// still gets sessions, a flood admits exactly the quota, and a DELETE frees
// one of the token's slots.
func TestHTTPSessionQuotaPerPrincipal(t *testing.T) {
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs(
		"--http-auth-tokens", tokenA+","+tokenB,
		"--http-session-max", "6",
		"--http-session-max-per-principal", "2",
	)})
	a1 := openRaw(t, h, tokenA)
	openRaw(t, h, tokenA)

	r := doRaw(t, h, rawReq{token: tokenA, body: initBody})
	code, msg := r.rpcError()
	if r.status != http.StatusServiceUnavailable || code != -32000 || r.header.Get("Retry-After") == "" ||
		!strings.Contains(msg, "this token already has 2 sessions") || !strings.Contains(msg, "DELETE") {
		t.Fatalf("A over quota: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	// A real client over quota fails to initialize, and says why.
	if c, err := h.TryConnect(mcptest.ConnectOptions{Token: tokenA, Timeout: 10 * time.Second}); err == nil {
		_ = c.Close()
		t.Fatal("a third session for token A was admitted")
	}

	// Token B is not affected by A's quota; a flood of B admits exactly 2.
	b := h.Connect(t, mcptest.ConnectOptions{Token: tokenB})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := b.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatalf("token B's session: %v", err)
	}
	var (
		mu             sync.Mutex
		admitted, busy int
		wg             sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			r, err := tryDoRaw(h, rawReq{token: tokenB, body: initBody})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			switch _, msg := r.rpcError(); {
			case r.status == 200:
				admitted++
			case r.status == 503 && strings.Contains(msg, "this token already has 2 sessions"):
				busy++
			default:
				t.Errorf("B flood: %d %s", r.status, r.body)
			}
		})
	}
	wg.Wait()
	if admitted != 1 || busy != 7 {
		t.Fatalf("B flood: %d admitted, %d refused; want 1 and 7 (B already had one)", admitted, busy)
	}
	// Four of six slots are taken: the server is still ready for others.
	if code, v := readyzAs(t, h, tokenA); code != 200 || v["status"] != "ready" {
		t.Fatalf("readyz: %d %v", code, v)
	}

	if r := doRaw(t, h, rawReq{method: http.MethodDelete, token: tokenA, session: a1}); r.status != 200 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	openRaw(t, h, tokenA)
	if !strings.Contains(h.Stderr.String(), `"principal":"`+httpguard.PrincipalName(tokenA)+`"`) {
		t.Fatal("the refusal should log the principal")
	}
}

// TestHTTPSessionQuotaConfig: the quota comes from the flag, the env var and
// the config file, and a negative one is refused naming the flag.
func TestHTTPSessionQuotaConfig(t *testing.T) {
	file := t.TempDir() + "/c.json"
	if err := os.WriteFile(file, []byte(`{"http":{"sessionMax":9,"sessionMaxPerPrincipal":3}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		args         []string
		env          map[string]string
		max, perMax  int
		wantErrInMsg string
	}{
		{"default", nil, nil, 32, 0, ""},
		{"flag", []string{"--http-session-max-per-principal", "4"}, nil, 32, 4, ""},
		{"env", nil, map[string]string{"CLOAK_PLAYWRIGHT_MCP_HTTP_SESSION_MAX_PER_PRINCIPAL": "5"}, 32, 5, ""},
		{"file", []string{"--config", file}, nil, 9, 3, ""},
		{"flag beats file", []string{"--config", file, "--http-session-max-per-principal", "1"}, nil, 9, 1, ""},
		{"negative", []string{"--http-session-max-per-principal", "-1"}, nil, 0, 0, "--http-session-max-per-principal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := config.Load(tc.args, func(k string) string { return tc.env[k] }, nil)
			if err == nil {
				err = c.Validate()
			}
			if tc.wantErrInMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrInMsg) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErrInMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.HTTP.SessionMax != tc.max || c.HTTP.SessionMaxPerPrincipal != tc.perMax {
				t.Fatalf("max %d per principal %d, want %d and %d", c.HTTP.SessionMax, c.HTTP.SessionMaxPerPrincipal, tc.max, tc.perMax)
			}
		})
	}
}

// openStream opens a GET stream for a session and returns the response
// once its header is in; cancel ends it.
func openStream(t *testing.T, h *mcptest.HTTPServer, token, sid string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hdr, hcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer hcancel()
	type result struct {
		res *http.Response
		err error
	}
	got := make(chan result, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		got <- result{res, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			cancel()
			t.Fatalf("GET stream: %v", r.err)
		}
		t.Cleanup(func() { cancel(); r.res.Body.Close() })
		return r.res, cancel
	case <-hdr.Done():
		cancel()
		t.Fatal("GET stream: no response header within 10s")
		return nil, nil
	}
}

// TestHTTPOneGETStreamPerSession: a second concurrent GET stream on a
// session is refused with 409 while the first keeps receiving; another
// session's stream is not affected; once the first ends, a new one opens.
func TestHTTPOneGETStreamPerSession(t *testing.T) {
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})
	sid := openRaw(t, h, "")
	first, closeFirst := openStream(t, h, "", sid)
	if first.StatusCode != 200 || !strings.HasPrefix(first.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("first GET: %d %s", first.StatusCode, first.Header.Get("Content-Type"))
	}

	second, _ := openStream(t, h, "", sid)
	if second.StatusCode == 200 {
		t.Fatal("a second GET stream on one session was opened")
	}
	body, _ := io.ReadAll(io.LimitReader(second.Body, 4096))
	r := rawResp{status: second.StatusCode, body: string(body)}
	if code, msg := r.rpcError(); r.status != http.StatusConflict || code != -32004 || !strings.Contains(msg, "already has an open GET stream") {
		t.Fatalf("second GET on one session: %d %s", r.status, r.body)
	}

	other, _ := openStream(t, h, "", openRaw(t, h, ""))
	if other.StatusCode != 200 {
		t.Fatalf("another session's GET: %d", other.StatusCode)
	}

	// The first stream still delivers what the server sends.
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(first.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	h.Server.MCP().SendNotificationToAllClients("notifications/test", map[string]any{"marker": "still-here"})
	deadline := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the first stream ended")
			}
			got = strings.Contains(l, "still-here")
		case <-deadline:
			t.Fatal("the first stream received nothing within 10s")
		}
	}

	// Ending the first stream frees the session's slot (the server notices
	// the disconnect shortly after).
	closeFirst()
	for start := time.Now(); ; {
		again, cancel := openStream(t, h, "", sid)
		if again.StatusCode == 200 {
			break
		}
		cancel()
		if again.StatusCode != http.StatusConflict || time.Since(start) > 10*time.Second {
			t.Fatalf("GET after the first ended: %d", again.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// boundedServer serves HTTP with short body bounds.
func boundedServer(t *testing.T, args ...string) *mcptest.HTTPServer {
	t.Helper()
	cfg, _, err := config.Load(httpArgs(args...), func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTP.BodyIdleTimeout = time.Second
	cfg.HTTP.BodyReadTimeout = 3 * time.Second
	return mcptest.StartHTTP(t, mcptest.HTTPOptions{Config: &cfg})
}

// slowPost sends a POST's header and, from feed, its body; it returns what
// the server answered before closing the connection (or "" if it closed
// without an answer). It fails if the server neither answers nor closes
// within 20 s: the body was never cut.
func slowPost(t *testing.T, h *mcptest.HTTPServer, header string, feed func(w io.Writer) error) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.Base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, header); err != nil {
		t.Fatal(err)
	}
	fed := make(chan error, 1)
	go func() { fed <- feed(conn) }()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(conn) // until the server closes
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept a slow body's connection open for 20s (got %q)", got)
	}
	conn.Close()
	<-fed
	return string(got)
}

func postHeader(h *mcptest.HTTPServer, token string, length int) string {
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	return fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n",
		strings.TrimPrefix(h.Base, "http://"), auth, length)
}

// TestHTTPSlowBodies: a body that stalls, one that trickles forever, and a
// stalled body on a refused (unauthenticated) request are cut; a body that
// pauses briefly is served, and a tool call that outlasts the body bound
// after its body arrived is not cut. The server keeps serving throughout.
func TestHTTPSlowBodies(t *testing.T) {
	h := boundedServer(t, "--http-auth-token", tokenA)
	start := func(w io.Writer) error { _, err := io.WriteString(w, initBody[:20]); return err }

	t.Run("stalled body", func(t *testing.T) {
		got := slowPost(t, h, postHeader(h, tokenA, len(initBody)), func(w io.Writer) error {
			return start(w) // then nothing
		})
		if !strings.Contains(got, " 408 ") || !strings.Contains(got, "Request body too slow") {
			t.Fatalf("answer to a stalled body: %q", got)
		}
	})
	t.Run("trickling body", func(t *testing.T) {
		slowPost(t, h, postHeader(h, tokenA, 1<<20), func(w io.Writer) error {
			for {
				if _, err := w.Write([]byte(" ")); err != nil {
					return err
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	})
	t.Run("stalled body without a token", func(t *testing.T) {
		got := slowPost(t, h, postHeader(h, "", len(initBody)), start)
		if got != "" && !strings.Contains(got, " 401 ") {
			t.Fatalf("answer: %q", got)
		}
	})
	t.Run("short pauses are fine", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(h.Base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, postHeader(h, tokenA, len(initBody)))
		for _, part := range []string{initBody[:30], initBody[30:60], initBody[60:]} {
			time.Sleep(300 * time.Millisecond)
			if _, err := io.WriteString(conn, part); err != nil {
				t.Fatal(err)
			}
		}
		_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize sent with pauses: %d", res.StatusCode)
		}
	})
	if r := doRaw(t, h, rawReq{method: "GET", path: "/healthz"}); r.status != 200 {
		t.Fatalf("healthz after slow bodies: %d", r.status)
	}
	openRaw(t, h, tokenA)
}

// TestHTTPBodyBoundEndsWithTheBody: the body bound covers the body only; a
// tool call that takes longer than it (browser_wait_for 4 s, bound 3 s)
// completes.
func TestHTTPBodyBoundEndsWithTheBody(t *testing.T) {
	browserEnv(t)
	h := boundedServer(t)
	c := h.Connect(t, mcptest.ConnectOptions{})
	out, err := c.TryCall("browser_wait_for", map[string]any{"time": 4})
	if err != nil {
		t.Fatalf("a 4 s tool call under a 3 s body bound: %v", err)
	}
	if !strings.Contains(out, "Waited 4 seconds") {
		t.Fatalf("browser_wait_for answered:\n%s", out)
	}
}

// TestHTTPProbesWithAndWithoutToken: unauthenticated probes get the status
// alone (200 from healthz; 200 or 503-when-full from readyz); a valid token
// also gets the version and the session counts, a wrong one does not.
func TestHTTPProbesWithAndWithoutToken(t *testing.T) {
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs(
		"--http-auth-tokens", tokenA+","+tokenB, "--http-session-max", "1")})
	keys := func(v map[string]any) string {
		var ks []string
		for k := range v {
			ks = append(ks, k)
		}
		return fmt.Sprint(len(ks), ks)
	}
	probe := func(path, token string) (int, map[string]any) {
		r := doRaw(t, h, rawReq{method: "GET", path: path, token: token})
		var v map[string]any
		if err := json.Unmarshal([]byte(r.body), &v); err != nil {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		return r.status, v
	}
	for _, tc := range []struct {
		name, path, token string
		wantStatus        int
		wantStatusField   string
		detailed          bool
	}{
		{"healthz anonymous", "/healthz", "", 200, "ok", false},
		{"healthz wrong token", "/healthz", "tok-wrong", 200, "ok", false},
		{"healthz token", "/healthz", tokenA, 200, "ok", true},
		{"readyz anonymous", "/readyz", "", 200, "ready", false},
		{"readyz token", "/readyz", tokenB, 200, "ready", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, v := probe(tc.path, tc.token)
			if code != tc.wantStatus || v["status"] != tc.wantStatusField {
				t.Fatalf("%d %v", code, v)
			}
			_, hasVersion := v["version"]
			if hasVersion != tc.detailed || (!tc.detailed && len(v) != 1) {
				t.Fatalf("detailed=%v, want %v: %s", hasVersion, tc.detailed, keys(v))
			}
			if tc.path == "/readyz" && tc.detailed {
				if _, ok := v["sessions"]; !ok {
					t.Fatalf("no session counts for a token holder: %v", v)
				}
			}
		})
	}
	// A health checker sending the pod IP or its own name as Host gets the
	// status (not 403), and never the details, even with a token.
	for _, path := range []string{"/healthz", "/readyz"} {
		r := doRaw(t, h, rawReq{method: "GET", path: path, host: "10.1.2.3:8931", token: tokenA})
		var v map[string]any
		if r.status != 200 || json.Unmarshal([]byte(r.body), &v) != nil || len(v) != 1 {
			t.Fatalf("%s with a foreign Host: %d %s, want 200 with the status alone", path, r.status, r.body)
		}
	}
	if r := doRaw(t, h, rawReq{method: "POST", path: "/mcp", host: "10.1.2.3:8931", token: tokenA, body: `{}`}); r.status != 403 {
		t.Fatalf("the MCP endpoint with a foreign Host: %d, want 403", r.status)
	}
	openRaw(t, h, tokenA) // the only slot
	if code, v := probe("/readyz", ""); code != 503 || v["status"] != "full" || len(v) != 1 {
		t.Fatalf("readyz when full, anonymous: %d %v", code, v)
	}
	code, v := probe("/readyz", tokenB)
	s, _ := v["sessions"].(map[string]any)
	if code != 503 || v["status"] != "full" || s["active"] != 1.0 || s["available"] != 0.0 {
		t.Fatalf("readyz when full, with a token: %d %v", code, v)
	}
	if p, _ := v["principal"].(map[string]any); p["name"] != httpguard.PrincipalName(tokenB) || p["sessions"] != 0.0 {
		t.Fatalf("token B's own count: %v", p)
	}
}
