package cdpproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/coder/websocket"
)

func TestWebSocketRoundTrip(t *testing.T) {
	fb := newFakeBrowser(t)
	// The relay's mechanics: no file policy (the allowlist still holds).
	tp := newTestProxy(t, Config{AllowedOrigins: []string{"https://app.example.test"}, Files: FilePolicy{Unrestricted: true}})
	discovery := tp.publish(t, fb)
	tests := []struct {
		name string
		path string
		typ  websocket.MessageType
		msg  []byte
		opts *websocket.DialOptions
	}{
		{"page text", "/devtools/page/ABC", websocket.MessageText, []byte(`{"id":1,"method":"Page.navigate"}`), nil},
		{"browser binary", "/devtools/browser/0393c7ae-1f2e", websocket.MessageBinary, []byte(`{"id":2,"method":"Browser.getVersion"}`), nil},
		{"large text", "/devtools/page/ABC", websocket.MessageText, evaluate(3, strings.Repeat("x", 200<<10)), nil},
		{"allowed origin", "/devtools/page/ABC", websocket.MessageText, evaluate(4, "o"),
			&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://app.example.test"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, _, err := dialWS(t, wsURL(discovery, tt.path), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				typ, got := echoOnce(t, conn, tt.typ, tt.msg)
				if typ != tt.typ || !bytes.Equal(got, tt.msg) {
					t.Fatalf("echo %d: type %v, %d bytes; want %v, %d bytes", i, typ, len(got), tt.typ, len(tt.msg))
				}
			}
			if got := tp.Stats().ActiveConnections; got != 1 {
				t.Fatalf("ActiveConnections %d; want 1", got)
			}
			if err := conn.Close(websocket.StatusNormalClosure, "done"); err != nil {
				t.Fatalf("client close: %v", err)
			}
			select {
			case code := <-fb.closes:
				if code != websocket.StatusNormalClosure {
					t.Fatalf("browser saw close %d; want the client's 1000", code)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the client's close did not reach the browser")
			}
			testtier.Eventually(t, 3*time.Second, "the relay to end", func() bool { return tp.Stats().ActiveConnections == 0 })
		})
	}
	fb.origins.Range(func(k, _ any) bool {
		t.Errorf("the browser saw Origin %q", k)
		return true
	})
}

func TestWebSocketLimit(t *testing.T) {
	fb := newFakeBrowser(t)
	tp := newTestProxy(t, Config{})
	discovery := tp.publish(t, fb)
	url := wsURL(discovery, "/devtools/page/ABC")
	var open []*websocket.Conn
	for i := 0; i < DefaultMaxWebSockets; i++ {
		conn, _, err := dialWS(t, url, nil)
		if err != nil {
			t.Fatalf("socket %d: %v", i+1, err)
		}
		open = append(open, conn)
	}
	if got := tp.Stats().ActiveConnections; got != DefaultMaxWebSockets {
		t.Fatalf("ActiveConnections %d; want %d", got, DefaultMaxWebSockets)
	}
	testtier.Eventually(t, 3*time.Second, "the browser to see 8 sockets", func() bool { return fb.wsOpen.Load() == DefaultMaxWebSockets })
	browserRequests := fb.requests.Load()

	_, resp, err := dialWS(t, url, nil)
	if err == nil || resp == nil {
		t.Fatalf("9th WebSocket: %v; want an HTTP refusal", err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("9th WebSocket: status %d; want 503 with Retry-After", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	if errorCode(t, string(body)) != codeLimit {
		t.Fatalf("9th WebSocket body %s", body)
	}
	if fb.requests.Load() != browserRequests {
		t.Fatal("the refused WebSocket reached the browser")
	}

	// The others still work, and a freed slot is reusable.
	echoOnce(t, open[0], websocket.MessageText, []byte("still here"))
	_ = open[1].Close(websocket.StatusNormalClosure, "")
	testtier.Eventually(t, 3*time.Second, "a slot to free", func() bool { return tp.Stats().ActiveConnections < DefaultMaxWebSockets })
	conn, _, err := dialWS(t, url, nil)
	if err != nil {
		t.Fatalf("after a close: %v", err)
	}
	echoOnce(t, conn, websocket.MessageText, []byte("again"))
}

func TestWebSocketCloseCodes(t *testing.T) {
	tests := []struct {
		name       string
		send       []byte
		wantCode   websocket.StatusCode
		wantReason string
	}{
		{"client message too big", bytes.Repeat([]byte("c"), 2048), websocket.StatusMessageTooBig, ""},
		{"browser message too big", evaluate(1, "big:4096"), websocket.StatusMessageTooBig, reasonUpstreamBig},
		{"browser close relayed", evaluate(1, "close"), 4001, "bye"},
		{"at the limit passes", evaluate(1, strings.Repeat("c", 1024-len(evaluate(1, "")))), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := newFakeBrowser(t)
			tp := newTestProxy(t, Config{Limits: Limits{MaxMessageBytes: 1024}})
			discovery := tp.publish(t, fb)
			conn, _, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCode == 0 {
				if _, got := echoOnce(t, conn, websocket.MessageText, tt.send); !bytes.Equal(got, tt.send) {
					t.Fatal("echo differs")
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := conn.Write(ctx, websocket.MessageText, tt.send); err != nil {
				t.Fatal(err)
			}
			code, reason := readClose(t, conn, 3*time.Second)
			if code != tt.wantCode || (tt.wantReason != "" && reason != tt.wantReason) {
				t.Fatalf("close %d %q; want %d %q", code, reason, tt.wantCode, tt.wantReason)
			}
			testtier.Eventually(t, 3*time.Second, "the relay to end", func() bool { return tp.Stats().ActiveConnections == 0 })
			testtier.Eventually(t, 3*time.Second, "the browser side to close", func() bool { return fb.wsOpen.Load() == 0 })
		})
	}
}

func TestWebSocketBrowserUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	tp := newTestProxy(t, Config{})
	discovery, err := tp.Publish("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	_, resp, err := dialWS(t, wsURL(discovery, "/devtools/page/ABC"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("dial through a dead browser: %v; want 502 before the upgrade", err)
	}
	if tp.Stats().ActiveConnections != 0 {
		t.Fatal("a failed dial kept its slot")
	}
}

func TestPlanFor(t *testing.T) {
	closeErr := func(code websocket.StatusCode, reason string) error {
		return fmt.Errorf("failed to get reader: received close frame: %w", websocket.CloseError{Code: code, Reason: reason})
	}
	tooBig := fmt.Errorf("failed to read: %w: read limited at 1025 bytes", websocket.ErrMessageTooBig)
	tests := []struct {
		name         string
		res          pumpResult
		wantClient   websocket.StatusCode
		wantUpstream websocket.StatusCode
	}{
		{"client closes normally", pumpResult{from: sideClient, readErr: closeErr(1000, "")}, 0, 1000},
		{"client closes without status", pumpResult{from: sideClient, readErr: closeErr(websocket.StatusNoStatusRcvd, "")}, 0, 1000},
		{"client closes going away", pumpResult{from: sideClient, readErr: closeErr(1001, "")}, 0, 1001},
		{"client too big", pumpResult{from: sideClient, readErr: tooBig}, 1009, 0},
		{"client vanished", pumpResult{from: sideClient, readErr: io.EOF}, 0, 0},
		{"client reset", pumpResult{from: sideClient, readErr: &net.OpError{Op: "read", Err: errors.New("reset")}}, 0, 0},
		{"client protocol error", pumpResult{from: sideClient, readErr: errors.New("received header with unexpected rsv bits")}, 1002, 0},
		{"writing to browser failed", pumpResult{from: sideClient, writeErr: net.ErrClosed}, 1011, 0},
		{"browser closes", pumpResult{from: sideUpstream, readErr: closeErr(4001, "bye")}, 4001, 0},
		{"browser too big", pumpResult{from: sideUpstream, readErr: tooBig}, 1009, 0},
		{"browser vanished", pumpResult{from: sideUpstream, readErr: io.ErrUnexpectedEOF}, 1011, 0},
		{"browser protocol error", pumpResult{from: sideUpstream, readErr: errors.New("received unknown opcode")}, 1011, 0},
		{"writing to client failed", pumpResult{from: sideUpstream, writeErr: net.ErrClosed}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planFor(tt.res)
			if p.clientCode != tt.wantClient || p.upstreamCode != tt.wantUpstream {
				t.Fatalf("plan client %d upstream %d; want %d %d (%s)", p.clientCode, p.upstreamCode, tt.wantClient, tt.wantUpstream, p.why)
			}
			if len(p.clientReason) > 123 || strings.Contains(p.clientReason, "/cdp/") {
				t.Fatalf("reason %q", p.clientReason)
			}
		})
	}
	if p := planRevoked(ErrRevoked); p.clientCode != websocket.StatusGoingAway || p.clientReason != reasonBrowserGone {
		t.Fatalf("revoked plan %+v", p)
	}
	if p := planRevoked(ErrClosed); p.clientCode != websocket.StatusGoingAway || p.clientReason != reasonProxyClosed {
		t.Fatalf("closed plan %+v", p)
	}
}

func TestTruncateReason(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	got := truncateReason(long)
	if len(got) > 123 || !strings.HasPrefix(long, got) || len(got) < 120 {
		t.Fatalf("truncateReason gave %d bytes", len(got))
	}
	if truncateReason("ok") != "ok" {
		t.Fatal("short reason changed")
	}
}
