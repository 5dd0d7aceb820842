package session_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestIdleBlankIsOnlyAScriptlessBlankPage: a navigation from a tab's blank
// page is not watched for a stuck page (whose script it would stop: a
// stop with no script running ends the next one to run, Playwright's or
// the new document's, which under load left navigations and snapshots
// hanging). Only a page that can run no script counts: about:blank in a
// tab of ours, no code of the agent's run in it; not a loaded page, not a
// blank page the agent's code ran in, not a popup its opener can write into.
func TestIdleBlankIsOnlyAScriptlessBlankPage(t *testing.T) {
	testtier.BrowserTier(t)
	url := serveHTML(t, map[string]string{"/": `<!doctype html><title>Opener</title><button onclick="window.open('')">Open</button>`})
	s := newContextSession(t)
	err := s.Do(t.Context(), func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		if !tab.IdleBlank() {
			t.Errorf("a new tab's about:blank (%s) is not idle", tab.URL())
		}
		if _, err := tab.Evaluate(ctx, "() => 1"); err != nil {
			return err
		}
		if tab.IdleBlank() {
			t.Error("about:blank after the agent's evaluate is still idle")
		}
		if _, err := tab.Navigate(ctx, url+"/"); err != nil {
			return err
		}
		if tab.IdleBlank() {
			t.Errorf("a loaded page (%s) is idle", tab.URL())
		}
		fresh, err := g.NewTab(ctx)
		if err != nil {
			return err
		}
		if !fresh.IdleBlank() {
			t.Error("a tab opened by browser_tabs is not idle")
		}
		if _, err := tab.Evaluate(ctx, "() => { window.open(''); }"); err != nil {
			return err
		}
		var popup *page.Tab
		testtier.EventuallyState(t, 10*time.Second, "the popup's tab", func() (bool, string) {
			for _, x := range g.Tabs() {
				if x != tab && x != fresh {
					popup = x
				}
			}
			return popup != nil, fmt.Sprintf("%d tabs", len(g.Tabs()))
		})
		if popup.IdleBlank() {
			t.Errorf("a popup's about:blank (%s) is idle: its opener can write a script into it", popup.URL())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
