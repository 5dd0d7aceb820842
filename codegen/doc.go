// Package codegen prints the Playwright code an action ran, as
// @playwright/mcp shows it in its "### Ran Playwright code" section: a
// Playwright selector (what the driver resolved an element to, e.g.
// internal:role=button[name="Save"i]) becomes the locator a test would use
// (getByRole('button', { name: 'Save' })) in TypeScript, Python, Java or C#,
// and an action on it becomes one line of that language.
//
// It is a port of Playwright's isomorphic locatorGenerators.ts and the
// recorder's language generators (the parts upstream's tools use), pure Go,
// importing nothing else of this module. Tools call it after the session has
// resolved the element.
package codegen
