package server_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// consolePage logs ?m= with console.error when it loads.
func consolePage(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>console</title><p>hello</p>
<script>console.error("page says " + new URLSearchParams(location.search).get("m"))</script>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// logWith matches a notifications/message whose data contains text.
func logWith(text string) func(mcp.JSONRPCNotification) bool {
	return func(nt mcp.JSONRPCNotification) bool {
		if nt.Method != "notifications/message" {
			return false
		}
		_, data := mcptest.LogText(nt)
		return strings.Contains(data, text)
	}
}

// TestMCPLoggingAndProgress drives one stdio server (protocol 2025-11-25,
// where logging/setLevel exists) through a real client: console errors as
// log notifications filtered by the client's level, setLevel's bad input,
// and progress notifications only for a call that asks for them.
func TestMCPLoggingAndProgress(t *testing.T) {
	srv := consolePage(t)
	c, _ := startInProcess(t, mcptest.Options{ProtocolVersion: mcp.ProtocolVersion20251125})
	if c.Init.Capabilities.Logging == nil {
		t.Fatalf("initialize: no logging capability: %+v", c.Init.Capabilities)
	}
	notes := mcptest.Record(c.Client)
	ctx := t.Context()

	t.Run("setLevel with an unknown level is invalid params", func(t *testing.T) {
		err := mcptest.SetLevel(ctx, c.Client, "verbose")
		if !errors.Is(err, mcp.ErrInvalidParams) {
			t.Fatalf("setLevel verbose: %v, want invalid params", err)
		}
		if err := mcptest.SetLevel(ctx, c.Client, "info"); err != nil {
			t.Fatalf("setLevel info: %v", err)
		}
	})

	t.Run("console error arrives at error level, not under critical", func(t *testing.T) {
		if err := mcptest.SetLevel(ctx, c.Client, "error"); err != nil {
			t.Fatal(err)
		}
		c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/?m=first"})
		nt, _ := notes.Wait(t, 10*time.Second, "log of the first console error", logWith("page says first"))
		if level, data := mcptest.LogText(nt); level != "error" || !strings.Contains(data, "console error") {
			t.Fatalf("first console error: level %q data %q", level, data)
		}
		if logger, _ := nt.Params.AdditionalFields["logger"].(string); logger != "cloakbrowser-mcp/console" {
			t.Errorf("logger %q", logger)
		}

		if err := mcptest.SetLevel(ctx, c.Client, "critical"); err != nil {
			t.Fatal(err)
		}
		c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/?m=second"})
		// Back to error, and a third console error: notifications keep
		// their order, so had the second been sent it would come first.
		if err := mcptest.SetLevel(ctx, c.Client, "error"); err != nil {
			t.Fatal(err)
		}
		c.MustCall(t, "browser_evaluate", map[string]any{"function": `() => console.error("page says third")`})
		_, before := notes.Wait(t, 10*time.Second, "log of the third console error", logWith("page says third"))
		for _, nt := range before {
			if logWith("page says second")(nt) {
				t.Fatalf("a console error was sent while the level was critical: %v", nt.Params.AdditionalFields)
			}
		}
	})

	t.Run("progress only with a token", func(t *testing.T) {
		// Without a token: a 2 s wait, nothing sent for it.
		if _, err := mcptest.CallWithProgress(ctx, c.Client, "browser_wait_for", map[string]any{"time": 2}, nil); err != nil {
			t.Fatal(err)
		}
		res, err := mcptest.CallWithProgress(ctx, c.Client, "browser_wait_for", map[string]any{"time": 3}, "wait-3")
		if err != nil || res.IsError {
			t.Fatalf("wait 3 s: %v %s", err, mcptest.Text(res))
		}
		// Ticks at 1 s and 2 s; the last may still be on its way behind the
		// response.
		notes.Wait(t, 5*time.Second, "the second progress notification", func(nt mcp.JSONRPCNotification) bool {
			return nt.Method == "notifications/progress" && nt.Params.AdditionalFields["progress"] == float64(2)
		})
		progress := notes.All("notifications/progress")
		last := 0.0
		for i, nt := range progress {
			f := nt.Params.AdditionalFields
			if f["progressToken"] != "wait-3" {
				t.Fatalf("progress %d for token %v: only the call with token wait-3 may get progress", i, f["progressToken"])
			}
			p, _ := f["progress"].(float64)
			if p <= last {
				t.Errorf("progress %d: %v after %v, must increase", i, p, last)
			}
			last = p
			msg, _ := f["message"].(string)
			if !strings.HasPrefix(msg, "browser_wait_for: ") || !strings.Contains(msg, "waiting 3 s") {
				t.Errorf("progress message %q", msg)
			}
		}
		t.Logf("%d progress notifications, e.g. %v", len(progress), progress[0].Params.AdditionalFields["message"])
	})
}
