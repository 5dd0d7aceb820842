package page

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// tabRefs are the trees behind a tab's refs.
type tabRefs struct {
	// ownAI: this page object took an AI snapshot, so Playwright's aria-ref
	// map is the truth about e12 refs and the cache is never consulted.
	ownAI bool
	aria  *snapshot.Tree
	role  *snapshot.Tree
}

// refKey is the tab's key in the session's ref cache: the browser endpoint
// (for a browser someone else started) and the page's DevTools target id.
func (t *Tab) refKey(ctx context.Context) (string, error) {
	id, err := t.TargetID(ctx)
	if err != nil {
		return "", err
	}
	return snapshot.CacheKey(t.c.env.Endpoint, id), nil
}

// storeRefs updates the tab's entry in the session's ref cache.
func (t *Tab) storeRefs(ctx context.Context, update func(*snapshot.RefCacheEntry)) {
	key, err := t.refKey(ctx)
	if err != nil {
		t.c.env.Log.Debug().Err(err).Msg("ref cache: no target id")
		return
	}
	t.c.env.RefMu.Lock()
	defer t.c.env.RefMu.Unlock()
	e, _ := t.c.env.Refs.Get(key)
	update(&e)
	t.c.env.Refs.Put(key, e)
}

// cachedRefs returns the ref cache's entry for the tab's target.
func (t *Tab) cachedRefs(ctx context.Context) (snapshot.RefCacheEntry, bool) {
	key, err := t.refKey(ctx)
	if err != nil {
		return snapshot.RefCacheEntry{}, false
	}
	return t.c.env.Refs.Get(key)
}

// Element is an element of a tab that a tool acts on: a ref of a snapshot
// or a selector, resolved to exactly one element when it was located.
type Element struct {
	tab *Tab
	loc playwright.Locator
	// Target is what the agent passed (a ref or a selector).
	Target string
}

// Locate resolves target on the tab: an AI ref (e12, f1e3) of the tab's
// last AI snapshot, a Role ref (r12), an ARIA ref (ax12), or a selector
// that must match exactly one element. It fails at once (never a wait) when
// the ref is stale or the selector matches nothing; errors wrap
// ErrUnknownRef for refs and say what to do next.
//
// A page object that took no AI snapshot of its own (the same page reached
// through a new connection) resolves e12 from the session's ref cache,
// keyed by the page's target: getByRole(role, {name, exact}).nth(n).
func (t *Tab) Locate(ctx context.Context, target string) (*Element, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return nil, errors.New("target is empty: pass a ref from the last snapshot (e.g. e12) or a selector")
	}
	var loc playwright.Locator
	var err error
	switch snapshot.ClassifyRef(target) {
	case snapshot.RefAI:
		loc, err = t.locateAI(ctx, target)
	case snapshot.RefRole:
		loc, err = t.locateRole(ctx, target)
	case snapshot.RefARIA:
		loc, err = t.locateARIA(ctx, target)
	default:
		loc, err = t.locateSelector(ctx, target)
	}
	if err != nil {
		return nil, err
	}
	return &Element{tab: t, loc: loc, Target: target}, nil
}

func (t *Tab) count(ctx context.Context, loc playwright.Locator) (int, error) {
	return call(ctx, t.c, "find the element", stopOn{modal: t, bound: t.c.env.ActionTimeout}, loc.Count)
}

func (t *Tab) locateAI(ctx context.Context, ref string) (playwright.Locator, error) {
	t.mu.Lock()
	own := t.refs.ownAI
	t.mu.Unlock()
	if own {
		loc := t.p.Locator("aria-ref=" + ref)
		if n, err := t.count(ctx, loc); err == nil && n > 0 {
			return loc, nil
		} else if err != nil && !isPageErr(err) {
			return nil, err
		}
	} else if e, ok := t.cachedRefs(ctx); ok && e.AI != nil {
		if rr, ok := e.AI[ref]; ok {
			if rr.FrameID != "" {
				return nil, refErr(ref, "Ref %s is in a frame of a snapshot taken on another connection; take a new snapshot", ref)
			}
			loc := t.byRole(rr)
			if n, err := t.count(ctx, loc); err == nil && n > 0 {
				return loc, nil
			} else if err != nil && !isPageErr(err) {
				return nil, err
			}
			return nil, refErr(ref, "Ref %s (%s %q) is no longer on the page; take a new snapshot", ref, rr.Role, rr.Name)
		}
	}
	// Say so when the ref belongs to another tab's snapshot.
	for i, o := range t.c.Tabs() {
		if o != t && o.hasRef(ref) {
			return nil, refErr(ref, "Ref %s is from tab %d's snapshot, not the current tab's: select that tab with browser_tabs, or take a new snapshot here", ref, i)
		}
	}
	return nil, refErr(ref, "Ref %s not found in the current page snapshot. Try capturing new snapshot.", ref)
}

// byRole is getByRole(role, {name, exact: true}).nth(n) on the main frame.
func (t *Tab) byRole(rr snapshot.RoleRef) playwright.Locator {
	opts := playwright.PageGetByRoleOptions{}
	if rr.Name != "" {
		opts.Name = rr.Name
		opts.Exact = playwright.Bool(true)
	}
	return t.p.GetByRole(playwright.AriaRole(rr.Role), opts).Nth(rr.Nth)
}

func (t *Tab) locateRole(ctx context.Context, ref string) (playwright.Locator, error) {
	t.mu.Lock()
	tree := t.refs.role
	t.mu.Unlock()
	if tree == nil {
		if e, ok := t.cachedRefs(ctx); ok {
			tree = e.Role
		}
	}
	if tree == nil {
		return nil, refErr(ref, "Ref %s: no role snapshot of this tab; take one with browser_snapshot mode=role", ref)
	}
	rr, ok := tree.RoleRef(ref)
	if !ok {
		return nil, refErr(ref, "Ref %s not found in the last role snapshot; take a new one with browser_snapshot mode=role", ref)
	}
	loc := t.byRole(rr)
	if n, err := t.count(ctx, loc); err != nil || n == 0 {
		if err != nil && !isPageErr(err) {
			return nil, err
		}
		return nil, refErr(ref, "Ref %s (%s %q) is no longer on the page; take a new snapshot", ref, rr.Role, rr.Name)
	}
	return loc, nil
}

// markAttr is set on an element to hand an ARIA-mode ref to Playwright.
const markAttr = "data-cloakmcp-ref"

// locateARIA resolves an ARIA-mode ref (ax12) through its DOM node: the
// node is resolved over CDP and marked so a Playwright locator can find it.
func (t *Tab) locateARIA(ctx context.Context, ref string) (playwright.Locator, error) {
	t.mu.Lock()
	tree := t.refs.aria
	t.mu.Unlock()
	if tree == nil {
		if e, ok := t.cachedRefs(ctx); ok {
			tree = e.ARIA
		}
	}
	if tree == nil {
		return nil, refErr(ref, "Ref %s: no aria snapshot of this tab; take one with browser_snapshot mode=aria", ref)
	}
	backend, ok := tree.Backend(ref)
	if !ok || backend == 0 {
		return nil, refErr(ref, "Ref %s not found in the last aria snapshot, or it has no DOM node; take a new snapshot", ref)
	}
	res, err := t.CDP(ctx, "DOM.resolveNode", map[string]any{"backendNodeId": backend})
	if err != nil {
		if !isPageErr(err) {
			return nil, err
		}
		return nil, refErr(ref, "Ref %s is no longer on the page; take a new snapshot", ref)
	}
	obj, _ := res.(map[string]any)["object"].(map[string]any)
	id, _ := obj["objectId"].(string)
	if id == "" {
		return nil, refErr(ref, "Ref %s is no longer on the page; take a new snapshot", ref)
	}
	// Text nodes and the like: act on their element.
	_, err = t.CDP(ctx, "Runtime.callFunctionOn", map[string]any{
		"objectId":            id,
		"functionDeclaration": `function(a, r) { const el = this.nodeType === 1 ? this : this.parentElement; if (el) el.setAttribute(a, r); }`,
		"arguments":           []any{map[string]any{"value": markAttr}, map[string]any{"value": ref}},
	})
	_, _ = t.CDP(ctx, "Runtime.releaseObject", map[string]any{"objectId": id})
	if err != nil {
		return nil, fmt.Errorf("Ref %s: %w", ref, err)
	}
	return t.p.Locator(fmt.Sprintf("[%s=%q]", markAttr, ref)), nil
}

func (t *Tab) locateSelector(ctx context.Context, sel string) (playwright.Locator, error) {
	loc := t.p.Locator(sel)
	n, err := t.count(ctx, loc)
	if err != nil {
		if !isPageErr(err) {
			return nil, err
		}
		return nil, fmt.Errorf("invalid selector %s: %w", clip.Quote(sel), err)
	}
	switch {
	case n == 0:
		return nil, fmt.Errorf("no element matches selector %s; take a snapshot and use a ref", clip.Quote(sel))
	case n > 1:
		return nil, fmt.Errorf("selector %s matches %d elements; use a ref from the snapshot or a more specific selector", clip.Quote(sel), n)
	}
	return loc, nil
}

// isPageErr reports whether err is Playwright's answer about the page (as
// opposed to the browser being lost, a modal, or the caller's deadline).
func isPageErr(err error) bool {
	var pe *PageError
	return errors.As(err, &pe) && !errors.Is(err, ErrTabClosed)
}
