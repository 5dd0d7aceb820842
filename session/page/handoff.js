// The hand-off engine: a Playwright selector engine registered as a content
// script, so it runs in Playwright's utility world (an isolated world the
// page cannot see), never the page's own. "give:K" matches the element the
// tab's CDP session put in that world's global K (handoff.go), if it is
// under the root the locator queries. "listen:E:K" (on the document) puts
// it there: it forgets K, then keeps in K the first target of the next
// event named E, which the tab's isolated world sends from the element
// (giveNode); it matches nothing. "take:K" goes the other way: it
// matches the root itself (the element a locator found) and sends it, in
// an event named K, to the tab's isolated world (mainObject); not for an
// element in a frame or a closed shadow root, where that world's listener
// on the top document would not get it. "aref:R" matches the element under
// the root to which Playwright's AI walks last gave ref R: its injected
// script keeps {role, name, ref} on the element (_ariaRef, Playwright
// 1.64) in this same world, and a walk of a part of the page leaves it on
// the elements outside the part (refs.go: LocateToAct). "part:" matches,
// once each, the elements the watch last sent its part events from (named
// per process, so the page cannot send them; the first one starts the list
// anew), in the order sent: the parts of the page a snapshot walks when
// only they changed (splice.go); "isbody:R" matches the body if Playwright's
// walks gave it ref R; "refs:" matches an element made in this world and
// never put in the document, whose text is the ref each part still to be
// handed had from Playwright's walks (read before they walk, as a part's
// name, and so its ref, may have changed), or for an element inserted
// among others the ref of the sibling the watch sent after it (an event
// named as the part's, with "a"): "^" when that sibling is the part
// before, "-" for no ref. The listeners are set at the
// engine's first query ("warm:" as a document commits, Tab.warmInjected),
// not as the engine is made: Playwright makes every engine in the page's own
// world too, where the page can watch addEventListener; it queries a
// content script's engine only in its utility world.
(() => {
let parts = [], anchors = new Map(), armed = false;
const arm = () => {
	if (armed) return;
	armed = true;
	document.addEventListener('CLOAKMCP_PART', (e) => { parts = [e.composedPath()[0]]; anchors = new Map(); }, {capture: true});
	document.addEventListener('CLOAKMCP_PARTn', (e) => { parts.push(e.composedPath()[0]); }, {capture: true});
	document.addEventListener('CLOAKMCP_PARTa', (e) => { anchors.set(parts[parts.length - 1], e.composedPath()[0]); }, {capture: true});
};
return {
	queryAll(root, body) {
		arm();
		const i = body.indexOf(':');
		if (i < 0) return [];
		const verb = body.slice(0, i), key = body.slice(i + 1);
		if (verb === 'isbody') {
			const b = document.body, a = b && b._ariaRef;
			return a && a.ref === key && root.contains(b) ? [b] : [];
		}
		if (verb === 'refs') {
			// The refs Playwright's walks last gave the parts still to be
			// handed, in order ("-" for none), as the text of an element
			// made here and never put in the document.
			const out = document.createElement('b');
			const ref = (e) => (e && e._ariaRef && e._ariaRef.ref) || '-';
			out.textContent = parts.map((e, i) => {
				if (!anchors.has(e)) return ref(e);
				const a = anchors.get(e);
				return i > 0 && a === parts[i - 1] ? '^' : ref(a);
			}).join(' ');
			return [out];
		}
		if (verb === 'part') {
			const el = parts.shift();
			return el && el.isConnected && root.contains(el) ? [el] : [];
		}
		if (verb === 'aref') {
			const found = [];
			const has = (e) => { const a = e._ariaRef; return !!a && a.ref === key; };
			const visit = (r) => {
				for (const e of r.querySelectorAll('*')) {
					if (has(e)) found.push(e);
					if (e.shadowRoot) visit(e.shadowRoot);
				}
			};
			if (root.nodeType === 1 && has(root)) found.push(root);
			visit(root);
			return found;
		}
		if (verb === 'take') {
			if (root.nodeType !== 1 || root.ownerDocument !== document) return [];
			for (let r = root.getRootNode(); r !== document; r = r.host.getRootNode()) {
				if (!r.host || r.mode !== 'open') return [];
			}
			root.dispatchEvent(new CustomEvent(key, {composed: true}));
			return [root];
		}
		if (verb === 'listen') {
			const j = key.indexOf(':');
			if (j < 0 || root !== document) return [];
			const ev = key.slice(0, j), k = key.slice(j + 1);
			delete globalThis[k];
			document.addEventListener(ev, (e) => { globalThis[k] = e.composedPath()[0]; }, {capture: true, once: true});
			return [];
		}
		if (verb !== 'give') return [];
		const el = globalThis[key];
		for (let n = el; n; n = n.parentNode || n.host) {
			if (n === root) return [el];
		}
		return [];
	},
	query(root, body) {
		return this.queryAll(root, body)[0] || null;
	},
};
})()
