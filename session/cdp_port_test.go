package session_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestCDPInternalPortProtections pins what protects the browser's internal
// DevTools port, which stays on 127.0.0.1 without authentication (the
// residual risk docs/security.md states): its number is never
// published (the proxy's discovery answers name only the proxy), it is
// written only into a profile directory other users cannot read, and
// Chromium itself refuses a web page (foreign Origin) and a DNS-rebinding
// Host on it.
func TestCDPInternalPortProtections(t *testing.T) {
	driverReady(t)
	s := newCDPSession(t, cdpOpts{})
	g := mustGeneration(t, s)
	discovery := readyURL(t, s)
	port := s.CDP().InternalPort()
	if port == 0 {
		t.Fatal("no internal port")
	}
	internal := "127.0.0.1:" + strconv.Itoa(port)

	for _, path := range []string{"/json/version", "/json/list"} {
		code, body := getJSON(t, discovery+path)
		if code != http.StatusOK || strings.Contains(string(body), ":"+strconv.Itoa(port)) {
			t.Fatalf("proxy %s: %d, names the internal port: %s", path, code, body)
		}
	}

	st, err := os.Stat(g.ProfileDir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		t.Fatalf("profile directory %s is mode %v: other users can read DevToolsActivePort", g.ProfileDir, perm)
	}
	active, err := os.ReadFile(filepath.Join(g.ProfileDir, "DevToolsActivePort"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(active)), "\n")
	if len(lines) < 2 {
		t.Fatalf("DevToolsActivePort: %q", active)
	}
	browserPath := strings.TrimSpace(lines[1])

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
