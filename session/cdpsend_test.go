package session_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestTimedSendReachesDriver: a CDP command of ours that the browser
// never answers (a promise that never settles) ends when its context does,
// and so does the goroutine that sent it, while the tab is still open: the
// deadline reached the driver (metadata.timeout through playwright-go's
// channel, see session/page/cdpsend.go). Without it the send would wait for
// an answer that never comes, and the goroutine would outlive the call.
func TestTimedSendReachesDriver(t *testing.T) {
	noGoroutineLeaks(t)
	s := newContextSession(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	err := s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		// Open the tab's CDP session first, so that what runs from here on
		// is the one command.
		if _, err := tab.CDP(ctx, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil {
			return err
		}
		quiet := goleak.IgnoreCurrent()
		short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
		defer stop()
		_, err = tab.CDP(short, "Runtime.evaluate", map[string]any{
			"expression": "new Promise(() => {})", "awaitPromise": true,
		})
		if err == nil {
			t.Error("a promise that never settles was answered")
		}
		// The sender's goroutine ends with the driver's timeout answer, with
		// the tab and its CDP session still open.
		if err := goleak.Find(quiet); err != nil {
			t.Errorf("the send outlived its context: %v", err)
		}
		// The session still works.
		v, err := tab.CDP(ctx, "Runtime.evaluate", map[string]any{"expression": "6 * 7", "returnByValue": true})
		if err != nil {
			return err
		}
		if r, _ := v.(map[string]any)["result"].(map[string]any); r["value"] != float64(42) {
			t.Errorf("after the timed-out command: %v, want value 42", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
