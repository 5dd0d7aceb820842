// Package tools implements the MCP tools: one file per family, each tool with
// the name and input schema of @playwright/mcp 0.0.83 where upstream has it,
// plus this project's families and the two cloakbrowser_* info tools.
//
// A handler decodes and validates its arguments, asks its session for the
// current browser generation (session.Session.Do), acts with playwright-go,
// and answers through the response builder in upstream's markdown sections.
package tools
