package snapshot

import "strings"

// AIRefs maps every ref of an AI snapshot tree to the getByRole arguments
// that find its element again where Playwright's aria-ref map does not exist
// (a page object from another connection): its role, its name and how many
// elements of the same frame with the same role and name come before it in
// document order. FrameID is the ref's frame prefix ("f1" for f1e3), "" for
// the main frame's refs whatever their prefix (MainFrame). Text lines and
// elements without a role have no entry.
func AIRefs(t *Tree) map[string]RoleRef {
	out := map[string]RoleRef{}
	seen := map[RoleRef]int{}
	main := t.MainFrame()
	t.Walk(func(n *Node, _ int) bool {
		if n.Kind != KindElement || n.Ref == "" || n.Role == "" || n.Regex {
			return true
		}
		frame := RefFrame(n.Ref)
		if frame == main {
			frame = ""
		}
		key := RoleRef{Role: n.Role, Name: n.Name, FrameID: frame}
		r := key
		r.Nth = seen[key]
		seen[key]++
		out[n.Ref] = r
		return true
	})
	return out
}

// RefFrame is the frame prefix of an AI ref: "f1" for "f1e3", "" for "e3".
func RefFrame(ref string) string {
	if strings.HasPrefix(ref, "f") {
		if i := strings.IndexByte(ref, 'e'); i > 0 {
			return ref[:i]
		}
	}
	return ""
}

// MainFrame is the frame prefix of the main frame's refs in an AI
// snapshot: that of its first ref (a node of the page comes before any
// frame's content). Playwright numbers the main frame as any other once its
// first document is gone: a tab's second page has refs f1e1, f1e2, ….
func (t *Tree) MainFrame() string {
	main, found := "", false
	t.Walk(func(n *Node, _ int) bool {
		if !found && n.Kind == KindElement && n.Ref != "" {
			main, found = RefFrame(n.Ref), true
		}
		return !found
	})
	return main
}
