// The hand-off engine: a Playwright selector engine registered as a content
// script, so it runs in Playwright's utility world (an isolated world the
// page cannot see), never the page's own. "give:K" matches the element the
// tab's CDP session put in that world's global K (handoff.go), if it is
// under the root the locator queries.
({
	queryAll(root, body) {
		const i = body.indexOf(':');
		if (i < 0 || body.slice(0, i) !== 'give') return [];
		const el = globalThis[body.slice(i + 1)];
		for (let n = el; n; n = n.parentNode || n.host) {
			if (n === root) return [el];
		}
		return [];
	},
	query(root, body) {
		return this.queryAll(root, body)[0] || null;
	},
})
