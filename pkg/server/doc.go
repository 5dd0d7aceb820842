// Package server builds the MCP server from a Config and serves it over stdio
// or Streamable HTTP. It owns the process-wide pieces (the Playwright driver,
// the resolved browser binary) and the sessions, and tears them down in order.
//
// In the flow client → transport → policy → server → tools → session it is
// the transport and the server: the requests of an HTTP client pass
// pkg/httpguard's policy first, then reach mcp-go, whose tool calls run the
// tools package against a session of the session package.
//
// The files come in two families:
//
//   - The MCP server: server.go (New, Run, stdio, Close), resources.go (the
//     files tools write, as MCP resources), notify.go (session notices as
//     log notifications), cancel.go (no response to a cancelled call),
//     cdp.go (CDP endpoints, the initialize _meta keys, bridge info),
//     getconfig.go (browser_get_config's redacted configuration),
//     binary.go (the browser binary, resolved once), sweep.go (what dead
//     servers left in the temp dir) and log.go (the libraries' logs into
//     zerolog).
//   - The Streamable HTTP transport, http*.go: http.go (listener, start-up,
//     shutdown, probes), http_endpoint.go (the MCP endpoint's checks and
//     session routing), http_admission.go (initialize: slots, quotas, CDP
//     leases), http_session.go (session IDs, one GET stream per session),
//     http_eventstore.go (resumable streams) and http_fleet.go (Redis fleet
//     forwarding and the remote browser pool). It stays in this package: it
//     shares the server's driver, session configuration, CDP leases, call
//     cancellation and lifecycle lock, and the server finds each call's
//     session through it.
//
// The CLI commands that do not serve (install, doctor, version) are in
// pkg/cli.
package server
