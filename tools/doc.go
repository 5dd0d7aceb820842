// Package tools implements the MCP tools: one file per family, each tool with
// the name and input schema of @playwright/mcp 0.0.83 where upstream has it,
// plus this project's families and the two cloakbrowser_* info tools.
//
// A handler decodes and validates its arguments, asks its session for the
// current browser generation (session.Session.Do), acts through the
// session's facade — the methods of session.Generation, session.Tab and
// session.Element, which hold the Playwright objects unexported and run
// every call through session's door (racing it against the caller's
// context, the loss of the browser and a blocking dialog) — and answers
// through the response builder in upstream's markdown sections. This
// package never imports playwright-go.
package tools
