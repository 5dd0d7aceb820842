(async function read(mark, afterAction, part) {
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
  // A toggle (a popover's, a details element's) shows or hides what is
  // under its element.
  const bump = e => { n++; const x = e && e.composedPath()[0]; dirt(x && x.nodeType === 1 && x.parentNode || null, 0); };
  // known: the roots (document, open shadow roots, same-origin frames) the
  // last scan found, whose sheets the data-* names come from; a root that
  // went is dropped at the next scan.
  let known = [];
  // sealed: the frames of the document's own tree (not of a shadow root or
  // another frame) the last scan could not enter (another origin's, a
  // sandboxed one): walked as parts of their own at every read that asks
  // for parts (partRoots), as the watch cannot see what changed in them.
  let sealed = [];
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
  // rule could name it) and whose own style attribute has no attr(); on
  // such an element, a class attribute that gained or lost only classes no
  // rule that can change a walk names (classQuiet: a font loader's class
  // on the root, a lazy loader's fade-in, a scrolled header's shadow).
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
  // A sheet still holds the rule objects it held when same(list, its
  // cssRules): an insertRule, a deleteRule or a replaceSync makes new ones.
  // sheetFacts is what a sheet's rules (and those of the sheets they
  // import) hold, kept while it holds the same rule objects; null when the
  // sheet cannot be read (cross-origin) or nests too deep. names: the data-*
  // names anywhere in them (selectors, attr()), lower case, or null when a
  // name is escaped. cls: the class names (lower case, unescaped) in the
  // rules that can change what a walk shows (shows), or null when such a
  // rule reads the class attribute itself ([class…], attr()): a class that
  // none of them names can only colour, fade or space its element (or
  // nothing). flags: what a part of the page cannot hold (partRoots),
  // each only from a rule that can change what a walk shows (shows): HAS a
  // selector that looks down (:has) or a container query, EMPTY :empty,
  // FOCUS_SHOWS a :focus rule, VALIDITY a form-validity pseudo-class (it
  // matches the form and fieldsets around a control too), SIBLING a sibling
  // combinator (or a + or ~ anywhere in a selector), NTH a pseudo-class of
  // a child's place among its siblings (:first-child, :nth-of-type, …),
  // TARGET a :target rule (what the URL's fragment names);
  // null when an imported sheet cannot be read.
  const HAS = 1, EMPTY = 2, FOCUS_SHOWS = 4, VALIDITY = 8, SIBLING = 16, NTH = 32, TARGET = 64;
  // shows tells whether a rule's text sets a property that can change what
  // Playwright's walk shows: whether an element is there (display,
  // visibility, content-visibility), its box empty or not (its size, the
  // size of its text, its padding or border width, a flex or grid sizing,
  // a transform), a pseudo-element's text, the pointer cursor its marks
  // carry, whether it takes the pointer; a custom property may feed any of
  // them; an animation may set any of them as it runs or once it ended
  // (fill: forwards), and a size container has no size of its own. A rule
  // that only colours, rounds, shadows, fades or spaces with margins (as
  // most rules with these selectors do) cannot.
  const shows = t => /(^|[\s{;])(-[a-z]+-)?(--[\w-]+|all|animation(-name)?|container(-type)?|display|visibility|content(-visibility)?|cursor|pointer-events|(min-|max-)?(width|height)|(min-|max-)?(inline|block)-size|aspect-ratio|box-sizing|font(-size)?|line-height|padding[-a-z]*|border(-(top|right|bottom|left|block|inline)(-(start|end))?)?(-(width|style))?|flex[-a-z]*|grid[-a-z]*|(align|justify|place)-[a-z]+|float|transform|scale|zoom|inset[-a-z]*|position|overflow[-a-z]*|clip(-path)?|contain[-a-z]*)\s*:/i.test(t);
  // classToken finds the class names in a rule's text (and some words of
  // its values, as in url(a.png): more names only count more changes).
  const classToken = /\.((?:\\[0-9a-fA-F]{1,6}\s?|\\[^\n0-9a-fA-F]|[-\w\u0080-\uffff])+)/g;
  const unescapeCSS = x => x.replace(/\\([0-9a-fA-F]{1,6})\s?|\\(.)/g, (_, h, c) => {
    if (!h) return c;
    const n = parseInt(h, 16);
    return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : '\ufffd';
  });
  const facts = new WeakMap();
  const sheetFacts = (sh, depth) => {
    let rules;
    try { rules = sh.cssRules; } catch (_) { return null; }
    if (!rules || depth > 16) return null;
    const c = facts.get(sh);
    if (c && same(c.list, rules)) return c;
    let names = new Set(), flags = 0, cls = new Set();
    for (const r of rules) {
      if (r.styleSheet) {
        const sub = sheetFacts(r.styleSheet, depth + 1);
        if (sub === null || sub.flags === null) { names = null; flags = null; cls = null; break; }
        if (sub.names === null) names = null;
        else if (names) for (const x of sub.names) names.add(x);
        if (sub.cls === null) cls = null;
        else if (cls) for (const x of sub.cls) cls.add(x);
        flags |= sub.flags;
      }
      const t = r.cssText;
      if (names) {
        const found = t.toLowerCase().match(/data-[-\w\\\u0080-\uffff]*/g);
        if (found && found.some(x => x.includes('\\'))) names = null;
        else if (found) for (const x of found) names.add(x);
      }
      if (!shows(t)) continue;
      if (cls) {
        if (/\[\s*class\b|attr\(/i.test(t)) cls = null;
        else for (const m of t.matchAll(classToken)) cls.add(unescapeCSS(m[1]).toLowerCase());
      }
      if (/:has\(|@container/i.test(t)) flags |= HAS;
      if (/:empty\b/i.test(t)) flags |= EMPTY;
      if (/:focus/i.test(t)) flags |= FOCUS_SHOWS;
      if (/:(user-)?(in)?valid\b/i.test(t)) flags |= VALIDITY;
      if (/:(first|last|only|nth)-/i.test(t)) flags |= NTH;
      if (/:target\b/i.test(t)) flags |= TARGET;
      if (typeof r.selectorText === 'string' ? /[+~]/.test(r.selectorText) : /[+~][^{]*\{/.test(t)) flags |= SIBLING;
    }
    const out = { list: Array.from(rules), names, flags, cls };
    facts.set(sh, out);
    return out;
  };
  // styled tells whether a sheet names a data-* attribute; the sheets are
  // read once per batch of records (a page may set thousands at a time).
  let named;
  const styled = name => {
    if (named === undefined) {
      named = new Set();
      all: for (const root of known) for (const sh of sheetsOf(root)) {
        const f = sheetFacts(sh, 0);
        if (!f || f.names === null) { named = null; break all; }
        for (const x of f.names) named.add(x);
      }
    }
    return named === null || named.has(name);
  };
  // classShows tells whether a sheet's rule that can change what a walk
  // shows names a class (read once per batch of records, like styled).
  // Each sheet's own set is asked (no union: a page may toggle classes at
  // every frame, under sheets naming thousands).
  let classNamed;
  const classShows = name => {
    if (classNamed === undefined) {
      classNamed = [];
      all: for (const root of known) for (const sh of sheetsOf(root)) {
        const f = sheetFacts(sh, 0);
        if (!f || f.cls === null) { classNamed = null; break all; }
        if (f.cls.size) classNamed.push(f.cls);
      }
    }
    return classNamed === null || classNamed.some(c => c.has(name));
  };
  // classQuiet tells whether a class attribute's change (from old to what
  // it is now) added or removed only classes no such rule names.
  const classTokens = v => new Set((v || '').toLowerCase().split(/[ \t\n\f\r]+/).filter(Boolean));
  const classQuiet = (t, old) => {
    const was = classTokens(old), now = classTokens(t.getAttribute('class'));
    for (const x of was) if (!now.has(x) && classShows(x)) return false;
    for (const x of now) if (!was.has(x) && classShows(x)) return false;
    return true;
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
      if (r.attributeNamespace !== null || t.localName.includes('-') || (t.getAttribute('style') || '').includes('attr(')) return false;
      if (r.attributeName === 'class') return classQuiet(t, r.oldValue);
      return r.attributeName.startsWith('data-') && !styled(r.attributeName.toLowerCase());
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
  // np: why no part of the page can hold the changes since toldFrom (nor,
  // then, since any base before it), if none can.
  let toldNoPart = '';
  const say = () => { try { globalThis.__cbmTell(JSON.stringify({ f: toldFrom, t: base.id, n: toldTitle, np: toldNoPart || undefined })); } catch (_) {} };
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
  // the server how many controls it asked. Not where the last read that
  // marked a base asked for parts (partsAsked) and parts can hold the
  // changes since the tell: their walks ask only their own controls.
  // Reading labels changes nothing; its waits are scheduler.postTask
  // delays: no timer id a page could miss among its own.
  const primeQuiet = 40, primeMin = 1e6, labelable = 'button,input:not([type=hidden]),meter,output,progress,select,textarea';
  let lastChange = 0, reads = 0, partsAsked = false;
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
      // A snapshot that walks only parts asks just their controls.
      if (partsAsked && typeof partRoots(toldFrom, '') === 'object') return;
      const k = prime();
      if (k) try { globalThis.__cbmTell(JSON.stringify({ p: k })); } catch (_) {}
    };
    later(tick, primeQuiet);
  };
  // What changed, for a snapshot of only the part of the page that did
  // (session/page/splice.go). Each counted change leaves the element whose
  // subtree holds all it can alter (dirt), stamped with the newest base
  // before it: the changes since base b are those stamped b or later. null
  // stands for a change no part can hold (a style sheet's, a toggle, an id
  // other elements may name). Form controls whose state changed and the
  // element focus moved to are added as a base is marked (link). The chain:
  // quietFrom is the oldest base since which nothing but such changes
  // happened (no hover, rule, URL, animation or frame change, no focus
  // lost to the page).
  // A dirt entry's flags: FOCUSED focus moved (its element is FOCUS);
  // CONTROL a form control's state changed; ATTR a change a sibling
  // combinator carries to the siblings after it (its part is then its
  // parent's); APPENDED an element added at the end of the body; INSERTED
  // an element added among others (its part is itself, put beside a
  // sibling's lines, where it can be).
  const FOCUSED = 1, CONTROL = 2, ATTR = 4, APPENDED = 8, INSERTED = 16;
  // The kinds of part a read reports (watch.go: PartReplace and the rest).
  const PART_REPLACE = 0, PART_APPEND = 1, PART_RENAMED = 2, PART_AFTER = 3, PART_BEFORE = 4, PART_GONE = 5;
  const id0 = id;
  let quietFrom = Infinity, quietWhy = 'no base';
  const dirty = [], FOCUS = {};
  const dirt = (x, f) => { dirty.push([id, x, f]); if (dirty.length > 4096) compact(); };
  // lift is the element of the main document's light tree whose subtree
  // holds x: x itself, a text node's parent, a shadow tree's host;
  // null for a node of another document or none.
  const lift = x => {
    let e = x && x.nodeType === 1 ? x : x && x.parentNode;
    for (let i = 0; e && i < 64; i++) {
      if (e.nodeType === 9) return e === document ? e.documentElement : null;
      if (e.nodeType === 11) { e = e.host || null; continue; }
      if (e.nodeType !== 1) return null;
      const root = e.getRootNode();
      if (root === document) return e;
      if (!root.host) return null;
      e = root.host;
    }
    return null;
  };
  const lca = (a, b) => {
    for (let x = a; x; x = x.parentNode) if (x.contains(b)) return x.nodeType === 1 ? x : null;
    return null;
  };
  // compact folds the list into one entry (a page that changes a lot
  // between snapshots): the oldest stamp, the elements' common ancestor.
  const compact = () => {
    let st = Infinity, r, f = 0, poison = false;
    for (const [s, x, ff] of dirty) {
      st = Math.min(st, s); f |= ff;
      if (poison || x === FOCUS) continue;
      if (x === null) { poison = true; continue; }
      if (!x.isConnected) continue;
      const e = lift(x);
      r = e && (r === undefined ? e : lca(r, e));
      if (!r) poison = true;
    }
    dirty.length = 0;
    dirty.push([st, poison ? null : r === undefined ? FOCUS : r, f & ~(APPENDED | INSERTED)]);
  };
  const inHiddenHead = x => { const h = document.head; return !!h && h.contains(x) && hiddenHead(h); };
  const sheetNode = x => x.nodeType === 1 && (x.localName === 'style' || x.localName === 'base' ||
    (x.localName === 'link' && /\bstylesheet\b/i.test(x.getAttribute('rel') || '')));
  // Attributes that name other elements, or that other elements name.
  const refAttrs = new Set(['id', 'for', 'aria-labelledby', 'aria-owns', 'slot']);
  // namedOut tells whether a removed node took a name away from an element
  // elsewhere: it holds a label with for, or an element whose id an
  // aria-labelledby names (past 32 ids, taken as so).
  const namedOut = x => {
    if (x.nodeType !== 1) return false;
    if (x.matches('label[for]') || x.querySelector('label[for]')) return true;
    const ids = x.id ? [x] : [];
    for (const e of x.querySelectorAll('[id]')) { ids.push(e); if (ids.length > 32) return true; }
    for (const e of ids) if (document.querySelector('[aria-labelledby~="' + CSS.escape(e.id) + '"]')) return true;
    return false;
  };
  // appended tells whether a record only added nodes at the end of the
  // body (a toast, a dialog, a portal's container): each added element is
  // left as dirt of its own (APPENDED), a part of the page added after the
  // last snapshot's lines (partRoots), as the body's own part would be the
  // whole page.
  const blank = x => x.nodeType === 8 || (x.nodeType === 3 && !x.data.trim());
  const appended = r => {
    if (r.type !== 'childList' || r.target !== document.body || r.nextSibling !== null) return false;
    for (const x of r.removedNodes) if (!blank(x)) return false;
    for (const x of r.addedNodes) if (x.nodeType !== 1 && !blank(x)) return false;
    return true;
  };
  // insertedOnly tells whether a record only added elements to an element
  // (each is then dirt of its own: INSERTED).
  const insertedOnly = r => {
    if (r.type !== 'childList' || r.target.nodeType !== 1 || r.target === document.body) return false;
    let k = 0;
    for (const x of r.removedNodes) if (!blank(x)) return false;
    for (const x of r.addedNodes) if (x.nodeType === 1) k++; else if (!blank(x)) return false;
    return k > 0;
  };
  // touched is the element a counted record leaves as dirt; undefined for
  // none (the head the page does not show, save its sheets); null when no
  // part can hold it. Sibling selectors: an attribute leaves its element's
  // parent when a sheet has a sibling combinator (ATTR: partRoots); a
  // child list its own element (widened to the parent as well when a sheet
  // has :empty, which also reaches siblings).
  const touched = r => {
    const t = r.target;
    if (t.nodeType === 1 && sheetNode(t)) return null;
    if (t.parentNode && t.parentNode.nodeType === 1 && sheetNode(t.parentNode)) return null;
    if (r.type === 'childList') {
      for (const x of r.addedNodes) if (sheetNode(x)) return null;
      for (const x of r.removedNodes) if (sheetNode(x) || namedOut(x)) return null;
      if (inHiddenHead(t)) return undefined;
      return t;
    }
    if (r.type === 'characterData') return inHiddenHead(t) ? undefined : t.parentNode || undefined;
    if (refAttrs.has(r.attributeName) || t.localName === 'link') return null;
    if (inHiddenHead(t)) return undefined;
    return t;
  };
  // link notes what changed between base old and the state now (of scan
  // s): the controls whose state changed (a sibling can be styled by
  // :checked: ATTR as for attributes), that focus moved, the hosts of
  // shadow roots found since (a component attached one as it was added or
  // upgraded: what it holds and styles, its slots and :host rules, is the
  // host's subtree; no record tells what it held before it was observed);
  // and why the chain breaks there ('' if it does not): a new document
  // (a same-origin frame's) still does.
  const link = (old, s, now, hovered, anim) => {
    for (const [e, k] of s.controls) if (old.controls.get(e) !== k) dirt(e, CONTROL | ATTR);
    if (now.focus !== old.focus) {
      // Focus lost to the page (its body) is marked on the body's line,
      // where there is one (partRoots).
      const fe = now.focus;
      if (!fe || fe === document.documentElement) return 'focus';
      dirt(FOCUS, FOCUSED);
    }
    if (s.added === s.fresh.size) for (const r of s.fresh) dirt(r.host, 0);
    return hovered ? 'hover' : anim ? 'animation' : s.added > s.fresh.size || (now.rules !== old.rules && !rulesAdded(old.ends, s.roots, s.fresh)) || rulesEdited(old, now) ? 'rules' :
      urlShows(old.href, now.href) ? 'url' : s.foreign > 0 ? 'frames' : '';
  };
  // urlShows tells whether the URL's change from a to b can change what a
  // walk shows: a walk reads links' href attributes as written, never the
  // document's URL, which CSS sees only as the element its fragment names
  // (:target). So only a new fragment under a :target rule that can show
  // can (pushState, replaceState and a router's new path cannot; what the
  // router then renders is a change of its own).
  const frag = u => { const i = u.indexOf('#'); return i < 0 ? '' : u.slice(i); };
  const urlShows = (a, b) => {
    if (a === b || frag(a) === frag(b)) return false;
    const f = flags();
    return f === null || (f & TARGET) !== 0;
  };
  // rulesAdded tells whether the style rules changed since a base whose
  // sheets ended as ends says only by rules added (as CSS-in-JS libraries
  // insert a component's rules: emotion at the end of its sheet,
  // styled-components by its group's place), each of which styles few
  // elements now: those are then changes of theirs (dirt). Among the rules
  // of a sheet of up to printMax rules, a new rule may be anywhere; in a
  // larger one, only at its end. A rule removed or moved, an import, a
  // selector that cannot be matched, or more than 64 elements styled, and
  // it does not. The sheets
  // of shadow roots found since (fresh) style only their hosts' subtrees,
  // which are changes already (link).
  const rulesAdded = (ends, roots, fresh) => {
    if (!ends) return false;
    const hit = new Set(), seen = new Set();
    const styles = (r, root, depth) => {
      if (r.styleSheet || depth > 8) return false;
      if (typeof r.selectorText === 'string') {
        let els;
        try { els = root.querySelectorAll(r.selectorText.replace(pseudo, '') || '*'); } catch (_) { return false; }
        for (const e of els) { hit.add(e); if (hit.size > 64) return false; }
      }
      if (r.cssRules) for (const c of r.cssRules) if (!styles(c, root, depth + 1)) return false;
      return true;
    };
    for (const root of roots) for (const sh of fresh.has(root) ? [] : sheetsOf(root)) {
      seen.add(sh);
      let rules;
      try { rules = sh.cssRules; } catch (_) { return false; }
      const was = ends.get(sh), list = was && was.rules;
      if (list) {
        // The rules the base knew, each still there and in their order:
        // the others were inserted (anywhere, as styled-components puts
        // a component's rules by its group's place).
        let j = 0;
        for (let i = 0; i < rules.length; i++) {
          if (j < list.length && rules[i] === list[j]) j++;
          else if (!styles(rules[i], root, 0)) return false;
        }
        if (j < list.length) return false;
        continue;
      }
      if (was && (rules.length < was.k || (was.k > 0 && rules[was.k - 1] !== was.last))) return false;
      for (let i = was ? was.k : 0; i < rules.length; i++) if (!styles(rules[i], root, 0)) return false;
    }
    for (const sh of ends.keys()) if (!seen.has(sh)) return false;
    for (const e of hit) dirt(e, 0);
    return true;
  };
  // flags are the sheetFacts flags of every sheet the last scan found;
  // null when one cannot be read.
  const flags = () => {
    let f = 0;
    for (const root of known) for (const sh of sheetsOf(root)) {
      const x = sheetFacts(sh, 0);
      if (!x || x.flags === null) return null;
      f |= x.flags;
    }
    return f;
  };
  const roles = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'row', 'rowheader', 'switch', 'tab', 'tooltip', 'treeitem']);
  const tags = new Set(['a', 'area', 'button', 'summary', 'td', 'th', 'tr', 'option', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'label']);
  // fromContent tells whether an element's name can come from its content (1),
  // or its parent's name from it (2: a legend, a caption, an svg title).
  const fromContent = a => {
    for (const r of (a.getAttribute('role') || '').toLowerCase().split(/\s+/)) if (roles.has(r)) return 1;
    const t = a.localName;
    if (t === 'legend' || t === 'caption' || t === 'figcaption' || (t === 'title' && a.namespaceURI === 'http://www.w3.org/2000/svg')) return 2;
    return tags.has(t) ? 1 : 0;
  };
  // Elements whose role is never generic wherever they are (or that say
  // their role), which an AI snapshot never folds into their parent. Not
  // pre, dl or address: Playwright gives them no role (generic), and a
  // walk of one of them alone unwraps it when it holds one element, so its
  // lines would stand for that element's only.
  const standTags = new Set(['ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tfoot', 'nav', 'main', 'aside', 'article', 'fieldset',
    'dialog', 'p', 'blockquote', 'figure', 'details', 'select', 'textarea', 'menu', 'search']);
  const stands = a => {
    const r = (a.getAttribute('role') || '').trim().toLowerCase();
    if (r) return !/^(generic|none|presentation|img|image)\b/.test(r);
    switch (a.localName) {
    case 'section': case 'form': return a.hasAttribute('aria-label');
    case 'header': case 'footer': return !a.parentElement.closest('article,aside,main,nav,section');
    }
    return standTags.has(a.localName);
  };
  // renamable tells whether an element whose name its content gives is
  // one the AI snapshot shows on a line of its own wherever it is, so a
  // part walk can take its lines' place though its name, and so its ref,
  // changed: a row or cell of a table that is one, a link, a button, a
  // heading, or an element whose role says so.
  const renamable = a => {
    const r = (a.getAttribute('role') || '').trim().toLowerCase();
    if (r) return roles.has(r.split(/\s+/)[0]);
    switch (a.localName) {
    case 'a': return a.hasAttribute('href');
    case 'tr': case 'td': case 'th': {
      const t = a.closest('table'), tr = t && (t.getAttribute('role') || '').trim().toLowerCase();
      return !!t && (!tr || tr === 'table' || tr === 'grid' || tr === 'treegrid');
    }
    }
    return a.localName === 'button' || /^h[1-6]$/.test(a.localName);
  };
  // rootFor is the element a part walk must cover for a change under e,
  // and its kind (PART_RENAMED where its name may have changed, else
  // PART_REPLACE): the topmost element
  // whose name its content gives (a link, a row, a label, a fieldset's
  // legend: their names, and so their refs, may have changed) where it is
  // renamable (its lines are then found by the ref it had, which the
  // hand-off engine reads); else above it, at one that stands on its own.
  const rootFor = (e, tail) => {
    let R = e, top = null, k2 = false;
    for (let a = e; a && a !== document.body; a = a.parentElement) {
      const k = fromContent(a);
      if (k) { R = a.parentElement; top = a; k2 = k === 2; }
      if (k === 2 && R) R = R.parentElement;
    }
    if (top && !k2 && renamable(top)) return [top, PART_RENAMED];
    while (R && R !== document.body && !stands(R) && !tail.has(R)) R = R.parentElement;
    return [R, PART_REPLACE];
  };
  // lined tells whether an element shows on a line of its own wherever it
  // is (when shown at all).
  const lined = a => stands(a) || (fromContent(a) === 1 && renamable(a));
  // anchorOf is where an inserted element X's lines go: [its previous
  // sibling, PART_AFTER] (after that sibling's lines, or the lines of the
  // part before it when that sibling was inserted too) or, X first, [its
  // next sibling not inserted (others holds those inserted), PART_BEFORE]
  // (before its lines); only blank text, comments, scripts between. null unless X and
  // that sibling each show on a line of their own, and their parent
  // stands, named by nothing it holds (no line above them changes).
  const anchorOf = (X, others) => {
    const C = X.parentElement;
    if (!C || C === document.body || !stands(C) || !lined(X)) return null;
    for (let a = C; a && a !== document.body; a = a.parentElement) if (fromContent(a)) return null;
    const near = next => {
      for (let y = next ? X.nextSibling : X.previousSibling; y; y = next ? y.nextSibling : y.previousSibling) {
        if (blank(y) || ignored(y) || (next && others.has(y))) continue;
        return y.nodeType === 1 && lined(y) ? y : null;
      }
      return undefined;
    };
    const p = near(false);
    if (p) return [p, PART_AFTER];
    if (p === null) return null;
    const n = near(true);
    return n ? [n, PART_BEFORE] : null;
  };
  // partRoots lists the elements walks of only parts of the page must
  // cover for the changes since base since, in document order, or says why
  // there are none (a string): for each change rootFor, and the element
  // focus moved to (its focus mark); those another holds are left out.
  // Refused where something outside a part would show what changed in it
  // (a name taken by reference or by a label's for, an owner, a slot), in a
  // frame, at the page's root, or past maxParts parts that nothing short
  // of the body holds together. (A pointer cursor
  // an ancestor's line shows takes the marks off the part's lines: the
  // splice knows it from the last snapshot, snapshot.fitCursor.)
  const maxParts = 4;
  const hasBox = e => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
  const partRoots = (since, brk, stood) => {
    if (!(since > id0 && since <= id)) return 'base';
    if (brk) return brk;
    if (quietFrom > since) return 'since ' + quietWhy;
    let f = 0;
    const hit = [], tail = new Set(), ins = [];
    for (const [s, x, ff] of dirty) {
      if (s < since) continue;
      f |= ff;
      if (x === FOCUS) continue;
      if (x === null) return 'poison';
      if (!x.isConnected) continue;
      if ((ff & APPENDED) && x.parentNode === document.body) { tail.add(x); continue; }
      if ((ff & INSERTED) && x.parentNode && x.parentNode.nodeType === 1 && x.getRootNode() === document) { ins.push(x); continue; }
      const e = lift(x);
      if (!e) return 'lift';
      hit.push([e, ff]);
    }
    // Each sealed frame that can show its document (one of no box shows
    // none of it) is walked again, unless each sealed frame's own watch
    // found it the same (stood). Its lines are found by its ref: its name
    // never comes from the frame's content, and a change of the frame
    // element itself is a change of a part that holds a frame (refused).
    const frames = new Set(stood === sealed.length ? [] : sealed.filter(F => F.isConnected && F.checkVisibility({ visibilityProperty: true }) && hasBox(F)));
    if (!hit.length && !tail.size && !ins.length && !(f & FOCUSED) && !frames.size) return 'none';
    // The elements added at the end of the body must be all that follows
    // the first of them (bar what a walk never shows).
    if (tail.size) {
      let seen = false;
      for (let x = document.body.firstChild; x; x = x.nextSibling) {
        if (tail.has(x)) { seen = true; continue; }
        if (seen && !blank(x) && !ignored(x) && !(x.nodeType === 1 && x.localName === 'style')) return 'tail';
      }
    }
    const fl = flags();
    if (fl === null) return 'sheets';
    // Each inserted element goes beside a sibling's lines where it can;
    // else its parent holds the change.
    const inserted = new Map(), others = new Set(ins);
    for (const X of ins) {
      const at = (fl & (SIBLING | NTH | EMPTY)) ? null : anchorOf(X, others);
      if (at) inserted.set(X, at);
      else hit.push([X.parentElement, 0]);
    }
    // Each change's element, and whether a sibling combinator carries it
    // to the siblings after it (its part is its parent's then).
    const els = new Map();
    for (const [e, ff] of hit) {
      const sib = (ff & ATTR) && (fl & SIBLING) && !!e.parentElement;
      els.set(e, els.get(e) || sib);
    }
    if ((fl & HAS) || ((fl & FOCUS_SHOWS) && (f & FOCUSED)) || ((fl & VALIDITY) && (f & CONTROL))) return 'selectors';
    const body = document.body;
    let roots = [];
    const add = P => {
      if (!P || !body || P === body || !body.contains(P)) return false;
      for (const Q of roots) if (Q.contains(P)) return true;
      roots = roots.filter(Q => !P.contains(Q));
      roots.push(P);
      return true;
    };
    for (const x of tail) add(x);
    const renamed = new Set();
    for (const [e, sib] of els) {
      const [R, k] = rootFor(sib || (fl & EMPTY) ? e.parentElement || e : e, tail);
      if (!add(R)) return 'root';
      if (k === PART_RENAMED) renamed.add(R);
    }
    for (const X of inserted.keys()) { add(X); els.set(X, false); }
    for (const F of frames) if (!add(F)) return 'root';
    // Focus that moved into a sealed frame walked again is marked by its
    // walk.
    const into = (f & FOCUSED) ? deepFocus() : null;
    // Focus on the body (lost to the page: its element blurred or taken
    // away) needs no part: the marks go off, and the body's line, where
    // the snapshot has one, takes it (body).
    const onBody = (f & FOCUSED) !== 0 && into === body;
    if ((f & FOCUSED) && !onBody && !(into && frames.has(into))) {
      const F = lift(into);
      if (!F || F === body || F === document.documentElement) return 'focus';
      let P = F;
      while (P && P !== body && !stands(P) && !/^(a|button|input|textarea|select|summary)$/.test(P.localName)) P = P.parentElement;
      if (!add(P)) return 'root';
    }
    if (!roots.length && !onBody) return 'none';
    if (roots.length > maxParts) {
      // Many parts in one place (a table's cells, a list's items, boxes
      // ticked together): the element that holds them all, up to one that
      // stands on its own (rootFor), is one part, if not the body. Not
      // with parts that go beside others' lines (added ones, frames).
      if (tail.size || inserted.size || frames.size) return 'parts';
      let L = roots[0];
      for (const P of roots) if (!(L = lca(L, P))) return 'parts';
      const [R, k] = rootFor(L, tail);
      if (!add(R) || roots.length !== 1) return 'parts';
      renamed.clear();
      if (k === PART_RENAMED) renamed.add(R);
    }
    if (document.querySelector('[aria-owns]')) return 'owns';
    const held = document.querySelectorAll('[aria-labelledby]');
    // Whether what x shows may have changed: it holds a change or is in one
    // (or in a sibling after one a sibling combinator reaches).
    const changed = x => {
      for (const [e, sib] of els) {
        if (x.contains(e) || e.contains(x)) return true;
        if (sib && e.parentElement.contains(x) && (e.compareDocumentPosition(x) & Node.DOCUMENT_POSITION_FOLLOWING)) return true;
      }
      return false;
    };
    // A part may hold an iframe: Playwright's walk of the part walks its
    // document as a walk of the page does (refs prefixed alike); the server
    // walks the page instead while a frame's document has not arrived or a
    // frame is busy (Read.PartFrames). A frameset's frames are not parts.
    let heldFrames = false;
    for (const P of roots) {
      for (let a = P; a; a = a.parentElement) if (a.assignedSlot) return 'slot';
      if (P.localName === 'frame' || P.querySelector('frame')) return 'frame';
      if (!frames.has(P) && (P.localName === 'iframe' || P.querySelector('iframe'))) heldFrames = true;
      for (const e of held) {
        if (P.contains(e)) continue;
        for (const x of e.getAttribute('aria-labelledby').split(/\s+/)) {
          const t = x && document.getElementById(x);
          if (t && (P.contains(t) || t.contains(P)) && changed(t)) return 'labelledby';
        }
      }
      for (const l of [P, ...P.querySelectorAll('label[for]')]) {
        if (l.localName !== 'label' || !l.htmlFor) continue;
        const c = document.getElementById(l.htmlFor);
        if (c && !P.contains(c) && changed(l)) return 'label';
      }
    }
    roots.sort((a, b) => a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
    const kinds = roots.map(P => tail.has(P) ? PART_APPEND : inserted.has(P) ? inserted.get(P)[1] : renamed.has(P) ? PART_RENAMED : PART_REPLACE);
    // A part that shows nothing now (display: none, a hidden attribute)
    // leaves its lines (PART_GONE); one of no box or hidden by visibility
    // may show its children in its place: the page is walked then.
    for (let i = 0; i < roots.length; i++) {
      if (kinds[i] !== PART_REPLACE && kinds[i] !== PART_RENAMED) continue;
      const P = roots[i];
      if (!P.checkVisibility()) { kinds[i] = PART_GONE; continue; }
      if (!hasBox(P) || !P.checkVisibility({ visibilityProperty: true })) return 'hidden';
    }
    return { roots, f, kinds, anchors: roots.map(P => inserted.has(P) ? inserted.get(P)[0] : null), body: onBody, frames: heldFrames };
  };
  const count = (rs, tell) => {
    named = classNamed = undefined;
    let k = 0;
    for (const r of rs) {
      if (inert(r)) continue;
      k++;
      if (appended(r)) {
        for (const x of r.addedNodes) if (x.nodeType === 1) dirt(x, APPENDED);
        continue;
      }
      const x = touched(r);
      if (x && insertedOnly(r)) {
        for (const y of r.addedNodes) if (y.nodeType === 1) dirt(y, INSERTED);
        continue;
      }
      if (x !== undefined) dirt(x, r.type === 'attributes' ? ATTR : 0);
    }
    n += k;
    if (k === 0 || !tell || !base || typeof globalThis.__cbmTell !== 'function') return;
    if (told) {
      if (document.title !== toldTitle) { toldTitle = document.title; say(); }
      return;
    }
    told = true;
    toldFrom = base.id;
    const sc = scan(), now = state(sc);
    const brk = link(base, sc, now, hoverShows(base, sc, now), animShows(base, now));
    const p = partRoots(toldFrom, brk);
    toldNoPart = typeof p === 'string' ? p : '';
    base = Object.assign(now, { id: ++id });
    if (brk) { quietFrom = id; quietWhy = brk; }
    toldTitle = document.title;
    say();
    armPrime();
  };
  const mo = new MutationObserver(rs => { lastChange = performance.now(); count(rs, true); });
  const observe = r => {
    if (seen.has(r)) return false;
    seen.add(r);
    mo.observe(r, { subtree: true, childList: true, attributes: true, attributeOldValue: true, characterData: true });
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
    // fresh: the shadow roots found by this scan (observed from now on).
    const fresh = new Set();
    const sl = [];
    const visit = root => {
      if (observe(root)) { added++; if (root.nodeType === 11) fresh.add(root); }
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
          if (d) visit(d);
          else if (root === document && e.localName === 'iframe') sl.push(e);
          else foreign++;
        }
        }
      }
    };
    visit(document);
    known = roots;
    sealed = sl;
    return { roots, controls, foreign, added, fresh, sealed: sl.length };
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
      if (!c || !same(c.list, rules)) {
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
  // animsOf finds the animations of roots that can change what a walk
  // shows (a transition of such a property, keyframes that set one): run,
  // whether one is running (or about to), and live, those in effect,
  // running or not (a finished one that fills forwards holds its last
  // keyframe). None of them is a mutation: el.animate() starting and
  // ending between two reads, or a running one ending, changes the page
  // with no record (animShows).
  //
  // What an effect's keyframes set is kept (kfShows) once it stops
  // running: a page of cards that each faded in (fill: forwards) holds
  // hundreds of finished animations, whose keyframes cost 7–12 ms a read
  // for 300 of them. A finished effect given new keyframes by a script
  // (setKeyframes) is not seen then; a @keyframes rule edited is a change
  // of the rules.
  const kfShows = new WeakMap();
  const animsOf = roots => {
    const live = new Set();
    let run = false;
    for (const root of roots) {
      if (!root.getAnimations) continue;
      for (const an of root.getAnimations()) {
        const running = an.playState === 'running' || an.pending, ef = an.effect;
        let shows = false;
        if (typeof an.transitionProperty === 'string') shows = shown.includes(an.transitionProperty);
        else if (!running && ef && kfShows.has(ef)) shows = kfShows.get(ef);
        else {
          let kf = null;
          try { kf = ef && ef.getKeyframes(); } catch (_) { shows = true; }
          if (kf) for (const k of kf) for (const p of animKeys) if (p in k) shows = true;
          if (ef) kfShows.set(ef, shows);
        }
        if (!shows) continue;
        live.add(an);
        if (running) run = true;
      }
    }
    return { run, live };
  };
  // animShows tells whether animations can have changed what a walk shows
  // between base old and the state now: one runs now, or ran at the base
  // (its snapshot showed a moment of it), or those in effect differ (one
  // started and ended since, or one the base held was cancelled).
  const animShows = (old, now) => {
    if (now.animRun || old.animRun || now.anims.size !== old.anims.size) return true;
    for (const an of now.anims) if (!old.anims.has(an)) return true;
    return false;
  };
  // sheetEnds counts the sheets and rules of roots, and keeps each sheet's
  // length, last rule, print and, where it printed, its rules
  // (rulesAdded, rulesEdited).
  const sheetEnds = roots => {
    let c = 0;
    const ends = new Map();
    for (const root of roots) for (const sh of sheetsOf(root)) {
      c++;
      try {
        const rs = sh.cssRules, k = rs.length, p = sheetPrint(rs, k);
        c += k;
        ends.set(sh, { k, last: k ? rs[k - 1] : null, print: p, rules: p === null ? null : Array.from(rs) });
      } catch (_) {}
    }
    return { c, ends };
  };
  // sheetPrint is the text of a sheet's first k rules, which a script can
  // edit in place (rule.style.display = 'none', as JSS sets its dynamic
  // values) with no change a MutationObserver or the rule count shows;
  // null past printMax rules (large static sheets, left unread: a read
  // would serialise every rule). The text itself, not a hash of it: two
  // strings compare faster than one is hashed character by character (the
  // hash was 1.8 of 9.9 ms of a first read's own JavaScript on the article
  // fixture, in a renderer profile).
  const printMax = 400;
  const sheetPrint = (rs, k) => {
    if (rs.length > printMax) return null;
    let t = '';
    for (let i = 0; i < k; i++) t += rs[i].cssText + '\n';
    return t;
  };
  // rulesEdited tells whether a sheet of base old had a rule edited in
  // place by the state now (its first rules print otherwise): from now's
  // print where the sheet kept its length, else printed again.
  const rulesEdited = (old, now) => {
    if (!old.ends) return false;
    for (const [sh, { k, print, rules }] of old.ends) {
      if (print === null) continue;
      const e = now.ends && now.ends.get(sh);
      if (e && e.k === k) {
        if (e.print !== print) return true;
        continue;
      }
      // Rules inserted or removed: the base's own rules (a sheet that
      // printed kept them: sheetEnds), printed again.
      if (sheetPrint(rules, k) !== print) return true;
    }
    return false;
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
    const hover = hoverChain(), se = sheetEnds(s.roots), am = animsOf(s.roots);
    return { n, controls: s.controls, focus: deepFocus(), hover, shows: hover.length ? hoverMatches(hoverSelsOf(s.roots)) : undefined, rules: se.c, ends: se.ends, href: location.href, anims: am.live, animRun: am.run };
  };
  // hoverShows tells whether what :hover rules show differs between base
  // old and the state now (of scan s), which it completes.
  const hoverShows = (old, s, now) => {
    if (same(now.hover, old.hover)) return false;
    // The rules, read once for both (each read compares every rule).
    let per;
    const sels = () => per === undefined ? (per = hoverSelsOf(s.roots)) : per;
    const cur = now.shows !== undefined ? now.shows : hoverMatches(sels());
    if (now.shows === undefined) now.shows = cur;
    const was = old.shows !== undefined ? old.shows : unhovered(sels());
    return !cur || !was || !same(cur, was);
  };
  return (mark, part) => {
    count(mo.takeRecords(), false);
    // A change under a node no longer in the page is held by the change
    // that took the node out (a part never needs it): forgotten.
    for (let i = dirty.length - 1; i >= 0; i--) { const x = dirty[i][1]; if (x && x !== FOCUS && !x.isConnected) dirty.splice(i, 1); }
    told = false;
    reads++;
    if (mark) partsAsked = !!part;
    const s = scan(), now = state(s);
    const { focus, hover, shows, rules, href } = now;
    const out = { t: document.title, x: s.foreign + s.sealed, b: base ? base.id : 0 };
    if (s.sealed) out.s = s.sealed;
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
      out.h = hoverShows(base, s, now);
      out.r = rules !== base.rules || s.added > 0 || rulesEdited(base, now);
      out.u = urlShows(base.href, href);
    }
    out.a = base ? animShows(base, now) : now.animRun;
    const brk = base ? link(base, s, now, out.h, out.a) : 'no base';
    if (part) {
      const p = partRoots(part.since, brk, part.st || 0);
      if (typeof p === 'string') out.pw = p;
      else {
        // The first event starts the engine's list anew; the next add.
        // An inserted part's sibling follows it (the engine reads its ref).
        p.roots.forEach((e, i) => {
          e.dispatchEvent(new CustomEvent(i ? part.ev + 'n' : part.ev));
          if (p.anchors[i]) p.anchors[i].dispatchEvent(new CustomEvent(part.ev + 'a'));
        });
        out.p = p.roots.length;
        out.pf = (p.f & FOCUSED) !== 0;
        if (p.body) out.pb = true;
        if (p.frames) out.pfr = true;
        if (p.kinds.some(k => k)) out.pk = p.kinds;
      }
    }
    if (mark) {
      base = Object.assign(now, { id: ++id }); out.nb = id;
      if (brk) { quietFrom = id; quietWhy = brk; }
    }
    return out;
  };
})());
return W(mark, part);
})
