package snapshot

import (
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
)

// RoleHardDepth is the deepest level a Role snapshot shows, whatever
// RoleOptions.MaxDepth says.
const RoleHardDepth = 100

// RoleOptions configure RoleTree. The zero value gives the full role tree.
type RoleOptions struct {
	// Interactive keeps only elements with an INTERACTIVE role, as a flat
	// list.
	Interactive bool
	// Compact drops unnamed STRUCTURAL nodes, putting their children in
	// their place.
	Compact bool
	// MaxDepth drops nodes nested deeper than this, counting the top level as
	// 0, after Compact and before Interactive. If zero or less, or above
	// RoleHardDepth, RoleHardDepth.
	MaxDepth int
	// Previous, if not nil, is the last Role tree of the same page. An
	// element with the same role, name, nth and frame keeps its ref and new
	// elements are numbered after the highest ref of Previous, so the refs
	// an agent holds stay valid and Diff shows only what changed. If nil,
	// refs run r1, r2… in document order.
	Previous *Tree
}

// RoleRef is what a Role snapshot ref stands for: the element is
// page.getByRole(Role, {name: Name, exact: true}).nth(Nth) in the frame
// FrameID (the frame of the accessibility tree the node came from).
type RoleRef struct {
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Nth     int    `json:"nth,omitempty"`
	FrameID string `json:"frameId,omitempty"`
}

// RoleTree builds a Role snapshot from the nodes of
// Accessibility.getFullAXTree.
//
// The tree reads like Playwright's AI snapshot: ARIA role names (Chromium's
// "image" becomes "img"), whitespace-normalised names, text lines for text,
// inline values, /url lines for links, state attributes. Ignored and
// presentational nodes, the document root and <select> popups give their
// place to their children; inline text boxes, line breaks and list markers
// are left out.
//
// Refs r1, r2… go, in document order, to the shown nodes with an
// INTERACTIVE role and those with a CONTENT role and a name. Each maps to a
// RoleRef (Tree.RoleRef) and to its BackendDOMNodeID (Tree.Backend). The
// nth of a RoleRef counts the earlier nodes of the same frame with the same
// role and name in the whole accessibility tree, not only the shown ones, so
// that getByRole(...).nth(n) finds the same element whatever the filters
// hid; the line shows [nth=n] when n > 0.
//
// The ref prefix is "r", not Playwright's "e": an AI snapshot ref e5 is
// resolved by Playwright against its own last AI snapshot, so a role ref
// spelt the same way would silently reach another element.
func RoleTree(nodes []*accessibility.Node, opts RoleOptions) *Tree {
	g := newAXGraph(nodes)
	b := &roleBuilder{g: g, counts: make(map[RoleRef]int)}
	var roots []*Node
	for _, r := range g.roots {
		roots = b.visit(r, axFrame(r, ""), roots)
	}
	roots = finishChildren(roots)

	maxDepth := opts.MaxDepth
	if maxDepth <= 0 || maxDepth > RoleHardDepth {
		maxDepth = RoleHardDepth
	}
	if opts.Compact {
		roots = compactNodes(roots)
	}
	if height(roots) > maxDepth {
		roots = cutDepth(roots, maxDepth)
	}
	if opts.Interactive {
		var flat []*Node
		for _, n := range interactiveNodes(roots, nil) {
			if ClassOf(n.Role) == ClassInteractive {
				flat = append(flat, n)
			}
		}
		roots = flat
	}

	t := &Tree{Mode: ModeRole, Roots: roots, backends: make(map[string]int64), roleRefs: make(map[string]RoleRef)}
	refs := newRefNumbers[RoleRef]("r")
	if p := opts.Previous; p != nil && p.Mode == ModeRole {
		for ref, id := range p.roleRefs {
			refs.remember(ref, id)
		}
	}
	t.Walk(func(n *Node, _ int) bool {
		if n.ident == nil {
			return true
		}
		n.Ref = refs.ref(*n.ident)
		t.roleRefs[n.Ref] = *n.ident
		if n.backend != 0 {
			t.backends[n.Ref] = n.backend
		}
		if n.ident.Nth > 0 {
			n.Attrs = append(n.Attrs, Attr{Key: "nth", Value: strconv.Itoa(n.ident.Nth)})
		}
		return true
	})
	return t
}

// height returns the depth of the deepest of nodes (0 for roots only).
func height(nodes []*Node) int {
	h := 0
	for _, n := range nodes {
		if len(n.Children) > 0 {
			h = max(h, 1+height(n.Children))
		}
	}
	return h
}

type roleBuilder struct {
	g      *axGraph
	counts map[RoleRef]int // frame+role+name → nodes seen so far
}

// What RoleTree does with a node of a given Chromium role.
type roleAction uint8

const (
	roleKeep roleAction = iota
	roleLift            // leave the node out, keep its children
	roleDrop            // leave the node and its subtree out
	roleText            // a text line
)

// roleOf maps a Chromium AX role to the role Playwright would give the
// element, and says what to do with the node.
func roleOf(role string) (string, roleAction) {
	switch role {
	case "StaticText":
		return "text", roleText
	case "InlineTextBox", "LineBreak", "ListMarker":
		return "", roleDrop
	case "none", "presentation", "RootWebArea", "WebArea", "MenuListPopup",
		"LayoutTable", "LayoutTableRow", "LayoutTableCell", "IframePresentational":
		return "", roleLift
	case "image":
		return "img", roleKeep
	case "Iframe":
		return "iframe", roleKeep
	case "MenuListOption":
		return "option", roleKeep
	case "LabelText":
		// Playwright shows a label's text without a node of its own.
		return "", roleLift
	case "Section", "Pre", "Abbr", "Ruby":
		return "generic", roleKeep
	}
	if role == "" {
		return "", roleLift
	}
	return role, roleKeep
}

// axFrame returns the frame of n: its own FrameID, else its parent's.
func axFrame(n *accessibility.Node, parent string) string {
	if n.FrameID != "" {
		return string(n.FrameID)
	}
	return parent
}

func (b *roleBuilder) visit(ax *accessibility.Node, frame string, out []*Node) []*Node {
	if !b.g.enter(ax) {
		return out
	}
	frame = axFrame(ax, frame)
	role, action := roleOf(axString(ax.Role))
	if ax.Ignored {
		action = roleLift
	}
	switch action {
	case roleDrop:
		return out
	case roleLift:
		for c := range b.g.children(ax) {
			out = b.visit(c, frame, out)
		}
		return out
	case roleText:
		text := normalizeSpace(axString(ax.Name))
		if text == "" {
			return out
		}
		return append(out, &Node{Kind: KindText, Text: text})
	}

	n := &Node{
		Kind:    KindElement,
		Role:    role,
		Name:    normalizeSpace(axString(ax.Name)),
		Attrs:   axAttrs(ax, role, true),
		backend: int64(ax.BackendDOMNodeID),
	}
	class := ClassOf(role)
	if class == ClassInteractive || (class == ClassContent && n.Name != "") {
		id := RoleRef{Role: role, Name: n.Name, FrameID: frame}
		id.Nth = b.counts[id]
		b.counts[id] = id.Nth + 1
		n.ident = &id
	}
	if role == "link" {
		if u := axProp(ax, accessibility.PropertyNameURL); u != "" {
			n.Props = append(n.Props, Prop{Name: "url", Value: u})
		}
	}
	var kids []*Node
	for c := range b.g.children(ax) {
		kids = b.visit(c, frame, kids)
	}
	switch role {
	case "textbox", "searchbox", "spinbutton":
		// The value is the text; the children only repeat it.
		n.Text = normalizeSpace(axString(ax.Value))
		kids = nil
	case "combobox":
		if len(kids) == 0 {
			n.Text = normalizeSpace(axString(ax.Value))
		}
	}
	n.Children = kids
	return append(out, finishNode(n)...)
}

// finishNode tidies n the way Playwright does: adjacent text lines merge, a
// lone text equal to the name goes, a lone text of a node without property
// lines becomes its inline value, and an unnamed generic node around a single
// element with a ref gives its place to that element.
func finishNode(n *Node) []*Node {
	n.Children = finishChildren(n.Children)
	if n.Role == "generic" && n.Name == "" && len(n.Attrs) == 0 && len(n.Props) == 0 && n.Text == "" &&
		len(n.Children) <= 1 && (len(n.Children) == 0 || n.Children[0].ident != nil) {
		return n.Children
	}
	if len(n.Children) == 1 && n.Children[0].Kind == KindText && n.Text == "" {
		only := n.Children[0].Text
		switch {
		case only == n.Name:
			n.Children = nil
		case len(n.Props) == 0:
			n.Text, n.Children = only, nil
		}
	}
	return []*Node{n}
}

// finishChildren merges adjacent text lines.
func finishChildren(kids []*Node) []*Node {
	out := kids[:0]
	for _, k := range kids {
		if k.Kind == KindText && len(out) > 0 && out[len(out)-1].Kind == KindText {
			prev := out[len(out)-1]
			prev.Text = normalizeSpace(prev.Text + " " + k.Text)
			continue
		}
		out = append(out, k)
	}
	return out
}

// normalizeSpace drops zero-width spaces and soft hyphens, collapses runs of
// white space to one space and trims the ends, as Playwright's
// normalizeWhiteSpace does (its getByRole compares names normalised so).
func normalizeSpace(s string) string {
	prevSpace := true
	clean := true
	for _, r := range s {
		sp := isJSSpace(r)
		if r == 0x200b || r == 0xad || (sp && (prevSpace || r != ' ')) {
			clean = false
			break
		}
		prevSpace = sp
	}
	if clean && (s == "" || !prevSpace) {
		return s
	}
	s = strings.Map(func(r rune) rune {
		if r == 0x200b || r == 0xad {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.FieldsFunc(s, isJSSpace), " ")
}
