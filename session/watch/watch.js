(async function read(mark, afterAction) {
// Kept in this world for later reads (Call), which then send only its name.
globalThis.__cbmRead = read;
// After an action the tasks the page queued first (a handler's zero timer)
// run before the read: a message on a channel of this world's own is a task
// queued behind them. Not a timer: a window's worlds share its timer ids,
// and a page that checks its own ids follow one another would see ours.
if (afterAction) await new Promise(r => { const c = new MessageChannel(); c.port1.onmessage = () => { c.port1.close(); r(); }; c.port2.postMessage(0); });
const W = globalThis.__w || (globalThis.__w = (() => {
  let n = 0, id = Math.floor(Math.random() * 2147483648), base = null, told = false;
  const seen = new WeakSet();
  const bump = () => { n++; };
  // known: the roots (document, open shadow roots, same-origin frames) the
  // last scan found, whose sheets the data-* names come from; a root that
  // went is dropped at the next scan.
  let known = [];
  // Changes no AI snapshot can show are not counted (inert): Playwright's
  // walk skips script, noscript and template elements (and style ones,
  // which CSS reads), never reads comments or data-* attributes, and sees
  // only what CSS makes of them. So: comments anywhere; what happens inside
  // a script, noscript or template element; scripts, noscripts, templates
  // and resource hints added to or removed from a head the page does not
  // show (elsewhere an element can change what :first-child or :empty
  // match); a data-* attribute that no style sheet of the document, its
  // open shadow roots or same-origin frames names (all of them readable),
  // on an element that is not a custom one (a closed shadow root's :host
  // rule could name it) and whose own style attribute has no attr().
  const hints = new Set(['preload', 'prefetch', 'preconnect', 'dns-prefetch', 'modulepreload']);
  const hiddenHead = h => {
    if (!h || h.localName !== 'head' || h.parentNode !== h.ownerDocument.documentElement) return false;
    try { return getComputedStyle(h).display === 'none'; } catch (_) { return false; }
  };
  const quietNode = (x, inHead) => {
    if (x.nodeType === 8) return true;
    if (!inHead || x.nodeType !== 1) return false;
    switch (x.localName) {
    case 'script': case 'noscript': case 'template': return true;
    case 'link': {
      const rel = (x.getAttribute('rel') || '').toLowerCase().split(/\s+/).filter(Boolean);
      return rel.length > 0 && rel.every(v => hints.has(v));
    }
    }
    return false;
  };
  // sameRules tells whether a sheet still holds the rule objects it held
  // (an insertRule, a deleteRule or a replaceSync makes new ones).
  const sameRules = (list, rules) => list.length === rules.length && list.every((r, i) => r === rules[i]);
  // dataNames is the set of data-* names a sheet's rules hold anywhere
  // (selectors, attr()), lower case, kept while the sheet holds the same
  // rule objects (an insertRule, a deleteRule or a replaceSync makes new
  // ones); null when the sheet cannot be read (cross-origin) or a name is
  // escaped.
  const names = new WeakMap();
  const dataNames = (sh, depth) => {
    let rules;
    try { rules = sh.cssRules; } catch (_) { return null; }
    if (!rules || depth > 16) return null;
    let c = names.get(sh);
    if (c && sameRules(c.list, rules)) return c.set;
    let set = new Set();
    for (const r of rules) {
      if (r.styleSheet) {
        const sub = dataNames(r.styleSheet, depth + 1);
        if (sub === null) { set = null; break; }
        for (const x of sub) set.add(x);
      }
      const found = r.cssText.toLowerCase().match(/data-[-\w\\\u0080-\uffff]*/g);
      if (found && found.some(x => x.includes('\\'))) { set = null; break; }
      if (found) for (const x of found) set.add(x);
    }
    names.set(sh, { list: Array.from(rules), set });
    return set;
  };
  // styled tells whether a sheet names a data-* attribute; the sheets are
  // read once per batch of records (a page may set thousands at a time).
  let named;
  const styled = name => {
    if (named === undefined) {
      named = new Set();
      all: for (const root of known) for (const sh of sheetsOf(root)) {
        const set = dataNames(sh, 0);
        if (set === null) { named = null; break all; }
        for (const x of set) named.add(x);
      }
    }
    return named === null || named.has(name);
  };
  const ignored = x => !!x && x.nodeType === 1 && (x.localName === 'script' || x.localName === 'noscript' || x.localName === 'template');
  const inert = r => {
    const t = r.target;
    switch (r.type) {
    case 'childList': {
      if (ignored(t)) return true;
      const inHead = hiddenHead(t);
      for (const x of r.addedNodes) if (!quietNode(x, inHead)) return false;
      for (const x of r.removedNodes) if (!quietNode(x, inHead)) return false;
      return true;
    }
    case 'characterData':
      return t.nodeType === 8 || ignored(t.parentNode);
    case 'attributes':
      return r.attributeNamespace === null && r.attributeName.startsWith('data-') && !t.localName.includes('-') &&
        !(t.getAttribute('style') || '').includes('attr(') && !styled(r.attributeName.toLowerCase());
    }
    return false;
  };
  // count counts the records a snapshot can show. The first such change
  // since the last read marks a new base (the page as it is now) and tells
  // the server through __cbmTell, a binding of this world only (none is
  // made when the server could not add it): a snapshot it asks for next
  // walks the page at once, which is after this base, without a read first.
  // A read does not tell (tell false): it reports what it counted.
  // While told, a change of the title is told too (with the same bases),
  // so the server knows the title the page has without asking.
  let toldFrom = 0, toldTitle = '';
  const say = () => { try { globalThis.__cbmTell(JSON.stringify({ f: toldFrom, t: base.id, n: toldTitle })); } catch (_) {} };
  // Ahead of a walk. Playwright's walk asks form controls for their labels
  // (element.labels) as it names them, and again inside every row, cell or
  // other element named from its content. Blink finds a control's labels by
  // a pass over its whole document and keeps the answer until that document
  // next changes, so on a page of thousands of controls a walk after a
  // change spends most of its time there (the table fixture: about 470 of
  // 1,250 ms). After the first counted change since a read (the tell),
  // once the page has made no change for primeQuiet ms, the watch asks
  // them itself, so a snapshot that comes later finds them answered. Only
  // where those passes cost more than about 13 ms (controls × elements ≥
  // primeMin; a pass took about 13 ns a node on the table), at most once
  // per read, and not once a read came (its snapshot walks now); it tells
  // the server how many controls it asked.
  // Reading labels changes nothing; its waits are scheduler.postTask
  // delays: no timer id a page could miss among its own.
  const primeQuiet = 40, primeMin = 1e6, labelable = 'button,input:not([type=hidden]),meter,output,progress,select,textarea';
  let lastChange = 0, reads = 0;
  const later = (f, ms) => { try { scheduler.postTask(f, { delay: ms, priority: 'background' }); } catch (_) {} };
  const prime = () => {
    let k = 0;
    for (const root of known) {
      if (root.nodeType !== 9) continue; // a shadow root's controls look only inside it
      const ctls = root.querySelectorAll(labelable);
      if (ctls.length * root.getElementsByTagName('*').length < primeMin) continue;
      // Not just the list: its length is what makes Blink look.
      for (const e of ctls) void e.labels.length;
      k += ctls.length;
    }
    return k;
  };
  const armPrime = () => {
    const at = reads;
    let waits = 0;
    const tick = () => {
      if (at !== reads) return;
      const quiet = performance.now() - lastChange;
      if (quiet < primeQuiet) {
        if (++waits < 50) later(tick, primeQuiet - quiet);
        return;
      }
      const k = prime();
      if (k) try { globalThis.__cbmTell(JSON.stringify({ p: k })); } catch (_) {}
    };
    later(tick, primeQuiet);
  };
  const count = (rs, tell) => {
    named = undefined;
    let k = 0;
    for (const r of rs) if (!inert(r)) k++;
    n += k;
    if (k === 0 || !tell || !base || typeof globalThis.__cbmTell !== 'function') return;
    if (told) {
      if (document.title !== toldTitle) { toldTitle = document.title; say(); }
      return;
    }
    told = true;
    toldFrom = base.id;
    base = Object.assign(state(scan()), { id: ++id });
    toldTitle = document.title;
    say();
    armPrime();
  };
  const mo = new MutationObserver(rs => { lastChange = performance.now(); count(rs, true); });
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
    known = roots;
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
  // per sheet (kept while it holds the same rule objects); null when a sheet
  // cannot be read (cross-origin) or a selector cannot be matched.
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
  // hoverSelsOf lists, per root, the selectors of the :hover rules that can
  // show, hide or label elements, or returns null when that cannot be told.
  const hoverSelsOf = roots => {
    const out = [];
    for (const root of roots) for (const sh of sheetsOf(root)) {
      let c = hoverCache.get(sh), rules;
      try { rules = sh.cssRules; } catch (_) { return null; }
      if (!rules) return null;
      if (!c || !sameRules(c.list, rules)) {
        const sels = [];
        c = { list: Array.from(rules), sels: hoverSheetSels(sh, false, 0, sels) ? sels : null };
        hoverCache.set(sh, c);
      }
      if (!c.sels) return null;
      out.push([root, c.sels]);
    }
    return out;
  };
  // hoverMatches lists the elements :hover rules show, hide or label now,
  // given hoverSelsOf's list, or returns null when that cannot be told.
  const hoverMatches = per => {
    if (!per) return null;
    const out = [];
    for (const [root, sels] of per) for (const sel of sels) {
      try { for (const e of root.querySelectorAll(sel)) out.push(e); } catch (_) { return null; }
    }
    return out;
  };
  // unhovered is hoverMatches with nothing under the pointer, told without
  // that state: nothing, when every such selector needs an element under
  // the pointer (no list, nesting or functional pseudo-class, where :hover
  // could be negated or have an alternative); null (unknown) otherwise.
  const unhovered = per => {
    if (!per) return null;
    for (const [, sels] of per) for (const sel of sels) if (/[,(&]/.test(sel)) return null;
    return [];
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
  // state is what a base keeps of the page, from a scan. What :hover rules
  // show is read only while something is under the pointer: with nothing
  // under it (as after a navigation to a new frame host, until an action
  // points; a same-site navigation keeps the pointer where it was) it is left
  // undefined, and a later read that finds something under the pointer
  // tells it with unhovered. Reading the rules is most of a first read on
  // a page of large style sheets (12,000 rules: 70-110 ms, making their
  // wrappers in this world), which a page that is only read never needs.
  const state = s => {
    const hover = hoverChain();
    return { n, controls: s.controls, focus: deepFocus(), hover, shows: hover.length ? hoverMatches(hoverSelsOf(s.roots)) : undefined, rules: ruleCount(s.roots), href: location.href };
  };
  return (mark) => {
    count(mo.takeRecords(), false);
    told = false;
    reads++;
    const s = scan(), now = state(s);
    const { focus, hover, shows, rules, href } = now;
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
      out.h = false;
      if (!same(hover, base.hover)) {
        // The rules, read once for both (each read compares every rule).
        let per;
        const sels = () => per === undefined ? (per = hoverSelsOf(s.roots)) : per;
        const cur = shows !== undefined ? shows : hoverMatches(sels());
        if (shows === undefined) now.shows = cur;
        const was = base.shows !== undefined ? base.shows : unhovered(sels());
        out.h = !cur || !was || !same(cur, was);
      }
      out.r = rules !== base.rules || s.added > 0;
      out.u = href !== base.href;
    }
    out.a = animating(s.roots);
    if (mark) { base = Object.assign(now, { id: ++id }); out.nb = id; }
    return out;
  };
})());
return W(mark);
})
