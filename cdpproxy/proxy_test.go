package cdpproxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/coder/websocket"
)

func TestNotFoundIsUniform(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{})
	c := httpClient(t)
	root := "http://127.0.0.1:" + strconv.Itoa(tp.Port())

	// Before publication every capability is unknown.
	before := do(t, c, "GET", root+"/cdp/"+newCapability()+"/json/version", "", "")
	if tp.State() != StateUnavailable || tp.DiscoveryURL() != "" {
		t.Fatalf("State %q DiscoveryURL %q before Publish", tp.State(), tp.DiscoveryURL())
	}
	capability := capOf(t, tp.publish(t, fb))
	seenBefore := fb.requests.Load()

	tests := []struct {
		name          string
		path          string
		countsAsProbe bool
	}{
		{"other capability", "/cdp/" + newCapability() + "/json/version", true},
		{"truncated capability", "/cdp/" + capability[:42] + "/json/version", true},
		{"extended capability", "/cdp/" + capability + "x/json/version", true},
		{"empty capability", "/cdp//json/version", true},
		{"no capability", "/cdp/", true},
		{"capability only as query", "/cdp/x?cap=" + capability, true},
		{"root", "/", false},
		{"bare json", "/json/version", false},
		{"unknown route", "/cdp/" + capability + "/json/unknown", false},
		{"dot segments", "/cdp/" + capability + "/json/../json/version", false},
	}
	want := before
	if want.status != http.StatusNotFound || errorCode(t, want.body) != codeNotFound {
		t.Fatalf("before publish: %d %s", want.status, want.body)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rej := tp.Rejections().Capability
			res := do(t, c, "GET", root+tt.path, "", "")
			if res.status != http.StatusNotFound || res.body != want.body {
				t.Fatalf("GET %s: %d %s; want 404 %s", redactPath(tt.path), res.status, res.body, want.body)
			}
			if got := tp.Rejections().Capability - rej; (got == 1) != tt.countsAsProbe {
				t.Fatalf("capability rejections grew by %d", got)
			}
		})
	}
	if fb.requests.Load() != seenBefore {
		t.Fatal("a not-found request reached the browser")
	}
}

func TestHostOriginPolicy(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{AllowedOrigins: []string{"https://app.example.test"}})
	discovery := tp.publish(t, fb)
	port := strconv.Itoa(tp.Port())
	c := httpClient(t)

	tests := []struct {
		name       string
		host       string
		origin     string
		wantStatus int
		wantReject string // "", "host", "origin"
	}{
		{"plain", "", "", 200, ""},
		{"localhost alias", "localhost:" + port, "", 200, ""},
		{"same origin page", "", "http://127.0.0.1:" + port, 200, ""},
		{"allowed origin", "", "https://app.example.test", 200, ""},
		{"rebinding host", "attacker.example:" + port, "", 403, "host"},
		{"rebinding host with origin", "attacker.example:" + port, "http://attacker.example:" + port, 403, "host"},
		{"wrong port host", "127.0.0.1:1", "", 403, "host"},
		{"cross-site page", "", "https://attacker.example", 403, "origin"},
		{"null origin", "", "null", 403, "origin"},
		{"other local page", "", "http://localhost:3000", 403, "origin"},
	}
	for _, tt := range tests {
		for _, kind := range []string{"http", "websocket"} {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				before := tp.Rejections()
				status := 0
				var body string
				if kind == "http" {
					res := do(t, c, "GET", discovery+"/json/version", tt.host, tt.origin)
					status, body = res.status, res.body
				} else {
					h := http.Header{}
					if tt.origin != "" {
						h.Set("Origin", tt.origin)
					}
					conn, resp, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), &websocket.DialOptions{HTTPHeader: h, Host: tt.host})
					switch {
					case err == nil:
						status = http.StatusSwitchingProtocols
						echoOnce(t, conn, websocket.MessageText, []byte("hi"))
						_ = conn.Close(websocket.StatusNormalClosure, "")
					case resp != nil:
						status = resp.StatusCode
					default:
						t.Fatalf("dial: %v", err)
					}
				}
				want := tt.wantStatus
				if kind == "websocket" && want == 200 {
					want = http.StatusSwitchingProtocols
				}
				if status != want {
					t.Fatalf("status %d; want %d (%s)", status, want, body)
				}
				if kind == "http" && status == 403 && errorCode(t, body) != codeForbidden {
					t.Fatalf("body %s", body)
				}
				after := tp.Rejections()
				grew := map[string]uint64{"host": after.Host - before.Host, "origin": after.Origin - before.Origin}
				for k, v := range grew {
					if wantOne := k == tt.wantReject; (v == 1) != wantOne || v > 1 {
						t.Fatalf("%s rejections grew by %d", k, v)
					}
				}
			})
		}
	}
	fb.origins.Range(func(k, _ any) bool {
		t.Errorf("the browser saw Origin %q; the proxy must strip it", k)
		return true
	})
}

func TestRevokeInvalidatesCapability(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{})
	discovery := tp.publish(t, fb)
	c := httpClient(t)
	conn, _, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil)
	if err != nil {
		t.Fatal(err)
	}
	echoOnce(t, conn, websocket.MessageText, []byte("before"))

	tp.Revoke()
	// Revoke drops the browser side before it returns; the fake may need a
	// moment to notice.
	testtier.Eventually(t, 2*time.Second, "the browser side to close", func() bool { return fb.wsOpen.Load() == 0 })
	code, reason := readClose(t, conn, 3*time.Second)
	if code != websocket.StatusGoingAway || reason != reasonBrowserGone {
		t.Fatalf("client saw close %d %q; want 1001 %q", code, reason, reasonBrowserGone)
	}
	if tp.State() != StateUnavailable || tp.DiscoveryURL() != "" {
		t.Fatalf("State %q DiscoveryURL %q after Revoke", tp.State(), tp.DiscoveryURL())
	}
	res := do(t, c, "GET", discovery+"/json/version", "", "")
	if res.status != http.StatusNotFound || errorCode(t, res.body) != codeNotFound {
		t.Fatalf("revoked URL: %d %s", res.status, res.body)
	}
	if _, resp, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil); err == nil || resp == nil || resp.StatusCode != 404 {
		t.Fatalf("revoked WebSocket URL: %v", err)
	}
	testtier.Eventually(t, 5*time.Second, "no active connections", func() bool { return tp.Stats().ActiveConnections == 0 })
	tp.Revoke() // idempotent
}

func TestRevokeCancelsInFlightHTTP(t *testing.T) {
	fb := newFakeBrowser(t)
	fb.gated.Store(true)
	tp := newTestProxy(t, Config{})
	discovery := tp.publish(t, fb)
	got := goGet(httpClient(t), discovery+"/json/version")
	testtier.Eventually(t, 5*time.Second, "the request to be in flight", func() bool { return tp.Stats().ActiveRequests == 1 })
	tp.Revoke()
	select {
	case res := <-got:
		if res.err != nil {
			t.Fatal(res.err)
		}
		if res.status != http.StatusServiceUnavailable || errorCode(t, res.body) != codeUnavailable {
			t.Fatalf("in-flight request after Revoke: %d %s", res.status, res.body)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Revoke did not end the in-flight request")
	}
}

func TestRepublishNeverReachesNewBrowser(t *testing.T) {
	oldBrowser, newBrowser := newFakeBrowser(t), newFakeBrowser(t)
	tp := newTestProxy(t, Config{})
	c := httpClient(t)
	oldURL := tp.publish(t, oldBrowser)
	conn, _, err := dialWS(t, wsURL(oldURL, "/devtools/page/ABC"), nil)
	if err != nil {
		t.Fatal(err)
	}

	newURL := tp.publish(t, newBrowser)
	if newURL == oldURL || capOf(t, newURL) == capOf(t, oldURL) {
		t.Fatal("republish kept the capability")
	}
	if code, _ := readClose(t, conn, 3*time.Second); code != websocket.StatusGoingAway {
		t.Fatalf("old generation's socket closed with %d; want 1001", code)
	}

	before := newBrowser.requests.Load()
	for _, path := range []string{"", "/json/version", "/json/list"} {
		if res := do(t, c, "GET", oldURL+path, "", ""); res.status != http.StatusNotFound {
			t.Fatalf("old URL %q: %d %s", path, res.status, res.body)
		}
	}
	if _, resp, err := dialWS(t, wsURL(oldURL, "/devtools/page/ABC"), nil); err == nil || resp == nil || resp.StatusCode != 404 {
		t.Fatalf("old WebSocket URL: %v", err)
	}
	if newBrowser.requests.Load() != before {
		t.Fatal("a stale URL reached the new browser")
	}

	res := do(t, c, "GET", newURL+"/json/version", "", "")
	if res.status != http.StatusOK || !strings.Contains(res.body, capOf(t, newURL)) {
		t.Fatalf("new URL: %d %s", res.status, res.body)
	}
	if newBrowser.requests.Load() != before+1 {
		t.Fatal("the new URL did not reach the new browser")
	}
	if strings.Contains(res.body, capOf(t, oldURL)) {
		t.Fatal("new answer mentions the old capability")
	}
}

func TestPublishValidation(t *testing.T) {
	tp := newTestProxy(t, Config{})
	tests := []struct{ name, upstream string }{
		{"remote host", "http://192.0.2.1:9222"},
		{"https", "https://127.0.0.1:9222"},
		{"ws", "ws://127.0.0.1:9222"},
		{"no port", "http://127.0.0.1"},
		{"path", "http://127.0.0.1:9222/json"},
		{"userinfo", "http://u:p@127.0.0.1:9222"},
		{"junk", "::"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if u, err := tp.Publish(tt.upstream); err == nil {
				t.Fatalf("Publish(%q) = %q; want error", tt.upstream, u)
			}
			if tp.State() != StateUnavailable {
				t.Fatal("a refused Publish changed the state")
			}
		})
	}
}

func TestNewValidation(t *testing.T) {
	if _, err := New(nil, Config{}); err == nil {
		t.Fatal("New(nil lease) succeeded")
	}
	leaser, _ := newTestLeaser(t, 1)
	lease, err := leaser.Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"bind host differs", Config{BindHost: "localhost"}, "differs from the lease"},
		{"bad scheme", Config{AdvertisedScheme: "ftp"}, "want http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(lease, tt.cfg)
			if err == nil {
				_ = p.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q; want %q", err, tt.want)
			}
		})
	}
}

func TestLogsNeverHoldCapability(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{Limits: Limits{MaxWebSockets: 1, MaxResponseBytes: 256}})
	discovery := tp.publish(t, fb)
	capability := capOf(t, discovery)
	c := httpClient(t)
	do(t, c, "GET", discovery+"/json/version", "", "")
	do(t, c, "GET", discovery+"/json/protocol", "", "") // over the size limit: logged
	do(t, c, "GET", discovery+"/json/version", "evil.example:1", "")
	conn, _, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _ = dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil) // over the limit: logged
	_ = conn.Close(websocket.StatusNormalClosure, "")
	testtier.Eventually(t, 5*time.Second, "the socket to close", func() bool { return tp.Stats().ActiveConnections == 0 })
	tp.Revoke()

	logs := tp.logs.all()
	if strings.Contains(logs, capability) {
		t.Fatalf("logs contain the capability:\n%s", logs)
	}
	if !strings.Contains(logs, "/cdp/<redacted>/") {
		t.Fatalf("logs lack redacted paths:\n%s", logs)
	}
}

func TestCloseReleasesEverything(t *testing.T) {
	fb := newFakeBrowser(t)
	leaser, r := newTestLeaser(t, 1)
	lease, err := leaser.Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(lease, Config{})
	if err != nil {
		t.Fatal(err)
	}
	discovery, err := p.Publish(fb.url())
	if err != nil {
		t.Fatal(err)
	}
	var conns []*websocket.Conn
	for i := 0; i < 3; i++ {
		conn, _, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil)
		if err != nil {
			t.Fatal(err)
		}
		echoOnce(t, conn, websocket.MessageBinary, []byte{byte(i)})
		conns = append(conns, conn)
	}
	// Clients read, so their close handshakes answer while Close waits.
	codes := make(chan websocket.StatusCode, len(conns))
	for _, conn := range conns {
		go func() {
			_, _, err := conn.Read(context.Background())
			codes <- websocket.CloseStatus(err)
		}()
	}

	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v with cooperative clients", d)
	}
	for range conns {
		if code := <-codes; code != websocket.StatusGoingAway {
			t.Fatalf("client saw %d; want 1001", code)
		}
	}
	if err := p.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if s := p.Stats(); s.ActiveConnections != 0 || s.ActiveRequests != 0 {
		t.Fatalf("stats after Close: %+v", s)
	}
	if p.State() != StateUnavailable {
		t.Fatal("state after Close")
	}
	if _, err := p.Publish(fb.url()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Publish after Close: %v; want ErrClosed", err)
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.First)), time.Second); err == nil {
		_ = c.Close()
		t.Fatal("listener still accepts after Close")
	}
	testtier.Eventually(t, 2*time.Second, "the browser sockets to close", func() bool { return fb.wsOpen.Load() == 0 })

	lease.Release()
	again, err := leaser.Lease(context.Background())
	if err != nil {
		t.Fatalf("port not reusable after Close and Release: %v", err)
	}
	again.Release()
}

func TestCloseDropsUncooperativeClients(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{Limits: Limits{ShutdownTimeout: 200 * time.Millisecond}})
	discovery := tp.publish(t, fb)
	// This client never reads, so it never answers the close handshake.
	if _, _, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil); err != nil {
		t.Fatal(err)
	}
	testtier.Eventually(t, 2*time.Second, "the relay to start", func() bool { return fb.wsOpen.Load() == 1 })
	start := time.Now()
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v; the shutdown timeout is 200ms", d)
	}
}
