package snapshot

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
)

// Node limits of ARIA snapshots.
const (
	DefaultAXLimit = 500
	MaxAXLimit     = 2000
)

// AXOptions configure FromAXTree.
type AXOptions struct {
	// Limit is the most nodes the tree holds. If zero or less, DefaultAXLimit;
	// values above MaxAXLimit are lowered to it.
	Limit int
	// Previous, if not nil, is the last ARIA tree of the same document. A
	// node with the same BackendDOMNodeID keeps its ref and new nodes are
	// numbered after the highest ref of Previous, so the refs an agent holds
	// stay valid and Diff shows only what changed. If nil, refs run ax1,
	// ax2… in document order.
	Previous *Tree
}

// FromAXTree builds an ARIA snapshot from the nodes of
// Accessibility.getFullAXTree (several frames' nodes may be concatenated).
//
// Every node gets a ref ax1, ax2… in document order (see
// AXOptions.Previous for refs that survive a new snapshot); Backend resolves
// it to the node's BackendDOMNodeID. Roles are Chromium's own (RootWebArea,
// StaticText…). Ignored nodes are left out and their children take their
// place; InlineTextBox nodes, which repeat their StaticText parent, are left
// out too. Past the limit, nodes are counted in Tree.Omitted and Render notes
// them.
func FromAXTree(nodes []*accessibility.Node, opts AXOptions) *Tree {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultAXLimit
	}
	if limit > MaxAXLimit {
		limit = MaxAXLimit
	}
	g := newAXGraph(nodes)
	b := &axBuilder{
		g:     g,
		limit: limit,
		tree:  &Tree{Mode: ModeARIA, Limit: limit, backends: make(map[string]int64)},
		refs:  newRefNumbers[int64]("ax"),
	}
	if p := opts.Previous; p != nil && p.Mode == ModeARIA {
		for ref, backend := range p.backends {
			b.refs.remember(ref, backend)
		}
	}
	for _, r := range g.roots {
		b.tree.Roots = b.visit(r, 0, b.tree.Roots)
	}
	if b.tree.Omitted == 0 {
		b.tree.Limit = 0
	}
	return b.tree
}

type axBuilder struct {
	g     *axGraph
	limit int
	count int
	tree  *Tree
	refs  *refNumbers[int64]
}

// visit appends the snapshot node(s) for ax to out. Beyond the limit or the
// nesting bound it only counts.
func (b *axBuilder) visit(ax *accessibility.Node, depth int, out []*Node) []*Node {
	if !b.g.enter(ax) {
		return out
	}
	role := axString(ax.Role)
	if ax.Ignored || role == "InlineTextBox" {
		for c := range b.g.children(ax) {
			out = b.visit(c, depth, out)
		}
		return out
	}
	if b.count >= b.limit || depth >= maxNesting {
		b.tree.Omitted++
		for c := range b.g.children(ax) {
			out = b.visit(c, depth+1, out)
		}
		return out
	}
	b.count++
	if role == "" {
		role = "unknown"
	}
	n := &Node{
		Kind:    KindElement,
		Role:    role,
		Name:    axString(ax.Name),
		Ref:     b.refs.ref(int64(ax.BackendDOMNodeID)),
		Text:    axString(ax.Value),
		Attrs:   axAttrs(ax, role, false),
		backend: int64(ax.BackendDOMNodeID),
	}
	if n.backend != 0 {
		b.tree.backends[n.Ref] = n.backend
	}
	if d := axString(ax.Description); d != "" {
		n.Props = append(n.Props, Prop{Name: "description", Value: d})
	}
	if u := axProp(ax, accessibility.PropertyNameURL); u != "" && role != "RootWebArea" {
		n.Props = append(n.Props, Prop{Name: "url", Value: u})
	}
	for c := range b.g.children(ax) {
		n.Children = b.visit(c, depth+1, n.Children)
	}
	return append(out, n)
}

// refNumbers hands out refs prefix1, prefix2… and, for keys a previous
// tree had, that tree's ref again.
type refNumbers[K comparable] struct {
	prefix string
	next   int
	old    map[K]string
	used   map[string]bool
}

func newRefNumbers[K comparable](prefix string) *refNumbers[K] {
	return &refNumbers[K]{prefix: prefix, old: make(map[K]string), used: make(map[string]bool)}
}

// remember records that key had ref in the previous tree.
func (r *refNumbers[K]) remember(ref string, key K) {
	n, err := strconv.Atoi(strings.TrimPrefix(ref, r.prefix))
	if err != nil || !strings.HasPrefix(ref, r.prefix) {
		return
	}
	r.old[key] = ref
	r.next = max(r.next, n)
}

// ref returns the ref of key: its previous one if it had one not yet
// given out, else a new number. The zero key never reuses a ref.
func (r *refNumbers[K]) ref(key K) string {
	if len(r.old) == 0 { // nothing to reuse: plain numbering
		r.next++
		return r.prefix + strconv.Itoa(r.next)
	}
	var zero K
	if old, ok := r.old[key]; ok && key != zero && !r.used[old] {
		r.used[old] = true
		return old
	}
	for {
		r.next++
		ref := r.prefix + strconv.Itoa(r.next)
		if !r.used[ref] {
			r.used[ref] = true
			return ref
		}
	}
}

// axGraph indexes the flat node list of getFullAXTree.
type axGraph struct {
	byID    map[accessibility.NodeID]*accessibility.Node
	roots   []*accessibility.Node
	visited map[accessibility.NodeID]bool
}

func newAXGraph(nodes []*accessibility.Node) *axGraph {
	g := &axGraph{
		byID:    make(map[accessibility.NodeID]*accessibility.Node, len(nodes)),
		visited: make(map[accessibility.NodeID]bool, len(nodes)),
	}
	for _, n := range nodes {
		if n != nil {
			if _, dup := g.byID[n.NodeID]; !dup {
				g.byID[n.NodeID] = n
			}
		}
	}
	isChild := make(map[accessibility.NodeID]bool, len(nodes))
	for _, n := range g.byID {
		for _, c := range n.ChildIDs {
			if c != n.NodeID {
				isChild[c] = true
			}
		}
	}
	for _, n := range nodes {
		if n == nil || g.byID[n.NodeID] != n || isChild[n.NodeID] {
			continue
		}
		if _, ok := g.byID[n.ParentID]; ok && n.ParentID != "" && n.ParentID != n.NodeID {
			continue // its parent does not list it: an orphan, skip it
		}
		g.roots = append(g.roots, n)
	}
	return g
}

// enter marks n visited; it returns false if n was visited before (a
// malformed tree with a cycle or a shared child).
func (g *axGraph) enter(n *accessibility.Node) bool {
	if g.visited[n.NodeID] {
		return false
	}
	g.visited[n.NodeID] = true
	return true
}

// children yields the known children of n.
func (g *axGraph) children(n *accessibility.Node) func(yield func(*accessibility.Node) bool) {
	return func(yield func(*accessibility.Node) bool) {
		for _, id := range n.ChildIDs {
			if c, ok := g.byID[id]; ok && !yield(c) {
				return
			}
		}
	}
}

// axString returns an AX value as text: strings unquoted, other JSON values
// as written.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	raw := []byte(v.Value)
	if raw[0] == '"' {
		// Most values have no escapes: skip the JSON decoder for them.
		if n := len(raw); n >= 2 && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 && bytes.IndexByte(raw[1:n-1], '"') < 0 {
			return string(raw[1 : n-1])
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	s := strings.TrimSpace(string(raw))
	if s == "null" {
		return ""
	}
	return s
}

func axProp(n *accessibility.Node, name accessibility.PropertyName) string {
	for _, p := range n.Properties {
		if p != nil && p.Name == name {
			return axString(p.Value)
		}
	}
	return ""
}

// axAttrs returns the state attributes of n in Playwright's order. With
// playwright set, [level] is kept only where Playwright shows it (headings
// and tree items) since Chromium also reports it on list items.
func axAttrs(n *accessibility.Node, role string, playwright bool) []Attr {
	var checked, disabled, expanded, focused, invalid, level, pressed, selected string
	for _, p := range n.Properties {
		if p == nil {
			continue
		}
		switch p.Name {
		case accessibility.PropertyNameChecked:
			checked = axString(p.Value)
		case accessibility.PropertyNameDisabled:
			disabled = axString(p.Value)
		case accessibility.PropertyNameExpanded:
			expanded = axString(p.Value)
		case accessibility.PropertyNameFocused:
			focused = axString(p.Value)
		case accessibility.PropertyNameInvalid:
			invalid = axString(p.Value)
		case accessibility.PropertyNameLevel:
			level = axString(p.Value)
		case accessibility.PropertyNamePressed:
			pressed = axString(p.Value)
		case accessibility.PropertyNameSelected:
			selected = axString(p.Value)
		}
	}
	var attrs []Attr
	add := func(k, v string) { attrs = append(attrs, Attr{Key: k, Value: v}) }
	tristate := func(v, key string) {
		switch v {
		case "true":
			add(key, "")
		case "mixed":
			add(key, "mixed")
		}
	}
	tristate(checked, "checked")
	if disabled == "true" {
		add("disabled", "")
	}
	if expanded == "true" {
		add("expanded", "")
	}
	if focused == "true" && role != "RootWebArea" {
		add("active", "")
	}
	switch invalid {
	case "true":
		add("invalid", "")
	case "grammar", "spelling":
		add("invalid", invalid)
	}
	if level != "" && level != "0" && (!playwright || role == "heading" || role == "treeitem") {
		add("level", level)
	}
	tristate(pressed, "pressed")
	if selected == "true" {
		add("selected", "")
	}
	return attrs
}
