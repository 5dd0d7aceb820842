// Package cli holds the commands of cloakbrowser-mcp that are not serving:
// install (the Playwright driver and the CloakBrowser binary), doctor (what
// the server would use, from where, and whether it launches) and version.
//
// It sits beside the serving flow (client → transport → policy → server →
// tools → session), not in it: cmd/cloakbrowser-mcp parses the flags and
// calls either server.Run or one of these, which reuse the server's own
// option builders (server.DriverOptions, server.CloakOptions,
// server.LaunchConfig) so doctor checks exactly what serve would launch.
package cli
