package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// logLine is the part of a server log line these tests read.
type logLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
}

// parseLog decodes a server's JSON log, failing on a line that is not JSON.
func parseLog(t *testing.T, log string) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if l == "" {
			continue
		}
		var e logLine
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON log line: %q", l)
		}
		out = append(out, e)
	}
	return out
}

// stalledMirror accepts connections and never answers, as a download origin
// behind a black-holing firewall: a binary resolution in flight stays in
// flight.
func stalledMirror(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestQuietLogs: an operator's log says what went wrong and nothing else. A
// server whose stdin closes at once logs no error (nothing was missing); a
// normal shutdown logs no "browser lost" (over stdio, and over HTTP with
// the shared browser); the reason for the system Chromium fallback is
// logged once per start.
func TestQuietLogs(t *testing.T) {
	t.Parallel() // server processes of its own, no process-wide state
	mcptest.Chromium(t)
	t.Run("stdin closes at once", func(t *testing.T) {
		t.Parallel()
		env, _ := serverEnv(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, mcptest.Binary(t))
		cmd.Env = append(append(os.Environ(), env...), "CLOAKBROWSER_DOWNLOAD_URL="+stalledMirror(t))
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Run(); err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
		for _, e := range parseLog(t, stderr.String()) {
			if e.Level == "error" || e.Level == "warn" {
				t.Errorf("a %s on a start and stop with nothing wrong: %q\n%s", e.Level, e.Message, stderr.String())
			}
		}
	})
	t.Run("stdio: a browser call, then stdin closes", func(t *testing.T) {
		t.Parallel()
		env, _ := serverEnv(t)
		// A download origin that has nothing: the server falls back on the
		// system Chromium and says why.
		cdn := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(cdn.Close)
		c := mcptest.StartBinary(t, mcptest.Binary(t), mcptest.Options{Env: append(env, "CLOAKBROWSER_DOWNLOAD_URL="+cdn.URL)})
		c.MustCall(t, "browser_navigate", map[string]any{"url": pages(t).URL + "/lab.html"})
		if err := c.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		log := c.Stderr.String()
		lines := parseLog(t, log)
		reasons := 0
		for _, e := range lines {
			if strings.Contains(e.Message, "browser lost") {
				t.Errorf("%s %q on a normal shutdown", e.Level, e.Message)
			}
			reasons += strings.Count(e.Message+e.Reason, "SHA256SUMS unavailable")
		}
		if reasons != 1 {
			t.Errorf("the fallback reason is logged %d times, want once:\n%s", reasons, log)
		}
	})
	t.Run("HTTP shared browser: a browser call, then SIGTERM", func(t *testing.T) {
		t.Parallel()
		env, _ := serverEnv(t)
		h := mcptest.StartHTTPBinary(t, mcptest.Binary(t), mcptest.HTTPOptions{Env: env, Args: httpArgs("--http-isolation", "context")})
		c := h.Connect(t, mcptest.ConnectOptions{})
		navigate(t, c, pages(t).URL+"/lab.html")
		if err := c.Close(); err != nil {
			t.Fatalf("close the session: %v", err)
		}
		if err := h.Stop(); err != nil {
			t.Fatalf("stop: %v", err)
		}
		for _, e := range parseLog(t, h.Stderr.String()) {
			if strings.Contains(e.Message, "browser lost") {
				t.Errorf("%s %q on a normal shutdown", e.Level, e.Message)
			}
		}
	})
}
