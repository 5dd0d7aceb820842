package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/coder/websocket"
)

// TestCDPInternalPortProtections pins what protects the browser's internal
// DevTools port, which stays on 127.0.0.1 without authentication (the
// residual risk docs/security.md states): it is one of the
// ports Chromium keeps closed to pages (so no page of any browser reaches
// it), its number is never published (the proxy's discovery answers name
// only the proxy) nor written into the profile, and Chromium itself refuses
// a web page (foreign Origin) and a DNS-rebinding Host on it.
func TestCDPInternalPortProtections(t *testing.T) {
	driverReady(t)
	s := newCDPSession(t, cdpOpts{})
	g := mustGeneration(t, s)
	discovery := readyURL(t, s)
	port := s.CDP().InternalPort()
	if !cloakbrowser.IsInternalDevToolsPort(port) {
		t.Fatalf("internal port %d is not one Chromium keeps closed to pages", port)
	}
	internal := "127.0.0.1:" + strconv.Itoa(port)

	for _, path := range []string{"/json/version", "/json/list"} {
		code, body := getJSON(t, discovery+path)
		if code != http.StatusOK || strings.Contains(string(body), ":"+strconv.Itoa(port)) {
			t.Fatalf("proxy %s: %d, names the internal port: %s", path, code, body)
		}
	}
	if _, err := os.Stat(filepath.Join(g.ProfileDir, "DevToolsActivePort")); !os.IsNotExist(err) {
		t.Fatalf("the profile holds DevToolsActivePort (%v)", err)
	}
	var version struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	code, body := getJSON(t, "http://"+internal+"/json/version")
	if err := json.Unmarshal(body, &version); code != http.StatusOK || err != nil {
		t.Fatalf("internal /json/version: %d %s", code, body)
	}
	_, browserPath, _ := strings.Cut(strings.TrimPrefix(version.WS, "ws://"), "/")
	browserPath = "/" + browserPath

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+internal+"/json/version", nil)
	req.Host = "attacker.example:" + strconv.Itoa(port)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("the internal port answered a DNS-rebinding Host")
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws://"+internal+browserPath, &websocket.DialOptions{
		HTTPClient: client,
		HTTPHeader: http.Header{"Origin": {"http://attacker.example"}},
	})
	if err == nil {
		conn.CloseNow()
		t.Fatal("the internal port accepted a WebSocket from a web page's Origin")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("web page's WebSocket to the internal port: %v (%v)", err, resp)
	}
}

// TestCDPInternalPortTakenDuringLaunch: another process binds the internal
// port between its pick and the browser's start (Chromium then listens on
// [::1], and 127.0.0.1:port is the other process's, listing other pages):
// the launch is repeated on another internal port, and the capability
// published is for this browser.
func TestCDPInternalPortTakenDuringLaunch(t *testing.T) {
	driverReady(t)
	var (
		mu     sync.Mutex
		taken  int
		listed bool
	)
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		listed = listed || r.URL.Path == "/json/list"
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"id": "0THER0BROWSER0PAGE", "type": "page", "url": "about:blank"}]`)
	})}
	t.Cleanup(func() { _ = other.Close() })
	session.SetAfterInternalPortPick(func(port int) {
		mu.Lock()
		defer mu.Unlock()
		if taken != 0 {
			return
		}
		ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Errorf("take the picked port %d: %v", port, err)
			return
		}
		taken = port
		go func() { _ = other.Serve(ln) }()
	})
	t.Cleanup(func() { session.SetAfterInternalPortPick(nil) })

	s := newCDPSession(t, cdpOpts{})
	mustGeneration(t, s)
	discovery := readyURL(t, s)
	mu.Lock()
	defer mu.Unlock()
	if taken == 0 || !listed {
		t.Fatalf("the other process's endpoint: port %d, asked for its list %v", taken, listed)
	}
	if port := s.CDP().InternalPort(); port == taken || !cloakbrowser.IsInternalDevToolsPort(port) {
		t.Fatalf("internal port %d (the taken one was %d)", port, taken)
	}
	if code, body := getJSON(t, discovery+"/json/list"); code != http.StatusOK || strings.Contains(string(body), "0THER0BROWSER0PAGE") {
		t.Fatalf("the capability's /json/list: %d %s", code, body)
	}
}
