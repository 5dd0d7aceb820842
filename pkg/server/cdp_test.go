package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
)

// freePorts finds n consecutive TCP ports free on loopback right now and
// returns them as a --cdp-port-range value.
func freePorts(t *testing.T, n int) (string, int) {
	t.Helper()
	for range 100 {
		base := 20000 + rand.IntN(40000)
		ok := true
		for p := base; p < base+n && ok; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				ok = false
				continue
			}
			ln.Close()
		}
		if ok {
			if n == 1 {
				return strconv.Itoa(base), base
			}
			return fmt.Sprintf("%d-%d", base, base+n-1), base
		}
	}
	t.Fatal("no free port range")
	return "", 0
}

// cdpInfo is the cdp block of cloakbrowser_bridge_info.
type cdpInfo struct {
	Enabled           bool    `json:"enabled"`
	State             string  `json:"state"`
	Generation        int     `json:"generation"`
	BindHost          string  `json:"bindHost"`
	Port              int     `json:"port"`
	AdvertisedHost    *string `json:"advertisedHost"`
	DiscoveryURL      *string `json:"discoveryUrl"`
	ActiveConnections int     `json:"activeConnections"`
}

func bridgeCDP(t *testing.T, c *mcptest.Client) (cdpInfo, map[string]any) {
	t.Helper()
	text := c.MustCall(t, "cloakbrowser_bridge_info", nil)
	var v struct {
		CDP json.RawMessage `json:"cdp"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bridge_info: %v\n%s", err, text)
	}
	var info cdpInfo
	var raw map[string]any
	if json.Unmarshal(v.CDP, &info) != nil || json.Unmarshal(v.CDP, &raw) != nil {
		t.Fatalf("bridge_info cdp: %s", v.CDP)
	}
	return info, raw
}

func readyCDP(t *testing.T, c *mcptest.Client) cdpInfo {
	t.Helper()
	info, raw := bridgeCDP(t, c)
	if !info.Enabled || info.State != "ready" || info.DiscoveryURL == nil || info.BindHost != "127.0.0.1" || info.AdvertisedHost != nil {
		t.Fatalf("cdp block not ready: %v", raw)
	}
	return info
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// pageTarget finds the page target showing url through a discovery URL.
func pageTarget(t *testing.T, discoveryURL, url string) (id, wsURL string) {
	t.Helper()
	resp, err := http.Get(discoveryURL + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var targets []struct {
		ID, Type, URL string
		WS            string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Type == "page" && tg.URL == url {
			return tg.ID, tg.WS
		}
	}
	t.Fatalf("no page at %s in %+v", url, targets)
	return "", ""
}

func browserWS(t *testing.T, discoveryURL string) string {
	t.Helper()
	resp, err := http.Get(discoveryURL + "/json/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.WS == "" {
		t.Fatalf("/json/version: %v %+v", err, v)
	}
	return v.WS
}

// TestCDPStdio: --cdp-enabled over stdio: bridge_info reports the endpoint;
// chromedp attaches to the very page the MCP client drives and changes it;
// browser_close revokes; the next browser call publishes a new capability;
// no capability reaches the log.
func TestCDPStdio(t *testing.T) {
	portRange, port := freePorts(t, 1)
	srv := pages(t)
	c, _ := inProcess(t, "--cdp-enabled", "--cdp-port-range", portRange)

	if info, _ := bridgeCDP(t, c); !info.Enabled || info.Port != port {
		t.Fatalf("cdp before any browser call: %+v", info)
	}
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "- Page Title: Lab")
	info := readyCDP(t, c)
	url1 := *info.DiscoveryURL
	if info.Port != port || !strings.HasPrefix(url1, fmt.Sprintf("http://127.0.0.1:%d/cdp/", port)) || info.Generation < 1 {
		t.Fatalf("cdp block: %+v (%s)", info, url1)
	}

	// chromedp attaches to the MCP client's page through the capability.
	id, _ := pageTarget(t, url1, srv.URL+"/lab.html")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, browserWS(t, url1))
	defer cancelAlloc()
	cctx, cancelC := chromedp.NewContext(allocCtx, chromedp.WithTargetID(target.ID(id)), chromedp.WithDetachOnCancel())
	title, err := chromedp.Run(cctx, chromedp.Title())
	if err != nil || title != "Lab" {
		t.Fatalf("chromedp title %q: %v", title, err)
	}
	if _, err := chromedp.Run(cctx, chromedp.Evaluate[string](`document.title = "Driven by chromedp"`)); err != nil {
		t.Fatal(err)
	}
	if n := readyCDP(t, c).ActiveConnections; n != 1 {
		t.Fatalf("activeConnections %d with chromedp connected", n)
	}
	must(t, c, "browser_snapshot", nil, "- Page Title: Driven by chromedp")
	cancelC()
	cancelAlloc()

	// browser_close revokes at once; nothing relaunches until a browser call.
	must(t, c, "browser_close", nil)
	info, raw := bridgeCDP(t, c)
	if info.State != "unavailable" || info.DiscoveryURL != nil || raw["discoveryUrl"] != nil || info.Port != port {
		t.Fatalf("after browser_close: %v", raw)
	}
	if code := httpStatus(t, url1+"/json/version"); code != http.StatusNotFound {
		t.Fatalf("revoked capability answered %d", code)
	}
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/other.html"}, "Other page")
	info2 := readyCDP(t, c)
	url2 := *info2.DiscoveryURL
	if url2 == url1 || info2.Generation != info.Generation+1 || info2.Port != port {
		t.Fatalf("after the restart: %+v", info2)
	}
	if code := httpStatus(t, url2+"/json/version"); code != http.StatusOK {
		t.Fatalf("new capability answered %d", code)
	}
	if code := httpStatus(t, url1+"/json/version"); code != http.StatusNotFound {
		t.Fatalf("old capability answered %d after the restart", code)
	}
	for _, u := range []string{url1, url2} {
		if capability := u[strings.LastIndex(u, "/")+1:]; strings.Contains(c.Stderr.String(), capability) {
			t.Fatal("a capability reached the server log")
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("CDP port not released at shutdown: %v", err)
	}
	ln.Close()
}

// newServer builds a server from command-line flags.
func newServer(t *testing.T, args ...string) (*server.Server, error) {
	t.Helper()
	cfg, _, err := config.Load(append([]string{"--no-download"}, args...), os.Getenv, nil)
	if err != nil {
		return nil, err
	}
	return server.New(cfg, server.Options{Log: io.Discard, NoPrewarm: true, Driver: mcptest.SharedDriver(t)})
}

// TestCDPStdioPortTaken: the lowest port held by another process is a
// startup error, not a silent skip.
func TestCDPStdioPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	s, err := newServer(t, "--cdp-enabled", "--cdp-port-range", fmt.Sprintf("%d-%d", port, port+1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.ServeStdio(t.Context(), strings.NewReader(""), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") || !strings.Contains(err.Error(), "--cdp-port-range") {
		t.Fatalf("ServeStdio with the CDP port taken: %v", err)
	}
}

// TestCDPHTTPSessions: per-session CDP through initialize _meta; sessions
// without it report enabled:false; each session gets its own port and its
// capability works on no other; SIGKILL with 8 tool calls in flight: each
// answered once, one restart for 8 waiting calls, old capability refused,
// new one works; DELETE releases the port.
func TestCDPHTTPSessions(t *testing.T) {
	browserEnv(t)
	srv := pages(t)
	portRange, base := freePorts(t, 2)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--cdp-port-range", portRange)})
	on := func(key string) mcptest.ConnectOptions {
		return mcptest.ConnectOptions{InitializeMeta: map[string]any{key: map[string]any{"cdpEnabled": true}}}
	}
	a := h.Connect(t, on("io.github.swimmwatch/cloakbrowser-mcp"))
	b := h.Connect(t, mcptest.ConnectOptions{})
	cc := h.Connect(t, on("io.github.cloakmcp/cloakbrowser-mcp"))

	if _, raw := bridgeCDP(t, b.Client); len(raw) != 1 || raw["enabled"] != false {
		t.Fatalf("session without CDP: %v", raw)
	}
	// Bad _meta and an exhausted range refuse initialize, with a reason.
	initWith := func(meta string) rawResp {
		return doRaw(t, h, rawReq{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` +
			`"clientInfo":{"name":"raw","version":"1"},"_meta":` + meta + `}}`})
	}
	for _, tc := range []struct {
		name, meta string
		status     int
		want       string
	}{
		{"not a boolean", `{"io.github.swimmwatch/cloakbrowser-mcp":{"cdpEnabled":"yes"}}`, http.StatusBadRequest, "cdpEnabled: must be true or false"},
		{"not an object", `{"io.github.swimmwatch/cloakbrowser-mcp":true}`, http.StatusBadRequest, "must be an object"},
		{"every port leased", `{"io.github.swimmwatch/cloakbrowser-mcp":{"cdpEnabled":true}}`, http.StatusServiceUnavailable, "CDP endpoint unavailable"},
	} {
		r := initWith(tc.meta)
		if _, msg := r.rpcError(); r.status != tc.status || !strings.Contains(msg, tc.want) || r.header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
	if st := h.Server.Sessions().Stats(); st.Active != 3 || st.Pending != 0 {
		t.Fatalf("refused initializes left sessions or reservations: %+v", st)
	}

	navigateAll(t, []*mcptest.HTTPClient{a, cc}, []string{srv.URL + "/lab.html", srv.URL + "/lab.html"})
	ia, ic := readyCDP(t, a.Client), readyCDP(t, cc.Client)
	if ia.Port != base || ic.Port != base+1 {
		t.Fatalf("ports %d and %d, want %d and %d", ia.Port, ic.Port, base, base+1)
	}
	urlA, urlC := *ia.DiscoveryURL, *ic.DiscoveryURL
	capA := urlA[strings.LastIndex(urlA, "/")+1:]
	capC := urlC[strings.LastIndex(urlC, "/")+1:]
	for _, u := range []string{
		fmt.Sprintf("http://127.0.0.1:%d/cdp/%s/json/version", ic.Port, capA),
		fmt.Sprintf("http://127.0.0.1:%d/cdp/%s/json/version", ia.Port, capC),
	} {
		if code := httpStatus(t, u); code != http.StatusNotFound {
			t.Fatalf("another session's capability answered %d", code)
		}
	}

	// 8 tool calls in flight on A; each marks the page before blocking,
	// and A's own CDP endpoint shows when all 8 are in.
	const calls = 8
	answers := make(chan *mcp.CallToolResult, calls)
	for range calls {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := a.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "browser_evaluate",
				Arguments: map[string]any{"function": "() => { window.__inflight = (window.__inflight || 0) + 1; return new Promise(() => {}); }"}}})
			if err != nil {
				t.Errorf("in-flight call: %v", err)
			}
			answers <- res
		}()
	}
	_, ws := pageTarget(t, urlA, srv.URL+"/lab.html")
	wctx, wcancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer wcancel()
	conn, _, err := websocket.Dial(wctx, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	for n := 0; n < calls; {
		msg := `{"id":1,"method":"Runtime.evaluate","params":{"expression":"window.__inflight || 0","returnByValue":true}}`
		if err := conn.Write(wctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := conn.Read(wctx)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Result struct {
				Result struct{ Value int } `json:"result"`
			} `json:"result"`
		}
		_ = json.Unmarshal(b, &r)
		if n = r.Result.Result.Value; n < calls {
			time.Sleep(50 * time.Millisecond)
		}
	}
	g1 := currentGeneration(t, h, a.SessionID)
	for _, pid := range g1.BrowserPIDs() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	killed := time.Now()
	for i := range calls {
		select {
		case res := <-answers:
			if res == nil || !res.IsError || !strings.Contains(mcptest.Text(res), "browser was closed or crashed") {
				t.Fatalf("in-flight call %d answered: %+v", i, res)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d in-flight calls answered", i, calls)
		}
	}
	t.Logf("8 in-flight tool calls answered within %v of the kill", time.Since(killed).Round(time.Millisecond))
	if info, raw := bridgeCDP(t, a.Client); info.State != "unavailable" || info.DiscoveryURL != nil {
		t.Fatalf("after the kill: %v", raw)
	}
	if code := httpStatus(t, urlA+"/json/version"); code != http.StatusNotFound {
		t.Fatalf("old capability answered %d after the kill", code)
	}

	start := time.Now()
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { _, errs[i] = a.TryCall("browser_snapshot", nil) })
	}
	wg.Wait()
	t.Logf("8 waiting calls through one restart: %v", time.Since(start).Round(time.Millisecond))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("waiting call %d: %v", i, err)
		}
	}
	g2 := currentGeneration(t, h, a.SessionID)
	ia2 := readyCDP(t, a.Client)
	if g2.N != g1.N+1 || ia2.Generation != g2.N || ia2.Port != ia.Port || *ia2.DiscoveryURL == urlA {
		t.Fatalf("after the restart: generation %d (was %d), %+v", g2.N, g1.N, ia2)
	}
	if code := httpStatus(t, *ia2.DiscoveryURL+"/json/version"); code != http.StatusOK {
		t.Fatalf("new capability answered %d", code)
	}
	if code := httpStatus(t, urlA+"/json/version"); code != http.StatusNotFound {
		t.Fatalf("old capability answered %d after the restart", code)
	}
	if code := httpStatus(t, urlC+"/json/version"); code != http.StatusOK {
		t.Fatalf("the other session's capability answered %d", code)
	}
	waitGone(t, g1.ProfileDir, 10*time.Second)

	// DELETE ends A: browser gone, port released (and leasable again).
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, g2.ProfileDir, 0)
	if _, err := http.Get(*ia2.DiscoveryURL + "/json/version"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("the CDP listener still answers after DELETE: %v", err)
	}
	d := h.Connect(t, on("io.github.swimmwatch/cloakbrowser-mcp"))
	if info, _ := bridgeCDP(t, d.Client); !info.Enabled || info.Port != base {
		t.Fatalf("a new session did not get the released port: %+v", info)
	}
	if strings.Contains(h.Stderr.String(), capA) || strings.Contains(h.Stderr.String(), capC) {
		t.Fatal("a capability reached the server log")
	}
}
