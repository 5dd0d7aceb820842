package tools

import (
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// Load waiting after a navigation: the page is usable at DOMContentLoaded;
// after that we wait for the load event, but stop early once the network has
// been quiet for loadQuiet (frames or requests that never finish must not
// hold the agent for loadMax, as they do upstream).
const (
	loadMax   = 5 * time.Second
	loadQuiet = 300 * time.Millisecond
)

// gotoPage navigates a tab and waits, bounded, for it to be ready.
func gotoPage(tab *session.Tab, url string) (playwright.Response, error) {
	resp, err := tab.Page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded})
	if err != nil {
		return nil, err
	}
	waitLoaded(tab)
	return resp, nil
}

// waitLoaded waits for the load event or a quiet network, at most loadMax.
// It watches the tab's events rather than calling WaitForLoadState, so no
// Playwright call outlives it.
func waitLoaded(tab *session.Tab) {
	deadline := time.Now().Add(loadMax)
	for !tab.Loaded() && tab.NetQuietFor() < loadQuiet && time.Now().Before(deadline) {
		select {
		case <-tab.ModalOpened():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}
