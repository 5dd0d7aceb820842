package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

const clusterSecret = "fleet-test-secret-0123456789"

// fleetTTL is the heartbeat TTL the fleet tests run with.
const fleetTTL = 1500 * time.Millisecond

// startFleet starts n instances of the binary sharing rd.
func startFleet(t *testing.T, rd *mcptest.Redis, n int, extra ...string) []*mcptest.HTTPServer {
	t.Helper()
	env, _ := serverEnv(t)
	var out []*mcptest.HTTPServer
	for i := 0; i < n; i++ {
		args := httpArgs(append([]string{
			"--http-session-backend", "redis", "--redis-url", rd.URL(), "--cluster-secret", clusterSecret,
			"--cluster-heartbeat-ttl-ms", fmt.Sprint(fleetTTL.Milliseconds()),
			"--http-auth-tokens", tokenA + "," + tokenB, "--http-isolation", "context",
		}, extra...)...)
		out = append(out, mcptest.StartHTTPBinary(t, mcptest.Binary(t), mcptest.HTTPOptions{Args: args, Env: env}))
	}
	return out
}

// spread sends each request of one MCP client to a different instance:
// initialize to the first, GET streams to the second, DELETE to the last,
// every other POST to the next one in turn, as a load balancer without
// affinity would.
type spread struct {
	hosts []string // host:port
	mu    sync.Mutex
	n     int
	seen  map[string]int // host → requests sent there
}

func (s *spread) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	s.mu.Lock()
	host := s.hosts[0]
	switch {
	case r.Method == http.MethodGet:
		host = s.hosts[1%len(s.hosts)]
	case r.Method == http.MethodDelete:
		host = s.hosts[len(s.hosts)-1]
	case bytes.Contains(body, []byte(`"method":"initialize"`)):
	default:
		s.n++
		host = s.hosts[s.n%len(s.hosts)]
	}
	s.seen[host]++
	s.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = host, host
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func hostOf(t *testing.T, h *mcptest.HTTPServer) string {
	u, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// rawPost sends one JSON-RPC request to an instance as client code would,
// returning the status and body.
func rawPost(t *testing.T, h *mcptest.HTTPServer, token, sid, body string) (int, string) {
	t.Helper()
	resp, b := rawPostResp(t, h, token, sid, body)
	return resp.StatusCode, b
}

// rawPostResp is rawPost with the whole response (its body already read).
func rawPostResp(t *testing.T, h *mcptest.HTTPServer, token, sid, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("POST %s: %v", h.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const fleetInitBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func rawInit(t *testing.T, h *mcptest.HTTPServer, token string) (sid string, status int, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.URL, strings.NewReader(fleetInitBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("initialize on %s: %v", h.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode, string(b)
}

// TestFleetAnyInstanceServesAnySession: a client whose requests land on a
// different instance each time (initialize on A, tools on B and C, the GET
// stream on B, DELETE on C) completes navigate → snapshot → click with the
// same answers a single instance gives.
func TestFleetAnyInstanceServesAnySession(t *testing.T) {
	browserEnv(t)
	rd := mcptest.StartRedis(t)
	inst := startFleet(t, rd, 3)
	page := pages(t).URL + "/lab.html"

	run := func(c *mcptest.HTTPClient) []string {
		nav := c.MustCall(t, "browser_navigate", map[string]any{"url": page})
		snap := c.MustCall(t, "browser_snapshot", nil)
		ref := refFor(t, snap, `button "Press me"`)
		click := c.MustCall(t, "browser_click", map[string]any{"element": "Press me", "ref": ref})
		after := c.MustCall(t, "browser_evaluate", map[string]any{"function": "() => document.getElementById('out').textContent"})
		return []string{nav, snap, click, after}
	}
	single := run(inst[0].Connect(t, mcptest.ConnectOptions{Token: tokenA}))

	sp := &spread{hosts: []string{hostOf(t, inst[0]), hostOf(t, inst[1]), hostOf(t, inst[2])}, seen: map[string]int{}}
	lb := &mcptest.HTTPServer{URL: inst[0].URL, Stderr: inst[0].Stderr, HTTPClient: &http.Client{Transport: sp}}
	c, err := lb.TryConnect(mcptest.ConnectOptions{Token: tokenA})
	if err != nil {
		t.Fatal(err)
	}
	spread := run(c)
	for i := range single {
		if norm(single[i]) != norm(spread[i]) {
			t.Fatalf("answer %d differs through the fleet:\nsingle:\n%s\nspread:\n%s", i, single[i], spread[i])
		}
	}
	if !strings.Contains(spread[3], "Pressed 1") {
		t.Fatalf("the click did not reach the page: %s", spread[3])
	}

	// The GET stream through a forwarding instance (B; the session is A's).
	req, _ := http.NewRequest(http.MethodGet, inst[1].URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Mcp-Session-Id", c.SessionID)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("GET stream through B: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET stream through B: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	cancel()
	resp.Body.Close()

	// Another principal gets 404 from every instance, never a forward.
	for _, h := range inst {
		if st, body := rawPost(t, h, tokenB, c.SessionID, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); st != http.StatusNotFound {
			t.Fatalf("token B on %s for A's session: %d %s", h.URL, st, body)
		}
	}
	// A forged forwarding header does not get past the owner's checks.
	req, _ = http.NewRequest(http.MethodPost, inst[1].URL, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Mcp-Session-Id", c.SessionID)
	req.Header.Set("X-Cloakbrowser-Cluster", "guess")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged cluster header: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	if err := c.Close(); err != nil { // DELETE on C
		t.Fatalf("DELETE through C: %v", err)
	}
	for _, h := range inst {
		if st, _ := rawPost(t, h, tokenA, c.SessionID, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); st != http.StatusNotFound {
			t.Fatalf("after DELETE, %s answers %d for the session", h.URL, st)
		}
	}
	if got := rd.Do("EXISTS", "cloakbrowser-mcp:sess:"+c.SessionID); got != ":0" {
		t.Fatalf("Redis still holds the deleted session: %s", got)
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for _, h := range sp.hosts {
		if sp.seen[h] == 0 {
			t.Fatalf("no request went to %s: %v", h, sp.seen)
		}
	}
}

// norm drops what legitimately differs between two runs of the same task
// (timings).
func norm(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, " ms") || strings.Contains(l, "ms)") || strings.HasPrefix(l, "- Console:") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestFleetOwnerKilled: SIGKILL the owner mid-session; another instance
// answers 404 once its heartbeat expires, Redis forgets the session, and a
// new session starts fine.
func TestFleetOwnerKilled(t *testing.T) {
	browserEnv(t)
	rd := mcptest.StartRedis(t)
	inst := startFleet(t, rd, 2)
	sid, st, body := rawInit(t, inst[0], tokenA)
	if st != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d %s", st, body)
	}
	if st, body := rawPost(t, inst[1], tokenA, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); st != http.StatusOK {
		t.Fatalf("tools/list through B while A lives: %d %s", st, mcptest.Tail(body, 300))
	}
	if err := syscall.Kill(inst[0].Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var last int
	for {
		st, body := rawPost(t, inst[1], tokenA, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		last = st
		if st == http.StatusNotFound {
			break
		}
		if st != http.StatusServiceUnavailable {
			t.Fatalf("while the dead owner's heartbeat lasts, want 503 (owner unreachable), got %d %s", st, body)
		}
		if time.Since(killed) > 20*fleetTTL {
			t.Fatalf("still %d long after the owner died", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("404 after %v (heartbeat TTL %v)", time.Since(killed).Round(time.Millisecond), fleetTTL)
	if got := rd.Do("EXISTS", "cloakbrowser-mcp:sess:"+sid); got != ":0" {
		t.Fatalf("Redis still holds the dead owner's session: %s", got)
	}
	c := inst[1].Connect(t, mcptest.ConnectOptions{Token: tokenA})
	c.MustCall(t, "browser_navigate", map[string]any{"url": pages(t).URL + "/lab.html"})
}

// TestFleetRedisDown: with Redis gone, local sessions keep working, new
// ones get a clear 503; when Redis returns, new sessions work again without
// restarting any instance. A graceful stop deletes an instance's records.
func TestFleetRedisDown(t *testing.T) {
	browserEnv(t)
	rd := mcptest.StartRedis(t)
	inst := startFleet(t, rd, 2)
	c := inst[0].Connect(t, mcptest.ConnectOptions{Token: tokenA})
	page := pages(t).URL + "/lab.html"
	c.MustCall(t, "browser_navigate", map[string]any{"url": page})

	rd.Stop()
	if out := c.MustCall(t, "browser_snapshot", nil); !strings.Contains(out, "Press me") {
		t.Fatalf("local session with Redis down:\n%s", out)
	}
	_, st, body := rawInit(t, inst[1], tokenA)
	if st != http.StatusServiceUnavailable || !strings.Contains(body, "Redis") {
		t.Fatalf("new session with Redis down: want 503 naming Redis, got %d %s", st, body)
	}
	if strings.Contains(body, "max-per-principal") {
		t.Fatalf("Redis down must not read as a quota refusal: %s", body)
	}
	// A forward (A's session through B) while Redis is down: a 503 naming
	// Redis that says when to retry.
	if resp, body := rawPostResp(t, inst[1], tokenA, c.SessionID, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); resp.StatusCode != http.StatusServiceUnavailable ||
		!strings.Contains(body, "Redis") || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("forward with Redis down: want 503 naming Redis with Retry-After, got %d (Retry-After %q) %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	rd.Start()
	testtier.EventuallyState(t, 20*fleetTTL, "a new session after Redis returned", func() (bool, string) {
		sid, st, body := rawInit(t, inst[1], tokenA)
		return st == http.StatusOK && sid != "", fmt.Sprintf("%d %s", st, body)
	})
	// A's session was published again after Redis came back (it restarted
	// empty): B can forward to it.
	testtier.EventuallyState(t, 20*fleetTTL, "A's session to be reachable through B after Redis returned", func() (bool, string) {
		st, body := rawPost(t, inst[1], tokenA, c.SessionID, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
		return st == http.StatusOK, fmt.Sprintf("%d %s", st, mcptest.Tail(body, 300))
	})

	// Graceful stop: A's records go at once, not after the TTL.
	sid := c.SessionID
	if err := inst[0].Stop(); err != nil {
		t.Fatal(err)
	}
	if got := rd.Do("EXISTS", "cloakbrowser-mcp:sess:"+sid); got != ":0" {
		t.Fatalf("Redis holds A's session after A stopped gracefully: %s", got)
	}
	if st, _ := rawPost(t, inst[1], tokenA, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`); st != http.StatusNotFound {
		t.Fatalf("B after A stopped: %d, want 404", st)
	}
}

// TestFleetQuota: token A at its fleet-wide quota gets 503 on every
// instance while token B still gets sessions.
func TestFleetQuota(t *testing.T) {
	rd := mcptest.StartRedis(t)
	inst := startFleet(t, rd, 2, "--http-session-max-per-principal", "1")
	if sid, st, body := rawInit(t, inst[0], tokenA); st != http.StatusOK || sid == "" {
		t.Fatalf("A's first session: %d %s", st, body)
	}
	for _, h := range inst {
		_, st, body := rawInit(t, h, tokenA)
		if st != http.StatusServiceUnavailable || !strings.Contains(body, "--http-session-max-per-principal") {
			t.Fatalf("A's second session on %s: want 503 naming the quota, got %d %s", h.URL, st, body)
		}
		var msg struct {
			Error struct{ Message string } `json:"error"`
		}
		if json.Unmarshal([]byte(body), &msg) != nil || !strings.Contains(msg.Error.Message, "DELETE") {
			t.Fatalf("the quota refusal should say what to do: %s", body)
		}
	}
	for _, h := range inst[1:] {
		if sid, st, body := rawInit(t, h, tokenB); st != http.StatusOK || sid == "" {
			t.Fatalf("token B on %s: %d %s", h.URL, st, body)
		}
	}
}

// TestFleetRefusesWithoutRedis: an instance whose Redis cannot be reached
// does not start.
func TestFleetRefusesWithoutRedis(t *testing.T) {
	rd := mcptest.StartRedis(t)
	rd.Stop()
	env, _ := serverEnv(t)
	out, code := runBinary(t, env, "--transport", "streamable-http", "--port", "0", "--no-download",
		"--http-session-backend", "redis", "--redis-url", rd.URL(), "--cluster-secret", clusterSecret)
	if code == 0 || !strings.Contains(out, "unreachable") || !strings.Contains(out, "--redis-url") {
		t.Fatalf("want a refusal naming Redis and --redis-url, got exit %d:\n%s", code, out)
	}
	out, code = runBinary(t, env, "--transport", "streamable-http", "--port", "0", "--no-download",
		"--http-session-backend", "redis", "--redis-url", rd.URL())
	if code == 0 || !strings.Contains(out, "--cluster-secret") {
		t.Fatalf("want a refusal naming --cluster-secret, got exit %d:\n%s", code, out)
	}
	if strings.Contains(out, clusterSecret) {
		t.Fatal("the secret leaked into the output")
	}
}

// runBinary runs the server binary to completion (it is expected to refuse
// to start) and returns its combined output and exit code.
func runBinary(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcptest.Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}
