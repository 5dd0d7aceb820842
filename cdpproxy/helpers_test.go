package cdpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// fakeBrowser is a DevTools HTTP endpoint: discovery routes and a WebSocket
// echo at /devtools/..., as Chromium serves them on --remote-debugging-port.
type fakeBrowser struct {
	srv  *httptest.Server
	host string // 127.0.0.1:<port>

	requests atomic.Int64 // every request seen
	origins  sync.Map     // Origin header values seen (should stay empty)
	gate     chan struct{}
	gated    atomic.Bool // /json/version waits on gate
	wsOpen   atomic.Int64
	actedOn  atomic.Int64              // /json/activate and /json/close calls answered
	closes   chan websocket.StatusCode // close codes the echo saw from the proxy
}

func newFakeBrowser(t testing.TB) *fakeBrowser {
	t.Helper()
	fb := &fakeBrowser{gate: make(chan struct{}), closes: make(chan websocket.StatusCode, 16)}
	fb.srv = httptest.NewServer(http.HandlerFunc(fb.serve))
	fb.host = strings.TrimPrefix(fb.srv.URL, "http://")
	t.Cleanup(fb.srv.Close)
	return fb
}

func (fb *fakeBrowser) url() string { return fb.srv.URL }

func (fb *fakeBrowser) target(id string) map[string]any {
	return map[string]any{
		"id":                   id,
		"type":                 "page",
		"title":                "Page " + id,
		"url":                  "about:blank",
		"description":          "",
		"webSocketDebuggerUrl": "ws://" + fb.host + "/devtools/page/" + id,
		"devtoolsFrontendUrl":  "/devtools/inspector.html?ws=" + fb.host + "/devtools/page/" + id,
	}
}

func (fb *fakeBrowser) serve(w http.ResponseWriter, r *http.Request) {
	fb.requests.Add(1)
	if o := r.Header.Get("Origin"); o != "" {
		fb.origins.Store(o, true)
	}
	writeJSON := func(v any) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.URL.Path == "/json/version":
		if fb.gated.Load() {
			select {
			case <-fb.gate:
			case <-r.Context().Done():
				return
			}
		}
		writeJSON(map[string]any{
			"Browser":              "Chrome/156.0.8078.108",
			"Protocol-Version":     "1.3",
			"User-Agent":           "Mozilla/5.0",
			"V8-Version":           "15.6",
			"WebKit-Version":       "537.36",
			"webSocketDebuggerUrl": "ws://" + fb.host + "/devtools/browser/0393c7ae-1f2e-4b5c-9d8e-aabbccddeeff",
		})
	case r.URL.Path == "/json/list" || r.URL.Path == "/json":
		second := fb.target("DEF")
		second["devtoolsFrontendUrl"] = "https://chrome-devtools-frontend.appspot.com/serve_rev/@abc/inspector.html?ws=" +
			fb.host + "/devtools/page/DEF"
		// As Chromium lists them: a DevTools window and a WebUI page, which
		// the proxy hides.
		devtools := fb.target(fakeDevTools)
		devtools["type"], devtools["url"] = "other", "devtools://devtools/bundled/devtools_app.html?targetType=tab"
		webUI := fb.target(fakeWebUI)
		webUI["type"], webUI["url"] = "browser_ui", "chrome://omnibox-popup.top-chrome/"
		writeJSON([]any{fb.target("ABC"), devtools, second, webUI})
	case r.URL.Path == "/json/protocol":
		writeJSON(map[string]any{"version": map[string]string{"major": "1", "minor": "3"},
			"domains": []any{map[string]any{"domain": "Page", "description": strings.Repeat("x", 512)}}})
	case r.URL.Path == "/json/new":
		if r.Method != http.MethodPut {
			http.Error(w, "Using unsafe HTTP verb GET to invoke /json/new.", http.StatusMethodNotAllowed)
			return
		}
		t := fb.target("NEW1")
		t["url"] = r.URL.RawQuery
		writeJSON(t)
	case strings.HasPrefix(r.URL.Path, "/json/activate/"), strings.HasPrefix(r.URL.Path, "/json/close/"):
		switch strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/json/activate/"), "/json/close/") {
		case "ABC", fakeDevTools, fakeWebUI:
		default:
			http.Error(w, "No such target id", http.StatusNotFound)
			return
		}
		fb.actedOn.Add(1)
		if strings.HasPrefix(r.URL.Path, "/json/close/") {
			_, _ = io.WriteString(w, "Target is closing")
			return
		}
		_, _ = io.WriteString(w, "Target activated")
	case strings.HasPrefix(r.URL.Path, "/devtools/"):
		fb.echo(w, r)
	default:
		http.NotFound(w, r)
	}
}

// The ids of the fake's DevTools window and WebUI page.
const (
	fakeDevTools = "D0E1F2A3B4C5D6E7F8091A2B3C4D5E6F"
	fakeWebUI    = "0B1C2D3E4F5A6B7C8D9EAFB0C1D2E3F4"
)

// fakeCommand is the expression of a Runtime.evaluate sent to the fake:
// "close" closes with 4001; "big:<n>" sends n bytes; "emit:<msg>" sends msg
// (a browser message for the proxy to filter). Anything else is echoed.
func fakeCommand(b []byte) string {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Expression string `json:"expression"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &m) != nil || m.Method != "Runtime.evaluate" {
		return ""
	}
	return m.Params.Expression
}

// evaluate is a Runtime.evaluate command of expr, as CDP JSON.
func evaluate(id int, expr string) []byte {
	b, _ := json.Marshal(map[string]any{"id": id, "method": "Runtime.evaluate", "params": map[string]any{"expression": expr}})
	return b
}

// echo answers each message with itself, except the commands of fakeCommand.
func (fb *fakeBrowser) echo(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	fb.wsOpen.Add(1)
	defer fb.wsOpen.Add(-1)
	defer c.CloseNow()
	c.SetReadLimit(-1)
	ctx := context.Background()
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			if code := websocket.CloseStatus(err); code != -1 {
				select {
				case fb.closes <- code:
				default:
				}
			}
			return
		}
		switch cmd := fakeCommand(b); {
		case cmd == "close":
			_ = c.Close(4001, "bye")
			return
		case strings.HasPrefix(cmd, "big:"):
			n, _ := strconv.Atoi(strings.TrimPrefix(cmd, "big:"))
			if err := c.Write(ctx, websocket.MessageText, []byte(strings.Repeat("b", n))); err != nil {
				return
			}
		case strings.HasPrefix(cmd, "emit:"):
			if err := c.Write(ctx, websocket.MessageText, []byte(strings.TrimPrefix(cmd, "emit:"))); err != nil {
				return
			}
		default:
			if err := c.Write(ctx, typ, b); err != nil {
				return
			}
		}
	}
}

// freeRange finds n consecutive ports that can be bound on 127.0.0.1 now.
func freeRange(t testing.TB, n int) PortRange {
	t.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		first := 20000 + rand.IntN(40000)
		var lns []net.Listener
		ok := true
		for p := first; p < first+n; p++ {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				ok = false
				break
			}
			lns = append(lns, ln)
		}
		for _, ln := range lns {
			_ = ln.Close()
		}
		if ok {
			return PortRange{First: first, Last: first + n - 1}
		}
	}
	t.Fatalf("no %d consecutive free ports found", n)
	return PortRange{}
}

// testProxy is a proxy on a fresh lease, closed and released at cleanup.
type testProxy struct {
	*Proxy
	lease *Lease
	logs  *logRecorder
}

type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logRecorder) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func newTestProxy(t testing.TB, cfg Config) *testProxy {
	t.Helper()
	r := freeRange(t, 1)
	leaser, err := NewLeaser("127.0.0.1", r.String())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := leaser.Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	logs := &logRecorder{}
	if cfg.Logf == nil {
		cfg.Logf = logs.logf
	}
	p, err := New(lease, cfg)
	if err != nil {
		lease.Release()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		lease.Release()
	})
	return &testProxy{Proxy: p, lease: lease, logs: logs}
}

func (tp *testProxy) publish(t testing.TB, fb *fakeBrowser) string {
	t.Helper()
	u, err := tp.Publish(fb.url())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// capOf extracts the capability from a discovery URL.
func capOf(t *testing.T, discovery string) string {
	t.Helper()
	i := strings.Index(discovery, "/cdp/")
	if i < 0 {
		t.Fatalf("no /cdp/ in discovery URL")
	}
	return discovery[i+len("/cdp/"):]
}

// httpClient does not keep connections, so nothing idles past a test.
func httpClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

type response struct {
	status int
	header http.Header
	body   string
}

// do sends one request; host and origin are set when not empty.
func do(t *testing.T, c *http.Client, method, url, host, origin string) response {
	t.Helper()
	res, err := tryDo(c, method, url, host, origin)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// tryDo is do returning its error: it never fails the test, so it may run
// on any goroutine.
func tryDo(c *http.Client, method, url, host, origin string) (response, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return response{}, err
	}
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}, nil
}

// attempt is the outcome of a request sent by goGet.
type attempt struct {
	response
	err error
}

// goGet sends a GET from another goroutine and delivers the outcome on the
// returned channel, for the test's goroutine to check (t.Fatal must not be
// called off it).
func goGet(c *http.Client, url string) <-chan attempt {
	ch := make(chan attempt, 1)
	go func() {
		res, err := tryDo(c, "GET", url, "", "")
		ch <- attempt{res, err}
	}()
	return ch
}

// errorCode decodes the JSON error body's code.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q is not the JSON error shape: %v", body, err)
	}
	if e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("error body %q lacks code or message", body)
	}
	return e.Error.Code
}

// dialWS opens a client WebSocket; opts may be nil.
func dialWS(t *testing.T, url string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if opts == nil {
		opts = &websocket.DialOptions{}
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = httpClient(t)
	}
	c, resp, err := websocket.Dial(ctx, url, opts)
	if c != nil {
		c.SetReadLimit(-1)
		t.Cleanup(func() { _ = c.CloseNow() })
	}
	return c, resp, err
}

// wsURL is the public WebSocket URL of the fake's page ABC.
func wsURL(discovery, path string) string {
	return "ws" + strings.TrimPrefix(discovery, "http") + path
}

// readClose reads until the connection ends and returns the close code.
func readClose(t *testing.T, c *websocket.Conn, within time.Duration) (websocket.StatusCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("connection not closed within %v", within)
			}
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, err.Error()
		}
	}
}

// echoOnce sends msg and reads the reply.
func echoOnce(t *testing.T, c *websocket.Conn, typ websocket.MessageType, msg []byte) (websocket.MessageType, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, typ, msg); err != nil {
		t.Fatalf("write: %v", err)
	}
	rt, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return rt, b
}
