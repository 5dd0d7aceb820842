package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// waitNever is a browser_wait_for that would run to its 30 s bound.
var waitNever = map[string]any{"text": "this text never appears"}

// TestCancelStdio cancels a browser_wait_for in flight over stdio: the
// server sends no response for its id, later calls work at once, and
// cancelling an unknown or finished id is ignored.
func TestCancelStdio(t *testing.T) {
	browserEnv(t)
	r := mcptest.StartRawInProcess(t, mcptest.Options{
		Args: []string{"--no-download", "--log-level", "debug", "--output-dir", filepath.Join(t.TempDir(), "out")},
	})
	call := func(id any, name string, args map[string]any, meta map[string]any) {
		params := map[string]any{"name": name, "arguments": args}
		if meta != nil {
			params["_meta"] = meta
		}
		r.Send(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	}
	cancel := func(id any) {
		r.Send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id, "reason": "test"}})
	}
	response := func(id any) func(map[string]any) bool {
		return func(m map[string]any) bool { return m["id"] == id && m["method"] == nil }
	}

	// A finished request: cancelling it afterwards changes nothing.
	call(1.0, "browser_evaluate", map[string]any{"function": "() => 1 + 1"}, nil)
	r.Next(t, 60*time.Second, "response 1", response(1.0))
	cancel(1.0)
	cancel("no-such-request")

	// The request to cancel, with a progress token so we know it is in
	// flight (the first tick comes after 1 s).
	call("wait", "browser_wait_for", waitNever, map[string]any{"progressToken": "p"})
	r.Next(t, 10*time.Second, "progress of the wait", func(m map[string]any) bool { return m["method"] == "notifications/progress" })
	cancel("wait")
	start := time.Now()
	call(2.0, "browser_evaluate", map[string]any{"function": "() => document.title + 'ok'"}, nil)
	res := r.Next(t, 10*time.Second, "response 2", response(2.0))
	t.Logf("next call answered %v after the cancel", time.Since(start).Round(time.Millisecond))
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "ok") || strings.Contains(string(b), `"isError":true`) {
		t.Fatalf("call after the cancel: %s", b)
	}
	// The server logs when it drops the cancelled response; after that it
	// cannot come any more.
	testtier.Eventually(t, 10*time.Second, "the server to drop the cancelled call's response", func() bool {
		return strings.Contains(r.Stderr.String(), "dropped the response of a cancelled request")
	})
	r.Send(t, map[string]any{"jsonrpc": "2.0", "id": "ping", "method": "ping"})
	r.Next(t, 10*time.Second, "ping response", response("ping"))
	for _, m := range r.Seen() {
		if m["id"] == "wait" {
			t.Fatalf("a response for the cancelled request was sent: %v", m)
		}
	}
}

// TestCancelHTTP cancels a browser_wait_for in flight over Streamable HTTP
// with notifications/cancelled on a second POST: the first POST's stream
// ends without a response for its id, and the session's next call works.
func TestCancelHTTP(t *testing.T) {
	browserEnv(t)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})
	c := h.Connect(t, mcptest.ConnectOptions{})
	c.MustCall(t, "browser_evaluate", map[string]any{"function": "() => 1"}) // the browser is up

	post := func(ctx context.Context, msg any) *http.Response {
		b, _ := json.Marshal(msg)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", c.SessionID)
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ctx, stop := context.WithTimeout(t.Context(), 60*time.Second)
	defer stop()
	resp := post(ctx, map[string]any{"jsonrpc": "2.0", "id": "wait", "method": "tools/call", "params": map[string]any{
		"name": "browser_wait_for", "arguments": waitNever, "_meta": map[string]any{"progressToken": "p"},
	}})
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("a call with a progress token should stream: %d %s", resp.StatusCode, ct)
	}
	events := make(chan string, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	var seen []string
	for first := true; first; {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("stream ended before any progress: %v", seen)
			}
			seen = append(seen, e)
			first = !strings.Contains(e, "notifications/progress")
		case <-ctx.Done():
			t.Fatal("no progress on the stream")
		}
	}
	cr := post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "wait"}})
	cr.Body.Close()
	if cr.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel notification: %d", cr.StatusCode)
	}
	for e := range events { // until the stream ends
		seen = append(seen, e)
	}
	if ctx.Err() != nil {
		t.Fatal("the cancelled call's stream did not end")
	}
	for _, e := range seen {
		var m map[string]any
		if json.Unmarshal([]byte(e), &m) == nil && m["id"] == "wait" {
			t.Fatalf("a response for the cancelled request was sent: %s", e)
		}
	}
	start := time.Now()
	ctx2, stop2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop2()
	req := mcp.CallToolRequest{}
	req.Params.Name = "browser_evaluate"
	req.Params.Arguments = map[string]any{"function": "() => 'after ' + 'cancel'"}
	res, err := c.CallTool(ctx2, req)
	if err != nil || res.IsError || !strings.Contains(mcptest.Text(res), "after cancel") {
		t.Fatalf("call after the cancel: %v %s", err, mcptest.Text(res))
	}
	t.Logf("next call answered %v after the cancelled stream ended", time.Since(start).Round(time.Millisecond))
}
