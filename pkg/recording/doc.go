// Package recording holds an agent's session as structured steps and turns
// them into tests: a smoke scenario (pkg/smoke's YAML) or a Playwright test in
// TypeScript, Python, Java or C#.
//
// The tools package records a Step for every action tool call (the tool, a
// stable target resolved when the call ran — a role and name with its nth,
// or Playwright's selector, never a snapshot ref —, the arguments with
// secrets as ${NAME}, and the page state the recorder read after the step:
// URL, title and the elements that appeared). browser_export_test and
// `cloakbrowser-mcp smoke record` call Export; pkg/smoke's --update uses
// Elements and Appeared to re-record expectations. The package is pure Go:
// it imports codegen and snapshot only.
package recording
