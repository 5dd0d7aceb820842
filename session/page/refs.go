package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// tabRefs are the trees behind a tab's refs.
type tabRefs struct {
	// ownAI: this page object took an AI snapshot, so Playwright's aria-ref
	// map is the truth about e12 refs and the cache is never consulted.
	ownAI bool
	// partialAI: an AI snapshot of part of the page (an element, a depth,
	// boxes) came after the last whole one. Playwright's aria-ref map is
	// then that part's: a ref of the whole snapshot outside it resolves
	// again once the page is walked whole (locateAI does).
	partialAI bool
	aria      *snapshot.Tree
	role      *snapshot.Tree
	// roleDoc is the tab's docNav when role was taken: a role ref names an
	// element of that document only.
	roleDoc int
	// aiSeq, ariaSeq and roleSeq order the tab's last snapshot of each kind
	// among all snapshots of its context's tabs (refLedger); 0: none.
	aiSeq, ariaSeq, roleSeq uint64
	// sels are the selectors Element.Selector resolved for refs of the
	// last AI snapshot (emptied by the next one), good while the page has
	// not changed since (knownSelector).
	sels map[string]string
}

// seq is the order of the tab's last snapshot of kind.
func (r *tabRefs) seq(kind snapshot.RefKind) uint64 {
	switch kind {
	case snapshot.RefAI:
		return r.aiSeq
	case snapshot.RefARIA:
		return r.ariaSeq
	case snapshot.RefRole:
		return r.roleSeq
	}
	return 0
}

// holds reports whether the tab's last snapshot of kind issued ref (snap is
// its last whole AI snapshot).
func (r *tabRefs) holds(kind snapshot.RefKind, ref string, snap *Snapshot) bool {
	switch kind {
	case snapshot.RefAI:
		return snap != nil && strings.Contains(snap.Text, "[ref="+ref+"]")
	case snapshot.RefARIA:
		if r.aria == nil {
			return false
		}
		_, ok := r.aria.Backend(ref)
		return ok
	case snapshot.RefRole:
		if r.role == nil {
			return false
		}
		_, ok := r.role.RoleRef(ref)
		return ok
	}
	return false
}

// refLedger binds refs to the snapshot that issued them. Every tab numbers
// its refs from e1 (ax1, r1), so the same ref names different elements on
// different tabs: a ref resolves on a tab only when no snapshot of another
// tab — open, or closed since — newer than the tab's own of that kind
// issued it too. Otherwise the agent, which saw the other tab's snapshot
// last, would act on an element of this one it never meant.
type refLedger struct {
	mu     sync.Mutex
	seq    uint64
	closed []closedRefs // the tabs closed last, oldest first
}

// maxClosedRefs bounds the closed tabs whose refs the ledger keeps: a ref
// of a tab closed longer ago is older than any snapshot taken since.
const maxClosedRefs = 16

// closedRefs are the refs of a closed tab.
type closedRefs struct {
	index int // the tab's position when it closed
	refs  tabRefs
	snap  *Snapshot
}

// next numbers a new snapshot.
func (l *refLedger) next() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

// tabClosed keeps the refs of t, closed at position index.
func (l *refLedger) tabClosed(t *Tab, index int) {
	t.mu.Lock()
	c := closedRefs{index: index, refs: t.refs, snap: t.snap}
	t.mu.Unlock()
	if c.refs.aiSeq == 0 && c.refs.ariaSeq == 0 && c.refs.roleSeq == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = append(l.closed, c)
	if len(l.closed) > maxClosedRefs {
		l.closed = append([]closedRefs(nil), l.closed[len(l.closed)-maxClosedRefs:]...)
	}
}

// closedHolder returns the position of the closed tab whose snapshot of
// kind, newer than after, issued ref last.
func (l *refLedger) closedHolder(kind snapshot.RefKind, ref string, after uint64) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.closed) - 1; i >= 0; i-- {
		c := l.closed[i]
		if c.refs.seq(kind) > after && c.refs.holds(kind, ref, c.snap) {
			return c.index, true
		}
	}
	return 0, false
}

// refElsewhere fails when ref, of kind, was issued by a snapshot of another
// tab (open, or closed since) newer than t's own snapshot of that kind.
func (t *Tab) refElsewhere(kind snapshot.RefKind, ref string) error {
	t.mu.Lock()
	mine := t.refs.seq(kind)
	t.mu.Unlock()
	for i, o := range t.c.Tabs() {
		if o == t {
			continue
		}
		o.mu.Lock()
		newer := o.refs.seq(kind) > mine && o.refs.holds(kind, ref, o.snap)
		o.mu.Unlock()
		if newer {
			return refErr(ref, "Ref %s is from tab %d's snapshot, not the current tab's: select that tab with browser_tabs, or take a new snapshot here", ref, i)
		}
	}
	if i, ok := t.c.refs.closedHolder(kind, ref, mine); ok {
		return refErr(ref, "Ref %s is from the snapshot of tab %d, which was closed since; it names nothing on the current tab: take a new snapshot here", ref, i)
	}
	return nil
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
	// unchecked: LocateToAct did not look the ref up (Act does, should
	// the action time out).
	unchecked bool
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
	kind := snapshot.ClassifyRef(target)
	if kind != snapshot.RefNone {
		if err := t.refElsewhere(kind, target); err != nil {
			return nil, err
		}
	}
	switch kind {
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
		at := ref
		if a := t.aliasOf(ref); a != "" && !t.hasRef(ref) {
			at = a // the page replaced the element with an equal one
		}
		loc := t.p.Locator("aria-ref=" + at)
		n, err := t.count(ctx, loc)
		if err == nil && n == 0 && t.partialAI() && (t.hasRef(ref) || t.hasRef(at)) {
			// A part of the page was walked since (a part snapshot, or a
			// snapshot that walked only what changed): Playwright's
			// aria-ref= resolves against that walk. Snapshot the page
			// (its elements keep their refs), then look again. That
			// snapshot may itself walk only parts (splice.go): then the
			// ref, if it shows it, is found by the mark Playwright's walks
			// leave on its element, which the parts just renewed where the
			// page changed.
			if _, serr := t.AISnapshot(ctx, SnapshotOptions{}); serr == nil {
				if t.partialAI() && t.hasRef(at) {
					loc = t.handoff("aref", at)
				}
				n, err = t.count(ctx, loc)
			}
		}
		if err == nil && n > 0 {
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
	return nil, t.refGone(ref)
}

// knownSelector is the selector kept for ref, "" if none, and the aiSeq of
// the tab's last AI snapshot when ref is one of its refs and they stand
// (refsStand: the watch has told of no change since but values and focus;
// 0 otherwise: a selector resolved now is not kept).
func (t *Tab) knownSelector(ref string) (string, uint64) {
	if snapshot.ClassifyRef(ref) != snapshot.RefAI || !t.refsStand() {
		return "", 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refs.sels[ref], t.refs.aiSeq
}

// keepSelector keeps sel as ref's selector if the snapshot of aiSeq seq
// (knownSelector's) is still the tab's last and its refs still stand.
func (t *Tab) keepSelector(ref, sel string, seq uint64) {
	if seq == 0 || !t.refsStand() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refs.aiSeq != seq {
		return
	}
	if t.refs.sels == nil {
		t.refs.sels = map[string]string{}
	}
	t.refs.sels[ref] = sel
}

// partialAI reports tabRefs.partialAI.
func (t *Tab) partialAI() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refs.partialAI
}

// tookPartialAI notes an AI snapshot of part of the page: Playwright's
// aria-ref map is now that part's. When the watch found the page as the
// last whole snapshot showed it just before the part was walked (base, the
// base that read marked; 0: it did not), that snapshot still stands: it
// is served again while the page stays so, and its refs act without a
// lookup, through the ref Playwright's walks left on each element
// (LocateToAct). Else it does not stand: the next whole snapshot walks and
// its refs are looked up.
func (t *Tab) tookPartialAI(base int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refs.partialAI = true
	t.settled = nil
	if base == 0 || base != t.lastMark || t.snapBase == 0 {
		t.snapBase, t.refsBase = 0, 0
		return
	}
	t.snapBase, t.refsBase = base, base
}

// partBase reads the watch before a snapshot of part of the page: the base
// the read marked when the page is as the tab's last whole snapshot showed
// it (tookPartialAI), else 0; and the read's error.
func (t *Tab) partBase(ctx context.Context) (int, error) {
	r, err := t.readWatch(ctx, true, false, nil)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.showsLocked(r) {
		return 0, nil
	}
	return r.NewBase, nil
}

// showsLocked reports whether the tab's last whole snapshot shows the page
// as the read r found it: nothing changed since its base, in the same
// document (a same-document navigation since changes nothing a walk shows
// unless the read says so), and its focus mark still true; never one
// that cannot stand (Snapshot.stands). t.mu is held.
func (t *Tab) showsLocked(r *watchRead) bool {
	return t.snap != nil && r.doc == t.docNav && t.snap.doc == t.docNav && !t.snapMarksOff && t.snap.stands() && r.SameAs(t.snapBase)
}

// refGone is the error for an AI ref that names nothing on the tab.
func (t *Tab) refGone(ref string) error {
	// Say so when the ref belongs to another tab's snapshot.
	for i, o := range t.c.Tabs() {
		if o != t && o.hasRef(ref) {
			return refErr(ref, "Ref %s is from tab %d's snapshot, not the current tab's: select that tab with browser_tabs, or take a new snapshot here", ref, i)
		}
	}
	return refErr(ref, "Ref %s not found in the current page snapshot. Try capturing new snapshot.", ref)
}

// LocateToAct is Locate for the element an action is about to act on. A
// ref of the main frame in the tab's last snapshot, on a page the watch
// has told of no change since that snapshot but values and focus
// (refsStand), is not looked up first: its element is still in the page,
// and the action finds it a round trip sooner. A change whose tell was
// still on its way can have taken it: when the action then times out
// waiting for it, Act looks the ref up and says it went (gone).
func (t *Tab) LocateToAct(ctx context.Context, target string) (*Element, error) {
	ref := strings.TrimSpace(target)
	if snapshot.ClassifyRef(ref) != snapshot.RefAI {
		return t.Locate(ctx, target)
	}
	// The main frame's refs: e12 on a tab's first page, f3e12 on a later
	// one (Tree.MainFrame; the tree was parsed as the snapshot was kept).
	s := t.LastSnapshot()
	if s == nil {
		return t.Locate(ctx, target)
	}
	if tree, err := s.Tree(); err != nil || snapshot.RefFrame(ref) != tree.MainFrame() {
		return t.Locate(ctx, target)
	}
	// refsStand implies the tab took that snapshot itself (ownAI). After a
	// snapshot of a part (partialAI), Playwright's aria-ref map is the
	// part's: the ref its walks left on the element finds it.
	if !t.hasRef(ref) || !t.refsStand() {
		return t.Locate(ctx, target)
	}
	if err := t.refElsewhere(snapshot.RefAI, ref); err != nil {
		return nil, err
	}
	part := t.partialAI()
	loc := t.p.Locator("aria-ref=" + ref)
	if part {
		loc = t.handoff("aref", ref)
	}
	t.c.env.Log.Debug().Int("tab", t.ID).Str("ref", ref).Bool("part_since", part).Msg("act: the ref's snapshot stands; not looked up")
	return &Element{tab: t, loc: loc, Target: ref, unchecked: true}, nil
}

// gone is, for an element LocateToAct did not look up, the error saying its
// ref names nothing now; nil when it still names an element (or that
// cannot be told).
func (e *Element) gone(ctx context.Context) error {
	if e == nil || !e.unchecked {
		return nil
	}
	if n, err := e.tab.count(ctx, e.loc); err == nil && n == 0 {
		return e.tab.refGone(e.Target)
	}
	return nil
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
	earlier := tree != nil && t.refs.roleDoc != t.docNav
	t.mu.Unlock()
	if earlier {
		return nil, refErr(ref, "Ref %s is from a role snapshot of an earlier page of this tab; take a new one with browser_snapshot mode=role", ref)
	}
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

// locateARIA resolves an ARIA-mode ref (ax12) through its DOM node: the
// node is handed to Playwright's utility world over CDP (handoff.go), so a
// Playwright locator finds it with no mark on the page.
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
	loc, err := t.giveNode(ctx, ref, backend)
	if errors.Is(err, errNoHandoff) {
		return nil, refErr(ref, "Ref %s is no longer on the page; take a new snapshot", ref)
	}
	if err != nil {
		return nil, fmt.Errorf("Ref %s: %w", ref, err)
	}
	if n, err := t.count(ctx, loc); err != nil || n == 0 {
		if err != nil && !isPageErr(err) {
			return nil, err
		}
		return nil, refErr(ref, "Ref %s is no longer on the page; take a new snapshot", ref)
	}
	return loc, nil
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
