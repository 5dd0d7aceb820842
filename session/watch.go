package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf16"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// The watch tells whether a page changed since its last AI snapshot, for
// one cheap call instead of a new snapshot: the after-action snapshot of an
// action that changed nothing is skipped, and a repeated snapshot of an
// unchanged page is served from the last one.
//
// It lives in an isolated world of the page's main frame (created over the
// tab's CDP session): the page's own scripts can neither see it nor hook
// the DOM APIs it uses. Per document it keeps a MutationObserver (DOM,
// attributes, text — in the document, every open shadow root and every
// same-origin frame) and, at each read, compares with its base (the state
// when the last snapshot was taken):
//   - form controls' values, checked and selected states (properties, which
//     no mutation reports);
//   - the focused element (shadow roots and same-origin frames included);
//   - the :hover chain, when a style sheet can show or hide on :hover (or
//     cannot be read: a cross-origin sheet);
//   - running animations and transitions of display, visibility, content
//     or cursor;
//   - the number of style sheets and rules (CSSOM insertions), new shadow
//     roots and frame documents, and location.href;
//   - popovers toggling.
//
// A page with a frame the watch cannot enter (cross-origin, sandboxed) is
// always snapshotted, as is one in a tab whose page was also driven by
// other means (browser_evaluate, a resize, emulation, the CDP proxy).
//
// Reading also marks a new base, and every read says which base it
// compared with: a snapshot stands on the base marked just before it, so a
// change that lands between the mark and the snapshot only costs a new
// snapshot next time, never a missed one.

// watchWorld names the isolated world the watch runs in.
const watchWorld = "cbm"

// watchSource is the watch: an expression returning the read as JSON-able
// object. %t is whether to mark a new base; %t whether to let the page's
// queued tasks run first (after an action: the updates its handlers left
// to a zero timer or a microtask).
const watchSource = `(async (mark, afterAction) => {
if (afterAction) await new Promise(r => setTimeout(r, 0));
const W = globalThis.__w || (globalThis.__w = (() => {
  let n = 0, id = Math.floor(Math.random() * 2147483648), base = null;
  const seen = new WeakSet();
  const bump = () => { n++; };
  const mo = new MutationObserver(r => { n += r.length; });
  const observe = r => {
    if (seen.has(r)) return false;
    seen.add(r);
    mo.observe(r, { subtree: true, childList: true, attributes: true, characterData: true });
    r.addEventListener('toggle', bump, true);
    return true;
  };
  const ctlKey = e => {
    if (e.localName === 'select') { let s = ''; for (const o of e.options) s += o.selected ? '1' : '0'; return s; }
    if (e.type === 'checkbox' || e.type === 'radio') return (e.checked ? 'c1' : 'c0') + (e.indeterminate ? 'i' : '');
    return 'v' + e.value;
  };
  const scan = () => {
    const roots = [], controls = new Map();
    let foreign = 0, added = 0;
    const visit = root => {
      if (observe(root)) added++;
      roots.push(root);
      const doc = root.nodeType === 9 ? root : root.ownerDocument;
      const it = doc.createTreeWalker(root, 1);
      for (let e = it.nextNode(); e; e = it.nextNode()) {
        if (e.shadowRoot) visit(e.shadowRoot);
        switch (e.localName) {
        case 'input': case 'textarea': case 'select': controls.set(e, ctlKey(e)); break;
        case 'iframe': case 'frame': {
          let d = null;
          try { d = e.contentDocument; } catch (_) {}
          if (d) visit(d); else foreign++;
        }
        }
      }
    };
    visit(document);
    return { roots, controls, foreign, added };
  };
  const deepFocus = () => {
    let a = document.activeElement;
    for (let i = 0; a && i < 64; i++) {
      let next = null;
      if (a.shadowRoot && a.shadowRoot.activeElement) next = a.shadowRoot.activeElement;
      else if (a.localName === 'iframe' || a.localName === 'frame') { try { next = a.contentDocument && a.contentDocument.activeElement; } catch (_) {} }
      if (!next || next === a) break;
      a = next;
    }
    return a;
  };
  const hoverChain = () => {
    const out = [];
    let r = document;
    for (let i = 0; r && i < 64; i++) {
      const hs = r.querySelectorAll(':hover');
      if (!hs.length) break;
      for (const e of hs) out.push(e);
      const last = hs[hs.length - 1];
      let next = last.shadowRoot;
      if (!next && (last.localName === 'iframe' || last.localName === 'frame')) { try { next = last.contentDocument; } catch (_) {} }
      r = next;
    }
    return out;
  };
  const sheetsOf = root => [...(root.styleSheets || []), ...(root.adoptedStyleSheets || [])];
  const shown = ['display', 'visibility', 'content', 'cursor', 'content-visibility'];
  // The selectors of :hover rules that can show, hide or label elements,
  // per sheet (kept while its rule count holds); null when a sheet cannot
  // be read (cross-origin) or a selector cannot be matched.
  const hoverCache = new WeakMap();
  const pseudo = /::?(before|after|marker|placeholder|first-line|first-letter|selection|backdrop|file-selector-button)\b/g;
  const hoverSels = (rules, inHover, depth, out) => {
    for (const r of rules) {
      const hov = inHover || (typeof r.selectorText === 'string' && r.selectorText.includes(':hover'));
      if (hov && r.style && typeof r.selectorText === 'string') for (const p of shown) if (r.style.getPropertyValue(p)) { out.push(r.selectorText.replace(pseudo, '')); break; }
      if (r.styleSheet && !hoverSheetSels(r.styleSheet, hov, depth + 1, out)) return false;
      if (r.cssRules && depth < 16 && !hoverSels(r.cssRules, hov, depth + 1, out)) return false;
    }
    return true;
  };
  const hoverSheetSels = (sh, inHover, depth, out) => {
    let rules;
    try { rules = sh.cssRules; } catch (_) { return false; }
    return !!rules && depth < 16 && hoverSels(rules, inHover, depth, out);
  };
  // hoverMatches lists the elements :hover rules show, hide or label now,
  // or returns null when that cannot be told.
  const hoverMatches = roots => {
    const out = [];
    for (const root of roots) for (const sh of sheetsOf(root)) {
      let c = hoverCache.get(sh), len = -1;
      try { len = sh.cssRules.length; } catch (_) { return null; }
      if (!c || c.len !== len) {
        const sels = [];
        c = { len, sels: hoverSheetSels(sh, false, 0, sels) ? sels : null };
        hoverCache.set(sh, c);
      }
      if (!c.sels) return null;
      for (const sel of c.sels) {
        try { for (const e of root.querySelectorAll(sel)) out.push(e); } catch (_) { return null; }
      }
    }
    return out;
  };
  const animKeys = ['display', 'visibility', 'content', 'contentVisibility', 'cursor'];
  const animating = roots => {
    for (const root of roots) {
      if (!root.getAnimations) continue;
      for (const an of root.getAnimations()) {
        if (an.playState !== 'running' && !an.pending) continue;
        if (typeof an.transitionProperty === 'string') {
          if (shown.includes(an.transitionProperty)) return true;
          continue;
        }
        let kf = null;
        try { kf = an.effect && an.effect.getKeyframes(); } catch (_) { return true; }
        if (kf) for (const k of kf) for (const p of animKeys) if (p in k) return true;
      }
    }
    return false;
  };
  const ruleCount = roots => {
    let c = 0;
    for (const root of roots) for (const sh of sheetsOf(root)) { c++; try { c += sh.cssRules.length; } catch (_) {} }
    return c;
  };
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const hash = s => { let h = 0x811c9dc5; for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; } return h.toString(16) + ':' + s.length; };
  return (mark) => {
    n += mo.takeRecords().length;
    const s = scan();
    const focus = deepFocus(), hover = hoverChain(), shows = hoverMatches(s.roots), rules = ruleCount(s.roots), href = location.href;
    const out = { t: document.title, x: s.foreign, b: base ? base.id : 0 };
    if (base) {
      let changed = 0, which = null;
      for (const [e, k] of s.controls) if (base.controls.get(e) !== k) { changed++; which = e; }
      for (const e of base.controls.keys()) if (!s.controls.has(e)) changed++;
      out.m = n - base.n;
      out.c = changed;
      if (changed === 1 && which && typeof which.value === 'string' && which.type !== 'checkbox' && which.type !== 'radio' && which.localName !== 'select') {
        out.v = hash(which.value);
        out.vf = which === focus;
      }
      out.f = focus !== base.focus;
      out.fh = out.f && (!focus || hover.includes(focus));
      out.h = !same(hover, base.hover) && (!shows || !base.shows || !same(shows, base.shows));
      out.r = rules !== base.rules || s.added > 0;
      out.u = href !== base.href;
    }
    out.a = animating(s.roots);
    if (mark) { base = { id: ++id, n, controls: s.controls, focus, hover, shows, rules, href }; out.nb = id; }
    return out;
  };
})());
return W(mark);
})(%t, %t)`

// watchRead is what one read of the watch says.
type watchRead struct {
	Title    string  `json:"t"`
	Foreign  int     `json:"x"`  // frames the watch cannot enter
	Base     int     `json:"b"`  // the base this read compared with (0: none yet)
	NewBase  int     `json:"nb"` // the base it marked (0: none)
	Muts     int     `json:"m"`  // mutations since the base
	Controls int     `json:"c"`  // form controls whose state changed
	Value    *string `json:"v"`  // the one changed control's value, hashed
	ValueFoc bool    `json:"vf"` // that control has the focus
	Focus    bool    `json:"f"`
	FocusHov bool    `json:"fh"` // focus moved to an element under the pointer
	Hover    bool    `json:"h"`
	Anim     bool    `json:"a"`
	Rules    bool    `json:"r"`
	URL      bool    `json:"u"`

	nav int // the tab's navigation count when read
}

// sameAs reports whether the page is as it was at base.
func (r *watchRead) sameAs(base int) bool {
	return r.quietSince(base) && r.Controls == 0 && !r.Focus
}

// clickedOnly is sameAs but for focus moving to the element under the
// pointer: what a click on it does, which an after-action diff leaves out.
func (r *watchRead) clickedOnly(base int) bool {
	return r.quietSince(base) && r.Controls == 0 && (!r.Focus || r.FocusHov)
}

// quietSince is sameAs but for form controls and focus.
func (r *watchRead) quietSince(base int) bool {
	return base != 0 && r.Base == base && r.Foreign == 0 && r.Muts == 0 &&
		!r.Hover && !r.Anim && !r.Rules && !r.URL
}

// onlyTyped reports whether the one change since base is text in the
// focused field: its value is now text.
func (r *watchRead) onlyTyped(base int, text string) bool {
	return r.quietSince(base) && r.Controls == 1 && r.Value != nil && *r.Value == valueHash(text) &&
		(!r.Focus || r.ValueFoc)
}

// valueHash is the watch's hash of a value: FNV-1a over its UTF-16 code
// units, then its length in them.
func valueHash(s string) string {
	units := utf16.Encode([]rune(s))
	h := uint32(0x811c9dc5)
	for _, u := range units {
		h ^= uint32(u)
		h *= 0x01000193
	}
	return fmt.Sprintf("%x:%d", h, len(units))
}

// watchTimeout bounds a read: the page answered a probe a moment ago, or
// it is busy (probeTimeout then).
const watchTimeout = probeTimeout

// readWatch reads (and, with mark, re-bases) the watch of the tab's main
// frame. afterAction lets the tasks the page queued run first (a zero
// timer), so updates an action's handlers deferred that way are seen; the
// snapshot this replaces was never later than that either.
func (t *Tab) readWatch(ctx context.Context, mark, afterAction bool) (*watchRead, error) {
	if !t.watchable() {
		return nil, errWatchOff
	}
	ctx, cancel := context.WithTimeout(ctx, watchTimeout)
	defer cancel()
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	expr := fmt.Sprintf(watchSource, mark, afterAction)
	for attempt := 0; ; attempt++ {
		nav := t.LastNavSeq()
		cid, err := t.watchContext(ctx, nav)
		if err != nil {
			return nil, err
		}
		res, err := call(ctx, t.g, "read the page's state", stopOn{modal: t}, func() (any, error) {
			return s.Send("Runtime.evaluate", map[string]any{
				"expression": expr, "contextId": cid, "returnByValue": true, "awaitPromise": true,
			})
		})
		if err != nil {
			// The world went with its document: make a new one, once.
			var pe *PageError
			if attempt == 0 && errors.As(err, &pe) {
				t.forgetWatchContext(cid)
				continue
			}
			return nil, err
		}
		r, err := decodeWatch(res)
		if err != nil {
			return nil, err
		}
		r.nav = nav
		return r, nil
	}
}

var errWatchOff = errors.New("the page is driven by other means too; no watch")

// watchable reports whether the watch can be trusted on this tab: no CDP
// proxy client can drive the page behind its back.
func (t *Tab) watchable() bool {
	return t.g.s.CDP() == nil
}

func decodeWatch(res any) (*watchRead, error) {
	m, _ := res.(map[string]any)
	if ex, ok := m["exceptionDetails"]; ok {
		b, _ := json.Marshal(ex)
		return nil, fmt.Errorf("watch: %s", clip.Short(firstLine(string(b))))
	}
	inner, _ := m["result"].(map[string]any)
	b, err := json.Marshal(inner["value"])
	if err != nil {
		return nil, err
	}
	var r watchRead
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return &r, nil
}

// watchContext is the execution context of the watch's world in the main
// frame's current document, created when the document is new.
func (t *Tab) watchContext(ctx context.Context, nav int) (int, error) {
	t.mu.Lock()
	cid, at := t.watchCtx, t.watchNav
	t.mu.Unlock()
	if cid != 0 && at == nav {
		return cid, nil
	}
	frame, err := t.TargetID(ctx) // a page's main frame id is its target id
	if err != nil {
		return 0, err
	}
	res, err := call(ctx, t.g, "open the watch's world", stopOn{modal: t}, func() (any, error) {
		s, err := t.cdpSession(ctx)
		if err != nil {
			return nil, err
		}
		return s.Send("Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": watchWorld})
	})
	if err != nil {
		return 0, err
	}
	id, _ := res.(map[string]any)["executionContextId"].(float64)
	if id == 0 {
		return 0, fmt.Errorf("open the watch's world: no context in %v", res)
	}
	t.mu.Lock()
	t.watchCtx, t.watchNav = int(id), nav
	t.mu.Unlock()
	return int(id), nil
}

func (t *Tab) forgetWatchContext(cid int) {
	t.mu.Lock()
	if t.watchCtx == cid {
		t.watchCtx = 0
	}
	t.mu.Unlock()
}

// invalidateWatch drops the base of the tab's last snapshot: the page was
// changed in a way the watch may not see (script, viewport, emulation),
// so the next snapshot is taken afresh.
func (t *Tab) invalidateWatch() {
	t.mu.Lock()
	t.snapBase = 0
	t.settled = nil
	t.mu.Unlock()
}

// settledRead is the watch read Settle made at the end of an action, kept
// for the snapshot that follows while nothing else happened.
type settledRead struct {
	r   *watchRead
	seq int
	at  time.Time
}

// settledMaxAge bounds how long a settled read stands in for a new one.
const settledMaxAge = time.Second

// settledLocked returns the read Settle left if it still describes the page
// (no navigation, no request since, and recent), else nil. t.mu is held.
func (t *Tab) settledLocked() *watchRead {
	s := t.settled
	if s == nil || s.seq != t.seq || s.r.nav != t.lastNav || time.Since(s.at) > settledMaxAge {
		return nil
	}
	return s.r
}

// takeSettled returns settledLocked's read and forgets it.
func (t *Tab) takeSettled() *watchRead {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.settledLocked()
	t.settled = nil
	return r
}

// OnlyTyped reports whether the action just settled changed nothing on the
// page but the focused field's value, which is now text; the snapshot
// after it can be skipped. The last snapshot stays the base of diffs but,
// lacking the value, is not served as a page snapshot again.
func (t *Tab) OnlyTyped(text string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.settledLocked()
	if r == nil || !r.onlyTyped(t.snapBase, text) {
		return false
	}
	t.settled = nil
	t.snapBase, t.snapMarksOff = r.NewBase, true
	return true
}

// watchOrProbe reads the watch before a whole-page snapshot (the read Settle
// left, or a new one, marking a base) in place of the liveness probe:
// missed is true when the page did not answer in time. Without a watch
// it probes.
func (t *Tab) watchOrProbe(ctx context.Context) (r *watchRead, settled, missed bool) {
	if r := t.takeSettled(); r != nil {
		return r, true, false
	}
	r, err := t.readWatch(ctx, true, false)
	if err == nil {
		// The snapshot that follows is the page's latest state; so is
		// this title.
		t.mu.Lock()
		t.noteTitleLocked(r.Title)
		t.mu.Unlock()
		return r, false, false
	}
	var te *TimeoutError
	if errors.As(err, &te) && ctx.Err() == nil && len(t.Modals()) == 0 {
		t.mu.Lock()
		t.busy = true
		t.mu.Unlock()
		return nil, false, true
	}
	return nil, false, !t.alive(ctx)
}

// settleRead reads the watch at the end of an action, bounded like the
// round trip it replaces.
func (t *Tab) settleRead(ctx context.Context) (*watchRead, error) {
	ctx, cancel := context.WithTimeout(ctx, settleReadTimeout)
	defer cancel()
	return t.readWatch(ctx, true, true)
}

// settleReadTimeout bounds the read at the end of an action.
const settleReadTimeout = 400 * time.Millisecond

// keepSettled keeps r for the snapshot that follows the action, and its
// title for the response's Page section.
func (t *Tab) keepSettled(r *watchRead) {
	t.mu.Lock()
	t.settled = &settledRead{r: r, seq: t.seq, at: time.Now()}
	t.noteTitleLocked(r.Title)
	t.mu.Unlock()
}

// noteTitleLocked keeps a title the watch just read, good for the next
// Title call (within settledMaxAge). t.mu is held.
func (t *Tab) noteTitleLocked(title string) {
	t.title, t.hasTitle, t.titleAt = title, true, time.Now()
}
