package cdpproxy

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

const testCap = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB"

func TestRewriteWebSocketURL(t *testing.T) {
	rw := newRewriter("http", "127.0.0.1:9300", testCap)
	rws := newRewriter("https", "cdp.example.test:443", testCap)
	tests := []struct {
		name   string
		rw     rewriter
		in     string
		want   string
		wantOK bool
	}{
		{"page", rw, "ws://127.0.0.1:41000/devtools/page/ABC", "ws://127.0.0.1:9300/cdp/" + testCap + "/devtools/page/ABC", true},
		{"browser uuid", rw, "ws://localhost:41000/devtools/browser/0393c7ae-1f2e-4b5c", "ws://127.0.0.1:9300/cdp/" + testCap + "/devtools/browser/0393c7ae-1f2e-4b5c", true},
		{"https advertises wss", rws, "ws://127.0.0.1:41000/devtools/page/ABC", "wss://cdp.example.test:443/cdp/" + testCap + "/devtools/page/ABC", true},
		{"query dropped", rw, "ws://127.0.0.1:41000/devtools/page/ABC?x=1#f", "ws://127.0.0.1:9300/cdp/" + testCap + "/devtools/page/ABC", true},
		{"uppercase scheme", rw, "WS://127.0.0.1:41000/devtools/page/ABC", "ws://127.0.0.1:9300/cdp/" + testCap + "/devtools/page/ABC", true},
		{"http scheme refused", rw, "http://127.0.0.1:41000/devtools/page/ABC", "", false},
		{"other path", rw, "ws://127.0.0.1:41000/json/version", "", false},
		{"unknown kind", rw, "ws://127.0.0.1:41000/devtools/worker/ABC", "", false},
		{"nested id", rw, "ws://127.0.0.1:41000/devtools/page/ABC/DEF", "", false},
		{"escaped slash", rw, "ws://127.0.0.1:41000/devtools/page/A%2FB", "", false},
		{"dot segments", rw, "ws://127.0.0.1:41000/devtools/page/../browser/x", "", false},
		{"empty", rw, "", "", false},
		{"garbage", rw, "::not a url", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.rw.webSocketURL(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("webSocketURL(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRewriteFrontendURL(t *testing.T) {
	rw := newRewriter("http", "127.0.0.1:9300", testCap)
	rws := newRewriter("https", "cdp.example.test:9300", testCap)
	pub := "127.0.0.1:9300/cdp/" + testCap + "/devtools/page/ABC"
	tests := []struct {
		name   string
		rw     rewriter
		in     string
		want   string
		wantOK bool
	}{
		{"relative", rw, "/devtools/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC",
			"/devtools/inspector.html?ws=" + pub, true},
		{"hosted frontend keeps its host", rw,
			"https://chrome-devtools-frontend.appspot.com/serve_rev/@abc/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC",
			"https://chrome-devtools-frontend.appspot.com/serve_rev/@abc/inspector.html?ws=" + pub, true},
		{"loopback host removed", rw, "http://127.0.0.1:41000/devtools/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC",
			"/devtools/inspector.html?ws=" + pub, true},
		{"localhost host removed", rw, "http://localhost:41000/devtools/inspector.html",
			"/devtools/inspector.html", true},
		{"https uses wss key", rws, "/devtools/inspector.html?wss=127.0.0.1:41000/devtools/page/ABC&panel=console",
			"/devtools/inspector.html?wss=cdp.example.test:9300/cdp/" + testCap + "/devtools/page/ABC&panel=console", true},
		{"http turns wss into ws", rw, "/devtools/inspector.html?wss=127.0.0.1:41000/devtools/page/ABC",
			"/devtools/inspector.html?ws=" + pub, true},
		{"escaped value", rw, "/devtools/inspector.html?ws=127.0.0.1%3A41000%2Fdevtools%2Fpage%2FABC",
			"/devtools/inspector.html?ws=" + pub, true},
		{"bad ws param dropped", rw, "/devtools/inspector.html?ws=127.0.0.1:41000/json/list&experiments=true",
			"/devtools/inspector.html?experiments=true", true},
		{"no ws param", rw, "/devtools/inspector.html", "/devtools/inspector.html", true},
		{"fragment kept", rw, "/devtools/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC#x",
			"/devtools/inspector.html?ws=" + pub + "#x", true},
		{"opaque refused", rw, "javascript:alert(1)", "", false},
		{"garbage", rw, "http://[::1", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.rw.frontendURL(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("frontendURL(%q)\n got %q, %v\nwant %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRewriteBody(t *testing.T) {
	rw := newRewriter("http", "127.0.0.1:9300", testCap)
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"version",
			`{"Browser":"Chrome/156","webSocketDebuggerUrl":"ws://127.0.0.1:41000/devtools/browser/u-1"}`,
			`{"Browser":"Chrome/156","webSocketDebuggerUrl":"ws://127.0.0.1:9300/cdp/` + testCap + `/devtools/browser/u-1"}`, false},
		{"list keeps numbers and html",
			`[{"id":"ABC","n":12345678901234567890,"title":"<b>&</b>","devtoolsFrontendUrl":"/devtools/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC&x=1"}]`,
			`[{"devtoolsFrontendUrl":"/devtools/inspector.html?ws=127.0.0.1:9300/cdp/` + testCap + `/devtools/page/ABC&x=1","id":"ABC","n":12345678901234567890,"title":"<b>&</b>"}]`, false},
		{"nested", `{"a":[{"webSocketDebuggerUrl":"ws://127.0.0.1:41000/devtools/page/X"}]}`,
			`{"a":[{"webSocketDebuggerUrl":"ws://127.0.0.1:9300/cdp/` + testCap + `/devtools/page/X"}]}`, false},
		{"unmappable dropped", `{"webSocketDebuggerUrl":"ws://127.0.0.1:41000/other","devtoolsFrontendUrl":7}`, `{}`, false},
		{"not json", `<html>`, "", true},
		{"trailing data", `{} {}`, "", true},
		{"empty", ``, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rw.body([]byte(tt.in))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("body(%q) = %q; want error", tt.in, got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("body(%q)\n got %s, %v\nwant %s", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzRewrite checks the rewriter never passes an internal endpoint through:
// whatever the browser reports, a rewritten URL is the public capability
// form or is dropped, and a rewritten body is valid JSON.
func FuzzRewrite(f *testing.F) {
	seeds := []string{
		"ws://127.0.0.1:41000/devtools/page/ABC",
		"ws://127.0.0.1:41000/devtools/browser/0393c7ae-1f2e",
		"/devtools/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC",
		"https://chrome-devtools-frontend.appspot.com/serve_rev/@abc/inspector.html?ws=127.0.0.1:41000/devtools/page/ABC",
		"http://127.0.0.1:41000/devtools/inspector.html?wss=127.0.0.1:41000/devtools/page/ABC&ws=x",
		"//127.0.0.1:41000/devtools/page/ABC",
		"ws://127.0.0.1:41000/devtools/page/A%2F..%2Fb",
		"/a?ws=%zz&ws=127.0.0.1:41000/devtools/page/ABC",
		"",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	rw := newRewriter("https", "cdp.example.test:9300", testCap)
	wsPrefix := "wss://cdp.example.test:9300/cdp/" + testCap + "/devtools/"
	paramPrefix := "cdp.example.test:9300/cdp/" + testCap + "/devtools/"
	f.Fuzz(func(t *testing.T, s string) {
		if got, ok := rw.webSocketURL(s); ok {
			if !strings.HasPrefix(got, wsPrefix) || !devtoolsPath(strings.TrimPrefix(got, "wss://cdp.example.test:9300/cdp/"+testCap)) {
				t.Fatalf("webSocketURL(%q) = %q: not the public form", s, got)
			}
		}
		if got, ok := rw.frontendURL(s); ok {
			u, err := url.Parse(got)
			if err != nil {
				t.Fatalf("frontendURL(%q) = %q: unparsable: %v", s, got, err)
			}
			if u.Host != "" && isLoopbackHost(u.Hostname()) {
				t.Fatalf("frontendURL(%q) = %q: keeps a loopback host", s, got)
			}
			if strings.HasPrefix(got, "//") {
				t.Fatalf("frontendURL(%q) = %q: network-path reference", s, got)
			}
			for _, part := range strings.Split(u.RawQuery, "&") {
				k, v, _ := strings.Cut(part, "=")
				key, _ := url.QueryUnescape(k)
				if key == "ws" {
					t.Fatalf("frontendURL(%q) = %q: ws= under https", s, got)
				}
				if key == "wss" {
					val, err := url.QueryUnescape(v)
					if err != nil || !strings.HasPrefix(val, paramPrefix) {
						t.Fatalf("frontendURL(%q) = %q: wss=%q is not the public form", s, got, v)
					}
				}
			}
		}
		body, err := json.Marshal([]map[string]string{{"webSocketDebuggerUrl": s, "devtoolsFrontendUrl": s, "id": s}})
		if err != nil {
			return
		}
		out, err := rw.body(body)
		if err != nil {
			t.Fatalf("body of valid JSON failed: %v", err)
		}
		var back []map[string]any
		if err := json.Unmarshal(out, &back); err != nil || len(back) != 1 {
			t.Fatalf("body output %q is not the same JSON shape: %v", out, err)
		}
		if v, ok := back[0]["webSocketDebuggerUrl"].(string); ok && !strings.HasPrefix(v, wsPrefix) {
			t.Fatalf("body kept webSocketDebuggerUrl %q", v)
		}
		// Arbitrary bytes as a body: an error or valid JSON, never a panic.
		if out, err := rw.body([]byte(s)); err == nil && !json.Valid(out) {
			t.Fatalf("body(%q) = %q: invalid JSON", s, out)
		}
	})
}
