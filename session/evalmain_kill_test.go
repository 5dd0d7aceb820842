package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestEvaluateMainBrowserKilled: SIGKILL while the agent's function waits
// on a promise that never settles (over the tab's CDP session): the call
// answers ErrBrowserGone and no goroutine is left waiting on DevTools.
func TestEvaluateMainBrowserKilled(t *testing.T) {
	t.Skip("TODO(issue 24): a Runtime.getProperties read in flight when the browser is killed is never answered by Playwright 1.64.1 (its CDP session's pending calls are not rejected on disconnect) and its goroutine stays; browser_evaluate keeps Playwright's evaluate until that is solved")
	noGoroutineLeaks(t)
	privateTmp(t)
	s := newCDPSession(t, cdpOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := mustGeneration(t, s)
	started := make(chan struct{})
	answer := make(chan error, 1)
	go func() {
		answer <- s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
			tab, err := g.CurrentTab(ctx)
			if err != nil {
				return err
			}
			close(started)
			_, err = tab.EvaluateMain(ctx, `() => new Promise(() => {})`)
			return err
		})
	}()
	<-started
	time.Sleep(300 * time.Millisecond) // let the promise be polled
	killBrowser(t, g)
	select {
	case err := <-answer:
		if !errors.Is(err, session.ErrBrowserGone) && !g.Lost() {
			t.Fatalf("answered %v, want the browser gone", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no answer after the kill")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
