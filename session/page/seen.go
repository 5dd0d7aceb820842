package page

// What the agent was already shown of a tab, for answers that say only what
// is new: the document a snapshot was taken in, the refs a re-render
// replaced, the Page section last sent, and the documents seen.

// seen is the tab's record of what its answers showed.
type seen struct {
	aliases  map[string]string // ref a re-render replaced → its equal's ref
	aliasDoc int               // docNav the aliases belong to
	page     []string          // the Page section last sent
	urls     map[string]bool   // URLs of documents whose page the agent was shown
	told     map[string]bool   // hints the tab's answers already gave
}

// DocSeq identifies the tab's current document: it changes with every
// main-frame navigation that commits a new document, not with a
// same-document one (a fragment, pushState or replaceState).
func (t *Tab) DocSeq() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.docNav
}

// Doc is the DocSeq of the tab's document when the snapshot was taken.
func (s *Snapshot) Doc() int { return s.doc }

// Tab is the tab the snapshot was taken of.
func (s *Snapshot) Tab() *Tab { return s.tab }

// AliasRefs records refs of the last snapshot's document that a re-render
// replaced with equal elements (old → new): an agent that acts on the old
// ref reaches the new element. Earlier aliases follow their element.
func (t *Tab) AliasRefs(m map[string]string) {
	if len(m) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen.aliases == nil || t.seen.aliasDoc != t.docNav {
		t.seen.aliases, t.seen.aliasDoc = map[string]string{}, t.docNav
	}
	for old, now := range t.seen.aliases {
		if n, ok := m[now]; ok {
			t.seen.aliases[old] = n
		}
	}
	if len(t.seen.aliases)+len(m) > maxAliases {
		// A page that re-renders thousands of nodes on every change: the
		// refs of the last re-render are the ones an agent most likely
		// holds.
		t.seen.aliases = map[string]string{}
	}
	for old, now := range m {
		t.seen.aliases[old] = now
	}
}

// maxAliases bounds a tab's aliases.
const maxAliases = 20000

// aliasOf is the ref that replaced ref in the current document, or "".
func (t *Tab) aliasOf(ref string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen.aliasDoc != t.docNav {
		return ""
	}
	return t.seen.aliases[ref]
}

// ShownPage is the Page section last sent for the tab.
func (t *Tab) ShownPage() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen.page
}

// SetShownPage records the Page section sent for the tab.
func (t *Tab) SetShownPage(lines []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen.page = lines
}

// SeenURL reports whether the agent was shown the page of a document at
// url in this tab, and records that it now is.
func (t *Tab) SeenURL(url string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return mark(&t.seen.urls, url)
}

// mark records key in *set (made when nil) and reports whether it was
// there already.
func mark(set *map[string]bool, key string) bool {
	if *set == nil {
		*set = map[string]bool{}
	}
	was := (*set)[key]
	(*set)[key] = true
	return was
}

// Told reports whether the hint named key was already given in an answer
// about this tab, and records that it now is: a hint (how to see more of a
// large page) is worth its characters once, not on every page.
func (t *Tab) Told(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return mark(&t.seen.told, key)
}
