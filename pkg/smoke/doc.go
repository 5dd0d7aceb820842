// Package smoke runs declarative smoke scenarios — MCP tool calls with
// expectations, written in YAML or JSON — against a browser MCP server, and
// reports them as progress lines, a summary table, JUnit XML and JSON.
//
// It sits on top of package embed: [Run] takes one [Scenario] and a
// [Starter] that gives it a connected embed.Client (by default a
// cloakbrowser-mcp server in this process). The `cloakbrowser-mcp smoke`
// command ([Main]) adds the flags CI pipelines use: files, --junit,
// --report-json, --artifacts, --parallel, --server-url and --server-cmd;
// --update re-records a scenario's url, title and snapshot_has expectations
// ([Update]), and `smoke record` turns a --save-session steps log into a
// scenario or a Playwright test (pkg/recording, as browser_export_test does).
//
// A scenario (see docs/smoke.md for the whole format):
//
//	name: todo list adds an item
//	env: {BASE: "http://127.0.0.1:8080"}   # defaults; the process environment wins
//	steps:
//	  - tool: browser_navigate
//	    args: {url: "${BASE}/todo.html"}
//	  - tool: browser_type
//	    args: {target: {role: textbox, name: "New item"}, text: milk, submit: true}
//	  - tool: browser_snapshot
//	    expect: {snapshot_has: [{role: listitem, name: milk}]}
//
// A target given as {role, name[, nth]} is resolved to a ref from a fresh
// snapshot just before the call, so scenarios never hard-code refs.
package smoke
