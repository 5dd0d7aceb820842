package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestHostilePagesAnswerWithSentinels: on a tab, frames whose server never
// answers are counted and skipped by the snapshot, and a busy main thread
// ends navigations and snapshots with ErrNotResponding (callers branch on
// it), well before the deadline the test gives them; the tab then
// navigates normally.
func TestHostilePagesAnswerWithSentinels(t *testing.T) {
	h := mcptest.HostilePages(t)
	s := newContextSession(t)
	err := s.Do(t.Context(), func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		bounded := func(d time.Duration) (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, d) }

		c, cancel := bounded(10 * time.Second)
		defer cancel()
		if _, err := tab.Navigate(c, h.URL+mcptest.HostileSilentFrames); err != nil {
			t.Fatalf("navigate to silent frames: %v", err)
		}
		if frames, _ := tab.StillLoading(); frames != 2 {
			t.Errorf("StillLoading frames = %d, want 2", frames)
		}
		c, cancel = bounded(4 * time.Second)
		defer cancel()
		snap, err := tab.AISnapshot(c, page.SnapshotOptions{})
		if err != nil {
			t.Fatalf("snapshot with silent frames: %v", err)
		}
		if snap.FramesNotLoaded != 2 || !strings.Contains(snap.Text, `button "Press me"`) {
			t.Errorf("FramesNotLoaded = %d, text:\n%s", snap.FramesNotLoaded, snap.Text)
		}

		c, cancel = bounded(15 * time.Second)
		defer cancel()
		if _, err := tab.Navigate(c, h.URL+mcptest.HostileBusyAfterLoad); err != nil {
			t.Fatalf("navigate to busy-after-load: %v", err)
		}
		c, cancel = bounded(6 * time.Second)
		defer cancel()
		if _, err := tab.AISnapshot(c, page.SnapshotOptions{}); !errors.Is(err, page.ErrNotResponding) {
			t.Fatalf("snapshot of a busy page: %v, want ErrNotResponding", err)
		}
		if !tab.Busy() {
			t.Error("Busy() is false after the page missed a probe")
		}

		c, cancel = bounded(15 * time.Second)
		defer cancel()
		_, err = tab.Navigate(c, h.URL+mcptest.HostileBusyBeforeLoad)
		if !errors.Is(err, page.ErrNotResponding) {
			t.Fatalf("navigate to busy-before-load: %v, want ErrNotResponding", err)
		}

		c, cancel = bounded(15 * time.Second)
		defer cancel()
		if _, err := tab.Navigate(c, h.URL+mcptest.HostilePlain); err != nil {
			t.Fatalf("navigate away from a busy page: %v", err)
		}
		if tab.Busy() {
			t.Error("Busy() still true on a new document")
		}
		c, cancel = bounded(6 * time.Second)
		defer cancel()
		snap, err = tab.AISnapshot(c, page.SnapshotOptions{})
		if err != nil || !strings.Contains(snap.Text, "An ordinary page.") {
			t.Fatalf("snapshot after leaving the busy page: %v\n%v", err, snap)
		}
		// A same-document navigation is a navigation but keeps the
		// document's DOMContentLoaded: nothing waits for it again.
		nav := tab.LastNavSeq()
		if !tab.DOMReady() {
			t.Fatal("DOMReady() is false on a loaded page")
		}
		if _, err := tab.Evaluate(ctx, "() => history.pushState({}, '', '#moved')"); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(5 * time.Second); tab.LastNavSeq() == nav && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond) // the event may trail the call's answer
		}
		if !strings.HasSuffix(tab.URL(), "#moved") || tab.LastNavSeq() == nav {
			t.Fatalf("pushState was not seen as a navigation: %s (nav %d → %d)", tab.URL(), nav, tab.LastNavSeq())
		}
		if !tab.DOMReady() {
			t.Error("DOMReady() turned false on a same-document navigation")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
