// Package page is the Playwright facade: everything that drives one page of
// a browser context, and the context's own operations.
//
//   - Tab is one page with its state (console, requests, modal states,
//     events, load states, the last snapshot and its refs, emulation); it is
//     wired to its page's events when it is made (tab.go: wire*).
//   - Element is a located element (a snapshot ref or a selector) and Step
//     an agent action on it or on the tab, run by Tab.Act, which then
//     settles (waits for the requests and navigation it set off).
//   - The door (door.go) races every Playwright call against the caller's
//     context, the loss of the browser and a dialog or file chooser that
//     blocks the page, on goroutines the Context owns and Context.Drain
//     waits for.
//   - Context wraps one playwright.BrowserContext: its tabs (which is
//     selected, opening them, and replacing the page of a crashed or stuck
//     one: stuck.go) and the context-wide operations (cookies, storage
//     state, permissions, geolocation, offline).
//   - The watch (session/watch) runs in an isolated world of each tab's
//     main frame; watch.go here is the tab's side of it.
//   - WebMCP (webmcp.go): the tools a tab's page registers, heard and
//     called over the tab's own CDP session, bounded as untrusted input.
//
// Where it sits: tools → session (the lifecycle: Session, Generation, the
// restart rule) → page → session/watch, snapshot, playwright-go. This
// package never imports session: what a tab needs from its generation (the
// lost channel, timeouts, logger, ref cache, endpoint, hooks for console,
// crash and download events) comes in an Env the generation fills in when
// it makes its Context, and a Generation embeds its *Context, so tool
// handlers reach tabs and context-wide operations through the generation.
package page
