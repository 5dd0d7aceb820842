package tools

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestProgressTicker: with a token, nothing for the first second, then one
// notification a second with increasing progress and the tool's detail;
// without a token, nothing at all.
func TestProgressTicker(t *testing.T) {
	cases := []struct {
		name  string
		token mcp.ProgressToken
		want  int
	}{
		{"no token", nil, 0},
		{"token", "tok", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var sent []map[string]any
				env := &Env{Progress: func(_ context.Context, p map[string]any) error {
					mu.Lock()
					sent = append(sent, p)
					mu.Unlock()
					return nil
				}}
				req := mcp.CallToolRequest{}
				if tc.token != nil {
					req.Params.Meta = &mcp.Meta{ProgressToken: tc.token}
				}
				args := Args{m: map[string]any{"text": "Done"}}
				stop := env.startProgress(t.Context(), "browser_wait_for", req, args)
				time.Sleep(999 * time.Millisecond)
				synctest.Wait()
				mu.Lock()
				early := len(sent)
				mu.Unlock()
				if early != 0 {
					t.Fatalf("%d notifications before 1 s", early)
				}
				time.Sleep(2500 * time.Millisecond)
				synctest.Wait()
				stop()
				if len(sent) != tc.want {
					t.Fatalf("sent %d, want %d: %v", len(sent), tc.want, sent)
				}
				for i, p := range sent {
					if p["progressToken"] != tc.token || p["progress"] != i+1 {
						t.Errorf("notification %d: %v", i, p)
					}
					if msg, _ := p["message"].(string); !strings.Contains(msg, `waiting for text "Done"`) {
						t.Errorf("message %q", msg)
					}
				}
			})
		})
	}
}

func TestProgressDetail(t *testing.T) {
	long := strings.Repeat("x", 200)
	cases := []struct {
		name, tool string
		args       map[string]any
		want       string
		total      int
	}{
		{"navigate", "browser_navigate", map[string]any{"url": "https://example.com/"}, `loading "https://example.com/"`, 0},
		{"navigate long url is cut", "browser_navigate", map[string]any{"url": long}, `loading "` + strings.Repeat("x", 60) + `…"`, 0},
		{"wait time", "browser_wait_for", map[string]any{"time": 3.0}, "waiting 3 s", 3},
		{"wait gone", "browser_wait_for", map[string]any{"textGone": "Loading"}, `waiting for text "Loading" to disappear`, 0},
		{"trace", "browser_stop_tracing", nil, "saving the trace", 0},
		{"other", "browser_click", nil, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, total := progressDetail(tc.tool, Args{m: tc.args})
			if got != tc.want || total != tc.total {
				t.Fatalf("got %q %d, want %q %d", got, total, tc.want, tc.total)
			}
		})
	}
}
