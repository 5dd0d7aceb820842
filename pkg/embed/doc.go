// Package embed runs a cloakbrowser-mcp server for Go code outside this
// repository — CI smoke tests, integration tests of an agent — and hands back
// a connected MCP client with typed helpers.
//
// Three ways to get a [Client], all bounded by a context.Context:
//
//   - [Start] runs the server in this process (no binary to build), talking
//     MCP over in-memory pipes through the same stdio code path as the binary;
//   - [StartCommand] spawns any stdio MCP server — this project's binary, or
//     another one such as @playwright/mcp — and dies with it;
//   - [Connect] joins an already running Streamable HTTP server.
//
// A Client's [Client.Call] returns a [Result] (the response text, isError,
// images); [Client.Navigate], [Client.Snapshot], [Client.Click],
// [Client.Type], [Client.Evaluate] and [Client.Screenshot] wrap the common
// tools. [Client.Close] stops what the Client started, browsers included,
// and waits for it.
//
// Package smoke (pkg/smoke) runs declarative scenarios on top of a Client.
//
// Importing embed costs the module graph of the server and mcp-go only: the
// build tooling of this repository lives in tools.mod, outside go.mod.
package embed
