// Package session is the browser lifecycle of an MCP session: the Session
// that owns a browser, its Generations (one launched or attached browser
// each; a lost one is never revived), the restart rule that replaces a lost
// browser on the next call (restart.go, shared with the SharedBrowser of
// "context" isolation), remote browsers (CDP endpoints, Playwright
// servers, pools), the Registry of a multi-session transport, the idle
// close, the sweep of stale temporary directories, downloads and their
// limits, routes, tracing, and the publication of a managed CDP endpoint
// (cdp.go: the ownership proof gates every publication; the capability is
// revoked when the browser is lost).
//
// Tool handlers call Session.Do; they never launch a browser themselves.
// The pages of a generation are driven through the facade, package
// session/page: a Generation embeds a *page.Context (its tabs, cookies,
// storage state…) that it makes with a page.Env. Dependencies point one
// way: tools → session → session/page, session/watch → snapshot, cdpproxy,
// pkg/cloakbrowser, pkg/driver.
package session
