package session_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestRefsSurviveANewConnection: refs of an AI snapshot taken through one
// connection to a browser resolve on the page object of a new connection to
// the same browser (a new generation attached to the same target), without a
// new snapshot, through the session's target-keyed ref cache.
func TestRefsSurviveANewConnection(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>refs</title><h1>Refs</h1>
<button onclick="document.querySelector('#out').textContent='first'">Go</button>
<button onclick="document.querySelector('#out').textContent='second'">Go</button>
<p id="out">none</p>`)
	}))
	t.Cleanup(srv.Close)
	endpoint := mcptest.RemoteChromium(t)
	s := session.New(t.Name(), mcptest.SharedDriver(t), session.Config{
		CDPEndpoint: endpoint,
		Log:         zerolog.New(zerolog.NewTestWriter(t)).With().Timestamp().Logger(),
	})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	g1, err := s.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tab1, err := g1.CurrentTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A page before the one acted on: on a tab's later pages Playwright
	// prefixes the main frame's refs too (f1e3), which the cache must still
	// take for the main frame's.
	for _, u := range []string{srv.URL + "/before", srv.URL} {
		if _, err := tab1.Navigate(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := tab1.AISnapshot(ctx, page.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The second "Go" button: resolving it needs nth, not just role+name.
	m := regexp.MustCompile(`button "Go" \[ref=((?:f\d+)?e\d+)\]`).FindAllStringSubmatch(snap.Text, -1)
	if len(m) != 2 {
		t.Fatalf("want two Go buttons in\n%s", snap.Text)
	}
	ref := m[1][1]
	if !strings.HasPrefix(ref, "f") {
		t.Fatalf("ref %s of the tab's second page has no frame prefix: the test no longer covers prefixed refs of the main frame", ref)
	}
	target1, err := tab1.TargetID(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A new connection: the old generation disconnects, the browser and its
	// page stay; the next generation wraps the same target in a new page
	// object that has no aria-ref map of its own.
	if err := s.CloseBrowser(ctx); err != nil {
		t.Fatal(err)
	}
	g2, err := s.Generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g2 == g1 || g2.Remote() != endpoint {
		t.Fatalf("want a new generation attached to %s, got %v (remote %q)", endpoint, g2 == g1, g2.Remote())
	}
	var tab2 *page.Tab
	for _, tb := range g2.Tabs() {
		if tb.URL() == srv.URL+"/" {
			tab2 = tb
		}
	}
	if tab2 == nil {
		t.Fatalf("the page did not survive the reconnect: tabs %d", len(g2.Tabs()))
	}
	if id, err := tab2.TargetID(ctx); err != nil || id != target1 {
		t.Fatalf("target %q (%v), want the same target %q", id, err, target1)
	}
	if tab2.LastSnapshot() != nil {
		t.Fatal("the new page object already has a snapshot: the test would not exercise the cache")
	}
	el, err := tab2.Locate(ctx, ref)
	if err != nil {
		t.Fatalf("old ref %s on the re-acquired page: %v", ref, err)
	}
	if err := tab2.Act(ctx, el.Click(page.ClickOptions{})); err != nil {
		t.Fatal(err)
	}
	got, err := tab2.Evaluate(ctx, `() => document.querySelector('#out').textContent`)
	if err != nil || got != "second" {
		t.Fatalf("after clicking %s: #out = %v (%v), want \"second\" (the second Go button)", ref, got, err)
	}
	// A ref the cache does not know still fails at once with a clear error.
	if _, err := tab2.Locate(ctx, "e999"); err == nil || !strings.Contains(err.Error(), "e999") {
		t.Fatalf("unknown ref: %v", err)
	}
}
