// Package session owns a browser for one MCP session: the current browser
// generation, its tabs and their per-page state, modal state, the restart rule
// after browser loss, and cleanup. It also holds the registry of sessions.
//
// Tool handlers call Session.Do; they never launch a browser themselves.
package session
