package snapshot

import (
	"strconv"
	"strings"
)

// Render returns the tree in Playwright's snapshot format: one `- ` line per
// node, two spaces of indentation per level, lines joined by "\n" with no
// trailing newline. For a parsed AI snapshot, Render(Parse(s)) == s.
//
// A tree cut by a node limit ends with a line saying how many nodes were
// left out.
func (t *Tree) Render() string {
	b := make([]byte, 0, 64*countNodes(t.Roots)+64)
	for _, n := range t.Roots {
		b = appendTree(b, n, 0)
	}
	if t.Omitted > 0 {
		b = append(b, omittedNote(t.Omitted, t.Limit)...)
		b = append(b, '\n')
	}
	if len(b) > 0 {
		b = b[:len(b)-1] // the last newline
	}
	return string(b)
}

func omittedNote(omitted, limit int) string {
	return "[...TRUNCATED - " + strconv.Itoa(omitted) + " more nodes, node limit " + strconv.Itoa(limit) + "]"
}

func countNodes(nodes []*Node) int {
	c := len(nodes)
	for _, n := range nodes {
		c += countNodes(n.Children) + len(n.Props)
	}
	return c
}

func appendIndent(b []byte, depth int) []byte {
	for i := 0; i < depth; i++ {
		b = append(b, ' ', ' ')
	}
	return b
}

// appendTree appends the lines of n and its descendants, each followed by a
// newline.
func appendTree(b []byte, n *Node, depth int) []byte {
	b = appendIndent(b, depth)
	b = appendLine(b, n, lineOpts{})
	b = append(b, '\n')
	for _, p := range n.Props {
		b = appendIndent(b, depth+1)
		b = appendProp(b, p)
		b = append(b, '\n')
	}
	for _, c := range n.Children {
		b = appendTree(b, c, depth+1)
	}
	return b
}

func appendProp(b []byte, p Prop) []byte {
	b = append(b, "- /"...)
	b = append(b, p.Name...)
	b = append(b, ": "...)
	return appendValue(b, p.Value)
}

// lineOpts change how appendLine renders a line for diffs.
type lineOpts struct {
	markNew bool // add a [new] attribute
	noColon bool // leave out the ':' that announces children
}

// appendLine appends the line of n without indentation or newline.
func appendLine(b []byte, n *Node, o lineOpts) []byte {
	if n.Raw != "" || n.Kind == KindOpaque {
		raw := n.Raw
		if o.noColon || o.markNew {
			trimmed := strings.TrimSuffix(raw, ":")
			if o.markNew {
				return append(append(b, trimmed...), " [new]"+raw[len(trimmed):]...)
			}
			raw = trimmed
		}
		return append(b, raw...)
	}
	if n.Kind == KindText {
		b = append(b, "- text: "...)
		return appendValue(b, n.Text)
	}
	b = append(b, "- "...)
	var stack [256]byte
	key := appendElementKey(stack[:0], n, o.markNew)
	b = appendKey(b, key)
	switch {
	case n.Text != "":
		b = append(b, ": "...)
		b = appendValue(b, n.Text)
	case (len(n.Props) > 0 || len(n.Children) > 0) && !o.noColon:
		b = append(b, ':')
	}
	return b
}

// beforeRef lists the attributes Playwright 1.64 renders ahead of the ref
// (in this order: checked disabled expanded active invalid level pressed
// selected aria-hidden); the others (cursor, box, nth) follow it.
func beforeRef(key string) bool {
	switch key {
	case "checked", "disabled", "expanded", "active", "invalid", "level", "pressed", "selected", "aria-hidden":
		return true
	}
	return false
}

// appendElementKey appends the unquoted YAML key of an element line:
// role, name, state attributes, ref, other attributes.
func appendElementKey(b []byte, n *Node, markNew bool) []byte {
	b = append(b, n.Role...)
	if n.Name != "" {
		b = append(b, ' ')
		if n.Regex {
			b = append(b, '/')
			b = append(b, n.Name...)
			b = append(b, '/')
		} else {
			b = appendJSONString(b, n.Name)
		}
	}
	for _, a := range n.Attrs {
		if beforeRef(a.Key) {
			b = appendAttr(b, a)
		}
	}
	if n.Ref != "" {
		b = append(b, " [ref="...)
		b = append(b, n.Ref...)
		b = append(b, ']')
	}
	for _, a := range n.Attrs {
		if !beforeRef(a.Key) {
			b = appendAttr(b, a)
		}
	}
	if markNew {
		b = append(b, " [new]"...)
	}
	return b
}

func appendAttr(b []byte, a Attr) []byte {
	b = append(b, " ["...)
	b = append(b, a.Key...)
	if a.Value != "" {
		b = append(b, '=')
		b = append(b, a.Value...)
	}
	return append(b, ']')
}

// Line returns the line of n as Render prints it, without indentation.
func (n *Node) Line() string {
	return string(appendLine(nil, n, lineOpts{}))
}
