// The hand-off engine: a Playwright selector engine registered as a content
// script, so it runs in Playwright's utility world (an isolated world the
// page cannot see), never the page's own. "give:K" matches the element the
// tab's CDP session put in that world's global K (handoff.go), if it is
// under the root the locator queries. "take:K" goes the other way: it
// matches the root itself (the element a locator found) and sends it, in
// an event named K, to the tab's isolated world (mainObject); not for an
// element in a frame or a closed shadow root, where that world's listener
// on the top document would not get it.
({
	queryAll(root, body) {
		const i = body.indexOf(':');
		if (i < 0) return [];
		const verb = body.slice(0, i), key = body.slice(i + 1);
		if (verb === 'take') {
			if (root.nodeType !== 1 || root.ownerDocument !== document) return [];
			for (let r = root.getRootNode(); r !== document; r = r.host.getRootNode()) {
				if (!r.host || r.mode !== 'open') return [];
			}
			root.dispatchEvent(new CustomEvent(key, {composed: true}));
			return [root];
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
})
