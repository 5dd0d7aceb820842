package session_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/cloakmcp/cloakbrowser-mcp/cdpproxy"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// noGoroutineLeaks fails the test if goroutines started during it outlive
// it. Call it first: its check runs after every later cleanup (sessions,
// drivers). A call in flight when its browser died ends when the driver
// answers it, which a loaded machine delays (once, under the full test
// command with the race detector: past goleak's own 1.3 s of retries while
// the browser's restart took 8 s); so the check waits up to 15 s for the
// goroutines to end before it fails.
func noGoroutineLeaks(t *testing.T) {
	t.Helper()
	driverReady(t) // its goroutines belong to the package, not the test
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		for end := time.Now().Add(15 * time.Second); goleak.Find(before) != nil && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
		}
		goleak.VerifyNone(t, before)
	})
}

// driverReady waits until the package's driver runs.
func driverReady(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := mcptest.SharedDriver(t).Get(ctx); err != nil {
		t.Fatalf("playwright driver: %v", err)
	}
}

// freePort finds a TCP port free on loopback right now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// leaseFreePort leases a loopback port that was free a moment before. Between
// freePort's close and the lease another process (another test binary, an
// outgoing connection's ephemeral port) can take it: then another port.
func leaseFreePort(t testing.TB) *cdpproxy.Lease {
	t.Helper()
	for attempt := 0; ; attempt++ {
		l, err := cdpproxy.NewLeaser("127.0.0.1", strconv.Itoa(freePort(t)))
		if err != nil {
			t.Fatal(err)
		}
		lease, err := l.Lease(t.Context())
		if errors.Is(err, cdpproxy.ErrPortInUse) && attempt < 5 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return lease
	}
}

type cdpOpts struct {
	// drv is the Playwright driver; if nil, the package's.
	drv *driver.Driver
	// resolve finds the browser; if nil, the system Chromium.
	resolve func(context.Context) (cloakbrowser.BinaryInfo, error)
}

// newCDPSession is a session with a managed CDP endpoint on a port of its
// own, closed when the test ends.
func newCDPSession(t testing.TB, o cdpOpts) *session.Session {
	t.Helper()
	if o.drv == nil {
		o.drv = mcptest.SharedDriver(t)
	}
	if o.resolve == nil {
		bin := cloakbrowser.BinaryInfo{BinaryPath: chromium(t), Engine: cloakbrowser.EngineChromium, Source: cloakbrowser.SourceSystem}
		o.resolve = func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil }
	}
	cfg := session.Config{
		ResolveBinary: o.resolve,
		Headless:      true,
		NoSandbox:     true,
		Log:           zerolog.New(zerolog.NewTestWriter(t)).With().Timestamp().Logger(),
	}
	if os.Getenv("CLOAKBROWSER_MCP_STRESS") != "" {
		cfg.Log = zerolog.Nop()
	}
	s := session.New(t.Name(), o.drv, cfg)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	lease := leaseFreePort(t)
	if err := s.EnableCDP(lease, cdpproxy.Config{}); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustGeneration(t testing.TB, s *session.Session) *session.Generation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g, err := s.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// readyURL is the session's published discovery URL; it fails the test if
// there is none.
func readyURL(t testing.TB, s *session.Session) string {
	t.Helper()
	info := s.CDP().Info()
	if info.State != cdpproxy.StateReady || info.DiscoveryURL == "" {
		t.Fatalf("CDP not ready: %+v", info)
	}
	return info.DiscoveryURL
}

// getJSON fetches url, returning its status and body.
func getJSON(t testing.TB, url string) (int, []byte) {
	t.Helper()
	c := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mustRefuse checks that a capability URL is dead: 404 with the proxy's
// not-found body, for discovery and for a WebSocket.
func mustRefuse(t testing.TB, discoveryURL string) {
	t.Helper()
	for _, path := range []string{"", "/json/version", "/json/list"} {
		code, body := getJSON(t, discoveryURL+path)
		if code != http.StatusNotFound || !strings.Contains(string(body), `"not_found"`) {
			t.Fatalf("refused capability answered %d %s on %q", code, body, path)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(discoveryURL, "http") + "/devtools/browser/x"
	c, resp, err := websocket.Dial(ctx, wsURL, nil)
	if err == nil {
		c.CloseNow()
		t.Fatal("a refused capability opened a WebSocket")
	}
	if resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("refused capability WebSocket: %v (%v)", err, resp)
	}
}

// pageWS finds a page target through a discovery URL and returns its
// (rewritten) WebSocket URL and id.
func pageWS(t testing.TB, discoveryURL string) (wsURL, id string) {
	t.Helper()
	code, body := getJSON(t, discoveryURL+"/json/list")
	if code != http.StatusOK {
		t.Fatalf("/json/list: %d %s", code, body)
	}
	var targets []struct {
		ID, Type, URL        string
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &targets); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if tg.Type == "page" {
			return tg.WebSocketDebuggerURL, tg.ID
		}
	}
	t.Fatalf("no page target in %s", body)
	return "", ""
}

// cdpClient is a minimal raw CDP client on one WebSocket.
type cdpClient struct {
	c      *websocket.Conn
	mu     sync.Mutex
	nextID int
}

func dialCDP(t testing.TB, wsURL string) *cdpClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("dial CDP: %v", err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &cdpClient{c: c}
}

// eval runs Runtime.evaluate and returns the value. Calls are serialised.
func (c *cdpClient) eval(ctx context.Context, expr string) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	msg, _ := json.Marshal(map[string]any{"id": id, "method": "Runtime.evaluate",
		"params": map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}})
	if err := c.c.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, err
	}
	for {
		_, b, err := c.c.Read(ctx)
		if err != nil {
			return nil, err
		}
		var r struct {
			ID     int `json:"id"`
			Result struct {
				Result struct {
					Value any `json:"value"`
				} `json:"result"`
			} `json:"result"`
			Error *struct{ Message string } `json:"error"`
		}
		if json.Unmarshal(b, &r) != nil || r.ID != id {
			continue
		}
		if r.Error != nil {
			return nil, errors.New(r.Error.Message)
		}
		return r.Result.Result.Value, nil
	}
}

// waitClosedWith reads until the socket ends and checks that its close code
// is one of want.
func (c *cdpClient) waitClosedWith(t testing.TB, want ...websocket.StatusCode) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := c.c.Read(ctx)
		if err == nil {
			continue
		}
		got := websocket.CloseStatus(err)
		if !slices.Contains(want, got) {
			t.Fatalf("socket ended with %v (code %d), want close code %v", err, got, want)
		}
		return got
	}
}

// killBrowser SIGKILLs a generation's browser and waits until the session
// notices.
func killBrowser(t testing.TB, g *session.Generation) {
	t.Helper()
	pids := g.BrowserPIDs()
	if len(pids) == 0 {
		t.Fatal("no browser process to kill")
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-g.LostCh():
	case <-time.After(10 * time.Second):
		t.Fatal("browser loss not noticed within 10s")
	}
}

// staysOn asserts that nothing happens to s's browser for a while: a
// browser call through s still runs on g, then for d g is neither lost (it
// fails as soon as it is) nor replaced.
func staysOn(t testing.TB, s *session.Session, g *session.Generation, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.Do(ctx, func(ctx context.Context, cur *session.Generation) error {
		if cur != g {
			return fmt.Errorf("the call ran on generation %d, want %d", cur.N, g.N)
		}
		tab, err := cur.CurrentTab(ctx)
		if err != nil {
			return err
		}
		_, err = tab.Evaluate(ctx, "() => 1")
		return err
	})
	if err != nil {
		t.Fatalf("browser call after the disconnect: %v", err)
	}
	select {
	case <-g.LostCh():
		t.Fatalf("generation %d was lost", g.N)
	case <-time.After(d):
	}
	if cur := s.Current(); cur != g {
		t.Fatalf("generation %d was replaced", g.N)
	}
}

// waitProfileGone waits until no process runs on a profile and its
// directory is removed.
func waitProfileGone(t testing.TB, profile string) {
	t.Helper()
	testtier.EventuallyState(t, 10*time.Second, "profile "+profile+" to be cleaned up", func() (bool, string) {
		pids := session.ProfilePIDs(profile)
		_, err := os.Stat(profile)
		return len(pids) == 0 && os.IsNotExist(err), fmt.Sprintf("processes %v, stat %v", pids, err)
	})
}

// capabilityOf is the capability segment of a discovery URL.
func capabilityOf(discoveryURL string) string {
	_, c, _ := strings.Cut(discoveryURL, "/cdp/")
	return c
}

// onPort rewrites a discovery URL to another port (another session's).
func onPort(discoveryURL string, port int) string {
	return fmt.Sprintf("http://127.0.0.1:%d/cdp/%s", port, capabilityOf(discoveryURL))
}

// listeners lists the local addresses listening on TCP port (from
// /proc/net/tcp and tcp6): "127.0.0.1", "0.0.0.0", "::"...
func listeners(port int) []string {
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // LISTEN
				continue
			}
			hexIP, hexPort, _ := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 32); err != nil || int(p) != port {
				continue
			}
			raw, err := hex.DecodeString(hexIP)
			if err != nil {
				continue
			}
			// The kernel prints each 32-bit word in host (little-endian) order.
			for i := 0; i+4 <= len(raw); i += 4 {
				raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
			}
			out = append(out, net.IP(raw).String())
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
