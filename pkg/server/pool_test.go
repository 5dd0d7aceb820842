package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// poolBrowser is the browser block of cloakbrowser_bridge_info: where the
// session's browser lives.
func poolBrowser(t *testing.T, c *mcptest.HTTPClient) (location, endpoint string) {
	t.Helper()
	text := c.MustCall(t, "cloakbrowser_bridge_info", nil)
	var v struct {
		Browser struct {
			Location *string `json:"location"`
			Endpoint string  `json:"endpoint"`
		} `json:"browser"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bridge_info: %v\n%s", err, mcptest.Tail(text, 600))
	}
	if v.Browser.Location == nil {
		return "", v.Browser.Endpoint
	}
	return *v.Browser.Location, v.Browser.Endpoint
}

// evalString runs a function in the session's page and returns its result
// line as the tool prints it.
func evalString(t *testing.T, c *mcptest.HTTPClient, fn string) string {
	t.Helper()
	return c.MustCall(t, "browser_evaluate", map[string]any{"function": fn})
}

// remotePages lists the URLs of the page targets a remote browser has.
func remotePages(t *testing.T, endpoint string) []string {
	t.Helper()
	resp, err := http.Get(endpoint + "/json/list")
	if err != nil {
		t.Fatalf("list the targets of %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ts []struct{ Type, URL string }
	if err := json.Unmarshal(b, &ts); err != nil {
		t.Fatalf("targets of %s: %v\n%s", endpoint, err, b)
	}
	var out []string
	for _, x := range ts {
		if x.Type == "page" {
			out = append(out, x.URL)
		}
	}
	return out
}

// TestPoolSpreadAndFailover: two HTTP sessions on a two-browser pool land on
// different browsers; SIGKILL one browser and only its session restarts —
// its next call attaches to the surviving browser and works there, in a
// context of its own — while the other session's page (URL, title, a value
// set in its JavaScript heap) is untouched.
func TestPoolSpreadAndFailover(t *testing.T) {
	browserEnv(t)
	env, _ := serverEnv(t)
	r1, r2 := mcptest.StartRemoteChromium(t), mcptest.StartRemoteChromium(t)
	byEndpoint := map[string]*mcptest.Remote{r1.Endpoint: r1, r2.Endpoint: r2}
	h := mcptest.StartHTTPBinary(t, mcptest.Binary(t), mcptest.HTTPOptions{Env: env, Args: httpArgs(
		"--http-auth-tokens", tokenA, "--browser-endpoint-pool", r1.Endpoint+","+r2.Endpoint, "--cdp-timeout", "5000")})
	base := pages(t).URL

	a := h.Connect(t, mcptest.ConnectOptions{Token: tokenA})
	b := h.Connect(t, mcptest.ConnectOptions{Token: tokenA})
	if loc, ep := poolBrowser(t, a); loc != "remote" || ep != "" {
		t.Fatalf("before its first browser call a pool session should be remote with no endpoint yet, got %q %q", loc, ep)
	}
	navigate(t, a, base+"/lab.html?session=a")
	navigate(t, b, base+"/forms.html?session=b")
	locA, epA := poolBrowser(t, a)
	locB, epB := poolBrowser(t, b)
	if locA != "remote" || locB != "remote" || byEndpoint[epA] == nil || byEndpoint[epB] == nil || epA == epB {
		t.Fatalf("want the two sessions on the two different pool browsers, got a=%s %s, b=%s %s (pool %s, %s)",
			locA, epA, locB, epB, r1.Endpoint, r2.Endpoint)
	}
	evalString(t, b, "() => { window.__mark = 'b-heap'; document.title = 'B kept'; return 1 }")
	if got := remotePages(t, epA); !slices.Contains(got, base+"/lab.html?session=a") || slices.Contains(got, base+"/forms.html?session=b") {
		t.Fatalf("browser %s should hold a's page only: %v", epA, got)
	}

	byEndpoint[epA].Kill()

	// a's next call restarts its browser on the survivor and works.
	// A call that races the loss (it starts before the driver noticed the
	// disconnect) fails once with a clear error; the call after it works.
	for try := 0; ; try++ {
		out, err := a.TryCall("browser_navigate", map[string]any{"url": base + "/tools.html?session=a2"})
		if err == nil {
			if !strings.Contains(out, "/tools.html?session=a2") {
				t.Fatalf("navigate after the failover:\n%s", out)
			}
			break
		}
		if try > 0 || !strings.Contains(err.Error(), "browser gone") && !strings.Contains(err.Error(), "The browser was closed or crashed during the call") {
			t.Fatalf("call %d after a's browser died: want success (or, for the first, a clear 'browser gone' or 'closed or crashed during the call'), got %v", try+1, err)
		}
		t.Logf("the call racing the browser loss: %v", mcptest.Tail(err.Error(), 200))
	}
	if loc, ep := poolBrowser(t, a); loc != "remote" || ep != epB {
		t.Fatalf("after its browser died, a should be on the survivor %s, got %s %s", epB, loc, ep)
	}
	snap := a.MustCall(t, "browser_snapshot", nil)
	if !strings.Contains(snap, "tools.html?session=a2") {
		t.Fatalf("a's snapshot after the failover is not its own page:\n%s", mcptest.Tail(snap, 800))
	}

	// b was untouched: same page, same heap, and a did not take its tab.
	if got := evalString(t, b, "() => [location.pathname + location.search, document.title, window.__mark].join(' | ')"); !strings.Contains(got, "/forms.html?session=b | B kept | b-heap") {
		t.Fatalf("b's page changed when a's browser died or a moved next to it:\n%s", got)
	}
	got := remotePages(t, epB)
	if !slices.Contains(got, base+"/forms.html?session=b") || !slices.Contains(got, base+"/tools.html?session=a2") {
		t.Fatalf("the survivor should hold both sessions' pages: %v", got)
	}
	if tabs := a.MustCall(t, "browser_tabs", map[string]any{"action": "list"}); strings.Contains(tabs, "forms.html") {
		t.Fatalf("a sees b's tab after moving to b's browser:\n%s", tabs)
	}
}

// TestPoolLoadFleetWide: the pool's least-loaded rule counts every
// instance's sessions (through Redis), so sessions started on A and on B
// spread over the pool instead of each instance filling its first browser.
func TestPoolLoadFleetWide(t *testing.T) {
	browserEnv(t)
	rd := mcptest.StartRedis(t)
	r1, r2 := mcptest.StartRemoteChromium(t), mcptest.StartRemoteChromium(t)
	inst := startFleet(t, rd, 2, "--browser-endpoint-pool", r1.Endpoint+","+r2.Endpoint)
	base := pages(t).URL

	a := inst[0].Connect(t, mcptest.ConnectOptions{Token: tokenA})
	navigate(t, a, base+"/lab.html")
	_, epA := poolBrowser(t, a)
	// A publishes its pool counts with its heartbeat (every TTL/3).
	testtier.EventuallyState(t, 10*fleetTTL, "A to publish its browser pool counts to Redis", func() (bool, string) {
		keys := rd.Do("KEYS", "cloakbrowser-mcp:inst-load:*")
		return keys == "*1", "KEYS inst-load:* = " + keys
	})
	b := inst[1].Connect(t, mcptest.ConnectOptions{Token: tokenB})
	navigate(t, b, base+"/forms.html")
	_, epB := poolBrowser(t, b)
	if epA == "" || epB == "" || epA == epB {
		t.Fatalf("sessions on A and B should spread over the pool (%s, %s): A's on %q, B's on %q", r1.Endpoint, r2.Endpoint, epA, epB)
	}
	// Through B (forwarded to A), A's session still reports its own browser.
	if st, body := rawPost(t, inst[1], tokenA, a.SessionID, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"cloakbrowser_bridge_info","arguments":{}}}`); st != http.StatusOK || !strings.Contains(body, epA) {
		t.Fatalf("bridge_info of A's session through B: %d %s", st, mcptest.Tail(body, 400))
	}
}

// TestFleetWildcardBindAdvertised: instances bound to every interface (as
// in a container) and reached by each other at --cluster-advertise-url (a
// name that is not loopback, as a service name or pod IP is) forward to
// each other: the owner accepts the advertised host a forwarded request
// carries, and still refuses other hosts.
func TestFleetWildcardBindAdvertised(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	rd := mcptest.StartRedis(t)
	env, _ := serverEnv(t)
	var inst []*mcptest.HTTPServer
	for i := 0; i < 2; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		h := mcptest.StartHTTPBinary(t, mcptest.Binary(t), mcptest.HTTPOptions{Env: env, Args: httpArgs(
			"--host", "0.0.0.0", "--port", fmt.Sprint(port),
			"--http-session-backend", "redis", "--redis-url", rd.URL(), "--cluster-secret", clusterSecret,
			"--cluster-advertise-url", fmt.Sprintf("http://127.0.0.%d:%d", i+2, port),
			"--http-auth-tokens", tokenA)})
		// The log names 0.0.0.0; clients use a loopback address.
		inst = append(inst, &mcptest.HTTPServer{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Stderr: h.Stderr, Pid: h.Pid})
	}
	sid, st, body := rawInit(t, inst[0], tokenA)
	if st != http.StatusOK || sid == "" {
		t.Fatalf("initialize on A: %d %s", st, body)
	}
	if st, body := rawPost(t, inst[1], tokenA, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); st != http.StatusOK || !strings.Contains(body, "browser_navigate") {
		t.Fatalf("tools/list through B, forwarded to A at its advertised host: %d %s", st, mcptest.Tail(body, 300))
	}
	// The advertised host is accepted; other names still are not.
	for host, want := range map[string]int{
		fmt.Sprintf("127.0.0.2:%s", strings.Split(strings.TrimPrefix(inst[0].URL, "http://127.0.0.1:"), "/")[0]): http.StatusOK,
		"evil.example:80": http.StatusForbidden,
	} {
		req, _ := http.NewRequest(http.MethodPost, inst[0].URL, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tokenA)
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("Host %s on A: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
