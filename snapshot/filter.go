package snapshot

import (
	"fmt"
	"strings"
)

// The filters below work on a Tree of any mode and return a new Tree; the
// source is left as it was. Refs are kept as they are, so Backend and
// RoleRef still resolve them.

// Interactive returns the interactive elements as a flat list (every node at
// the top level, in document order): elements with an INTERACTIVE role, and
// elements with a ref that Playwright marks [cursor=pointer] (clickable
// divs). Inline values (a textbox's text) are kept; children and property
// lines are not.
func (t *Tree) Interactive() *Tree {
	return t.derive(interactiveNodes(t.Roots, nil))
}

func interactiveNodes(nodes []*Node, out []*Node) []*Node {
	for _, n := range nodes {
		if isInteractive(n) {
			c := *n
			c.Children, c.Props = nil, nil
			out = append(out, &c)
		}
		out = interactiveNodes(n.Children, out)
	}
	return out
}

func isInteractive(n *Node) bool {
	if n.Kind != KindElement {
		return false
	}
	if ClassOf(n.Role) == ClassInteractive {
		return true
	}
	cursor, _ := n.Attr("cursor")
	return n.Ref != "" && cursor == "pointer"
}

// Compact drops unnamed nodes with a STRUCTURAL role (generic, list, row…),
// putting their children in their place. A structural node is kept when it
// carries something an agent may need: an inline text, property lines, or
// [cursor=pointer].
func (t *Tree) Compact() *Tree {
	return t.derive(compactNodes(t.Roots))
}

func compactNodes(nodes []*Node) []*Node {
	out := make([]*Node, 0, len(nodes))
	for _, n := range nodes {
		kids := compactNodes(n.Children)
		if droppedByCompact(n) {
			out = append(out, kids...)
			continue
		}
		c := *n
		c.Children = kids
		out = append(out, &c)
	}
	return out
}

func droppedByCompact(n *Node) bool {
	if n.Kind != KindElement || n.Name != "" || n.Text != "" || len(n.Props) > 0 {
		return false
	}
	if ClassOf(n.Role) != ClassStructural {
		return false
	}
	cursor, _ := n.Attr("cursor")
	return cursor != "pointer"
}

// MaxDepth drops the nodes nested deeper than depth, counting the top level
// as 0 (so MaxDepth(1) keeps the roots and their children), as Playwright's
// depth option does. A depth of 0 or less keeps everything.
func (t *Tree) MaxDepth(depth int) *Tree {
	if depth <= 0 {
		return t.derive(t.Roots)
	}
	return t.derive(cutDepth(t.Roots, depth))
}

func cutDepth(nodes []*Node, left int) []*Node {
	out := make([]*Node, len(nodes))
	for i, n := range nodes {
		c := *n
		if left == 0 {
			c.Children = nil
		} else {
			c.Children = cutDepth(n.Children, left-1)
		}
		out[i] = &c
	}
	return out
}

// Query keeps the lines whose text contains every whitespace-separated word
// of q, ignoring case, together with their ancestors (for context). A
// matching element keeps its property lines; an ancestor keeps only the
// property lines that match. The text of a line is what Render prints for
// it, so q may name a role, a name, a value, a URL or a ref ("ref=e12").
// An empty q keeps everything.
func (t *Tree) Query(q string) *Tree {
	words := strings.Fields(strings.ToLower(q))
	if len(words) == 0 {
		return t.derive(t.Roots)
	}
	var buf []byte
	match := func(s []byte) bool {
		low := strings.ToLower(string(s))
		for _, w := range words {
			if !strings.Contains(low, w) {
				return false
			}
		}
		return true
	}
	var visit func(nodes []*Node) []*Node
	visit = func(nodes []*Node) []*Node {
		var out []*Node
		for _, n := range nodes {
			kids := visit(n.Children)
			buf = appendLine(buf[:0], n, lineOpts{noColon: true})
			self := match(buf)
			var props []Prop
			if !self {
				for _, p := range n.Props {
					buf = appendProp(buf[:0], p)
					if match(buf) {
						props = append(props, p)
					}
				}
			}
			if !self && len(kids) == 0 && len(props) == 0 {
				continue
			}
			c := *n
			c.Children = kids
			if !self {
				c.Props = props
			}
			out = append(out, &c)
		}
		return out
	}
	return t.derive(visit(t.Roots))
}

// Subtree returns the node with ref ref and its descendants as a tree of its
// own, or an error wrapping ErrUnknownRef.
func (t *Tree) Subtree(ref string) (*Tree, error) {
	n, ok := t.Find(ref)
	if !ok {
		return nil, fmt.Errorf("ref %q is not in the snapshot: %w", ref, ErrUnknownRef)
	}
	sub := t.derive([]*Node{n})
	sub.Omitted = 0
	return sub, nil
}
