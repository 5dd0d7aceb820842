package page

import (
	"context"

	"github.com/mxschmitt/playwright-go"
)

// DownloadEvent is what a tab's CDP session hears of a download while it
// runs: Playwright's Download gives its file only at the end, but
// Chromium reports the bytes received about twice a second
// (Page.downloadProgress), which is what a byte budget must be held to
// while the download streams.
type DownloadEvent struct {
	// GUID is Chromium's id of the download.
	GUID string
	// URL and Suggested (the file name the page suggested) are set when it
	// begins (State "begin").
	URL, Suggested string
	// Received is the bytes received so far.
	Received int64
	// State is "begin", "inProgress", "completed" or "canceled".
	State string
}

// watchDownloads subscribes to the download events of s, the tab's own CDP
// session, and enables its Page domain (which sends them) in the
// background: nothing here waits for the page.
func (t *Tab) watchDownloads(s playwright.CDPSession) {
	hear := t.c.env.OnDownloadEvent
	if hear == nil {
		return
	}
	s.On("Page.downloadWillBegin", func(m map[string]any) {
		e := DownloadEvent{State: "begin"}
		e.GUID, _ = m["guid"].(string)
		e.URL, _ = m["url"].(string)
		e.Suggested, _ = m["suggestedFilename"].(string)
		if e.GUID != "" {
			hear(t, e)
		}
	})
	s.On("Page.downloadProgress", func(m map[string]any) {
		e := DownloadEvent{}
		e.GUID, _ = m["guid"].(string)
		e.State, _ = m["state"].(string)
		if n, ok := m["receivedBytes"].(float64); ok {
			e.Received = int64(n)
		}
		if e.GUID != "" {
			hear(t, e)
		}
	})
	t.c.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cdpAttachTimeout)
		defer cancel()
		_, _ = call(ctx, t.c, "watch downloads", stopOn{}, func() (any, error) { return sendCDP(ctx, s, 0, "Page.enable", map[string]any{}) })
	})
}

// WatchDownloads makes sure the tab hears of its downloads as they run
// (DownloadEvent) before the caller starts one: its CDP session is open
// and its Page domain enabled.
func (t *Tab) WatchDownloads(ctx context.Context) error {
	_, err := t.CDP(ctx, "Page.enable", nil)
	return err
}
