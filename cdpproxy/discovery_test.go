package cdpproxy

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

func TestDiscoveryRewrite(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		host     string // if set, send the advertised authority as Host
		scheme   string
		wsScheme string
		authHost string
	}{
		{name: "loopback http", cfg: Config{}, scheme: "http", wsScheme: "ws", authHost: "127.0.0.1"},
		{name: "advertised https", cfg: Config{AdvertisedHost: "cdp.example.test", AdvertisedScheme: "https"},
			host: "cdp.example.test", scheme: "https", wsScheme: "wss", authHost: "cdp.example.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := newFakeBrowser(t)
			tp := newTestProxy(t, tt.cfg)
			discovery := tp.publish(t, fb)
			capability := capOf(t, discovery)
			auth := tt.authHost + ":" + strconv.Itoa(tp.Port())
			if want := tt.scheme + "://" + auth + "/cdp/" + capability; discovery != want {
				t.Fatalf("discovery URL %q; want %q", discovery, want)
			}
			if len(capability) != CapabilityLen {
				t.Fatalf("capability length %d", len(capability))
			}
			if tp.State() != StateReady || tp.DiscoveryURL() != discovery {
				t.Fatalf("State %q DiscoveryURL %q after Publish", tp.State(), tp.DiscoveryURL())
			}
			// The proxy listens on loopback; https only changes the URLs.
			base := "http://127.0.0.1:" + strconv.Itoa(tp.Port()) + "/cdp/" + capability
			host := ""
			if tt.host != "" {
				host = auth // the advertised authority, as a TLS terminator would pass it
			}
			wsBase := tt.wsScheme + "://" + auth + "/cdp/" + capability + "/devtools/"
			c := httpClient(t)

			routes := []struct {
				name, method, path string
				wantWS             int // webSocketDebuggerUrl count
				wantFrontends      int
				wantBody           string
			}{
				{"discovery url", "GET", "", 1, 0, ""},
				{"discovery slash", "GET", "/", 1, 0, ""},
				{"version", "GET", "/json/version", 1, 0, ""},
				{"json", "GET", "/json", 2, 2, ""},
				{"list", "GET", "/json/list", 2, 2, ""},
				{"protocol", "GET", "/json/protocol", 0, 0, `"domains"`},
				{"new", "PUT", "/json/new?about:blank", 1, 1, `"url":"about:blank"`},
				{"activate", "GET", "/json/activate/ABC", 0, 0, "Target activated"},
			}
			for _, rt := range routes {
				t.Run(rt.name, func(t *testing.T) {
					res := do(t, c, rt.method, base+rt.path, host, "")
					if res.status != http.StatusOK {
						t.Fatalf("%s %s: status %d body %s", rt.method, rt.path, res.status, res.body)
					}
					if strings.Contains(res.body, fb.host) {
						t.Fatalf("body keeps the internal endpoint %s: %s", fb.host, res.body)
					}
					if strings.Count(res.body, `"webSocketDebuggerUrl":"`+wsBase) != rt.wantWS {
						t.Fatalf("want %d public webSocketDebuggerUrl under %s: %s", rt.wantWS, wsBase, res.body)
					}
					param := tt.wsScheme + "=" + auth + "/cdp/" + capability + "/devtools/page/"
					if strings.Count(res.body, param) != rt.wantFrontends {
						t.Fatalf("want %d devtoolsFrontendUrl with %s: %s", rt.wantFrontends, param, res.body)
					}
					if !strings.Contains(res.body, rt.wantBody) {
						t.Fatalf("body lacks %q: %s", rt.wantBody, res.body)
					}
					if rt.wantWS > 0 && !json.Valid([]byte(res.body)) {
						t.Fatalf("invalid JSON: %s", res.body)
					}
				})
			}
		})
	}
}

func TestMethodsAndBodies(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{})
	discovery := tp.publish(t, fb)
	c := httpClient(t)
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantCode   string
		wantAllow  string
	}{
		{"GET /json/new refused", "GET", "/json/new?about:blank", "", 405, codeMethodNotAllowed, "PUT"},
		{"POST version refused", "POST", "/json/version", "", 405, codeMethodNotAllowed, "GET"},
		{"DELETE list refused", "DELETE", "/json/list", "", 405, codeMethodNotAllowed, "GET"},
		{"body refused", "PUT", "/json/new?about:blank", "x", 413, codePayloadTooLarge, ""},
		{"bad target id", "GET", "/json/activate/a%2Fb", "", 400, codeBadRequest, ""},
		{"unknown target", "GET", "/json/activate/ZZZ", "", 404, codeNotFound, ""},
		{"devtools kind", "GET", "/devtools/worker/ABC", "", 400, codeBadRequest, ""},
		{"devtools without upgrade", "GET", "/devtools/page/ABC", "", 400, codeBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, discovery+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.body == "" {
				req.Body, req.ContentLength = nil, 0
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e errorBody
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("status %d, body not JSON: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != tt.wantStatus || e.Error.Code != tt.wantCode {
				t.Fatalf("%d %q; want %d %q", resp.StatusCode, e.Error.Code, tt.wantStatus, tt.wantCode)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Fatalf("Allow %q; want %q", got, tt.wantAllow)
			}
		})
	}
}

func TestUpstreamFailures(t *testing.T) {
	tests := []struct {
		name       string
		limits     Limits
		path       string
		upstream   func(t *testing.T) string
		wantStatus int
		wantCode   string
	}{
		{name: "oversize response", limits: Limits{MaxResponseBytes: 256}, path: "/json/protocol",
			upstream: func(t *testing.T) string { return newFakeBrowser(t).url() }, wantStatus: 502, wantCode: codeBadGateway},
		{name: "browser not listening", path: "/json/version",
			upstream: func(t *testing.T) string {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := ln.Addr().String()
				_ = ln.Close()
				return "http://" + addr
			}, wantStatus: 502, wantCode: codeBadGateway},
		{name: "browser too slow", limits: Limits{Timeout: 200 * time.Millisecond}, path: "/json/version",
			upstream: func(t *testing.T) string {
				fb := newFakeBrowser(t)
				fb.gated.Store(true)
				return fb.url()
			}, wantStatus: 504, wantCode: codeGatewayTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := newTestProxy(t, Config{Limits: tt.limits})
			discovery, err := tp.Publish(tt.upstream(t))
			if err != nil {
				t.Fatal(err)
			}
			res := do(t, httpClient(t), "GET", discovery+tt.path, "", "")
			if res.status != tt.wantStatus || errorCode(t, res.body) != tt.wantCode {
				t.Fatalf("%d %s; want %d %s", res.status, res.body, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

func TestHTTPConcurrencyLimit(t *testing.T) {
	fb := newFakeBrowser(t)
	fb.gated.Store(true)
	tp := newTestProxy(t, Config{Limits: Limits{MaxHTTPRequests: 1}})
	discovery := tp.publish(t, fb)
	c := httpClient(t)

	first := goGet(c, discovery+"/json/version")
	testtier.Eventually(t, 5*time.Second, "the first request to be in flight", func() bool { return tp.Stats().ActiveRequests == 1 })

	res := do(t, c, "GET", discovery+"/json/version", "", "")
	if res.status != http.StatusServiceUnavailable || errorCode(t, res.body) != codeLimit || res.header.Get("Retry-After") == "" {
		t.Fatalf("second request: %d %s %v; want 503 limit with Retry-After", res.status, res.body, res.header)
	}
	close(fb.gate)
	if r := <-first; r.err != nil || r.status != http.StatusOK {
		t.Fatalf("first request: %v %d %s", r.err, r.status, r.body)
	}
	testtier.Eventually(t, 5*time.Second, "no request in flight", func() bool { return tp.Stats().ActiveRequests == 0 })
}

func TestHeaderLimit(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{})
	discovery := tp.publish(t, fb)
	req, err := http.NewRequest("GET", discovery+"/json/version", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("p", 64<<10))
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d; want 431", resp.StatusCode)
	}
}
