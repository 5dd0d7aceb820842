package tools

import (
	"fmt"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// locateRole resolves a Role-mode ref (r12) to getByRole(role, {name,
// exact}).nth(n) on the tab's main frame.
func (c *tabCall) locateRole(ref string) (playwright.Locator, error) {
	tree, _ := c.tab.Value(keyRoleTree).(*snapshot.Tree)
	if tree == nil {
		return nil, fmt.Errorf("Ref %s: no role snapshot of this tab; take one with browser_snapshot mode=role", ref)
	}
	rr, ok := tree.RoleRef(ref)
	if !ok {
		return nil, fmt.Errorf("Ref %s not found in the last role snapshot; take a new one with browser_snapshot mode=role", ref)
	}
	opts := playwright.PageGetByRoleOptions{}
	if rr.Name != "" {
		opts.Name = rr.Name
		opts.Exact = playwright.Bool(true)
	}
	loc := c.tab.Page.GetByRole(playwright.AriaRole(rr.Role), opts).Nth(rr.Nth)
	if n, err := loc.Count(); err != nil || n == 0 {
		return nil, fmt.Errorf("Ref %s (%s %q) is no longer on the page; take a new snapshot", ref, rr.Role, rr.Name)
	}
	return loc, nil
}

// markAttr is set on an element to hand an ARIA-mode ref to Playwright.
const markAttr = "data-cloakmcp-ref"

// locateARIA resolves an ARIA-mode ref (ax12) through its DOM node: the
// node is resolved over CDP and marked so a Playwright locator can find it.
func (c *tabCall) locateARIA(ref string) (playwright.Locator, error) {
	tree, _ := c.tab.Value(keyARIATree).(*snapshot.Tree)
	if tree == nil {
		return nil, fmt.Errorf("Ref %s: no aria snapshot of this tab; take one with browser_snapshot mode=aria", ref)
	}
	backend, ok := tree.Backend(ref)
	if !ok || backend == 0 {
		return nil, fmt.Errorf("Ref %s not found in the last aria snapshot, or it has no DOM node; take a new snapshot", ref)
	}
	cdp, err := c.cdpSession()
	if err != nil {
		return nil, err
	}
	res, err := cdp.Send("DOM.resolveNode", map[string]any{"backendNodeId": backend})
	if err != nil {
		return nil, fmt.Errorf("Ref %s is no longer on the page; take a new snapshot", ref)
	}
	obj, _ := res.(map[string]any)["object"].(map[string]any)
	id, _ := obj["objectId"].(string)
	if id == "" {
		return nil, fmt.Errorf("Ref %s is no longer on the page; take a new snapshot", ref)
	}
	// Text nodes and the like: act on their element.
	_, err = cdp.Send("Runtime.callFunctionOn", map[string]any{
		"objectId":            id,
		"functionDeclaration": `function(a, r) { const el = this.nodeType === 1 ? this : this.parentElement; if (el) el.setAttribute(a, r); }`,
		"arguments":           []any{map[string]any{"value": markAttr}, map[string]any{"value": ref}},
	})
	_, _ = cdp.Send("Runtime.releaseObject", map[string]any{"objectId": id})
	if err != nil {
		return nil, fmt.Errorf("Ref %s: %s", ref, friendlyError(err))
	}
	return c.tab.Page.Locator(fmt.Sprintf("[%s=%q]", markAttr, ref)), nil
}
