package snapshot

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DiffResult is the difference between two snapshots of a page.
type DiffResult struct {
	// Text is the diff (see Diff for the format); empty when Unchanged.
	Text string
	// Unchanged is true when the two trees render the same lines.
	Unchanged bool
	// Added counts added lines (including the lines of added subtrees),
	// Removed removed lines (including those folded into a removed
	// subtree's line), Changed the lines whose content changed.
	Added, Removed, Changed int
	// NewRefs counts the lines marked [new]: refs the previous tree did not
	// have.
	NewRefs int
	// Truncated is true when the budget cut the diff; OmittedLines and
	// OmittedChars say how much was left out.
	Truncated    bool
	OmittedLines int
	OmittedChars int
	// Aliases maps each ref of prev that a re-render replaced with an equal
	// node to that node's ref in cur (compact diffs only).
	Aliases map[string]string
}

// Diff compares two snapshots of the same page and returns what changed from
// prev to cur, for an agent that already read prev. A nil tree counts as
// empty.
//
// Each line of Text is a two-character gutter followed by the snapshot line
// with its usual indentation:
//
//	"  " an unchanged ancestor, printed for context;
//	"+ " a line that appeared, or the new version of a changed line;
//	"- " a line that disappeared, or the old version of a changed line.
//
// A changed line (same element, different text) prints as a "- " line
// followed by a "+ " line. Every line of an added subtree is printed; a
// removed subtree prints only its top line, followed by "(+N lines inside)"
// when it had more (a moved element is not counted: it shows where it went).
// Added lines whose ref prev did not have end with [new]. The diff of
// testdata/snapshot/lab.html after a click (excerpt):
//
//	# Diff(Parse(before), Parse(after), 0).Text
//	  - main [ref=e2]:
//	-   - button "Press me" [ref=e8]
//	+   - button "Press me" [active] [pressed] [ref=e8]
//	    - list [ref=e27]:
//	-     - listitem [ref=e28]: One
//	+     - listitem [ref=e28]: One changed
//	    - table [ref=e40]:
//	      - rowgroup [ref=e45]:
//	-       - row [ref=e49] (+2 lines inside)
//	+   - dialog "Confirm" [ref=e65] [new]:
//	+     - paragraph [ref=e66] [new]: Sure?
//
// Nodes are matched by identity, which is the ref for AI trees; for Role
// trees the role, name, nth and frame behind the ref, and for ARIA trees the
// DOM node, since their refs are positional unless the trees were built with
// Previous. Lines without a ref are matched by role and name (or text) and
// rank among their siblings under the matched parent. A diff of two trees
// that render alike is empty, with Unchanged set.
//
// If budget > 0, Text holds at most budget characters of diff lines, cut on
// a line boundary, followed by a line saying how much was left out:
//
//	[...DIFF TRUNCATED - 12 lines (530 chars) not shown]
func Diff(prev, cur *Tree, budget int) DiffResult {
	return DiffWith(prev, cur, DiffOptions{Budget: budget})
}

// DiffOptions tune DiffWith for an agent's context window. The zero value is
// Diff's behaviour without a budget.
type DiffOptions struct {
	// Budget bounds Text as in Diff; 0 means no bound.
	Budget int
	// Collapse, if > 0, prints at most Collapse children of an added node
	// that has more than 2×Collapse children of one kind (a list's items, a
	// table's rows: at least 4 in 5 share a role), and then one line
	// "+ - … N more lines (M refs): snapshot target=<ref>" naming the node
	// whose subtree holds them. 0 prints every line.
	Collapse int
	// RootNewOnly marks [new] only on the top line of an added subtree (its
	// "+" lines are all new anyway), not on every line inside it.
	RootNewOnly bool
	// Compact prints the compact form (see compact.go): one path line per
	// place that changed instead of the ancestors, no unchanged lines or
	// property lines, an added subtree as one summary line; and it matches
	// a node whose ref is new by content, so that a re-render with equal
	// nodes is no change.
	Compact bool
}

// DiffWith is Diff with options.
func DiffWith(prev, cur *Tree, o DiffOptions) DiffResult {
	budget := o.Budget
	if prev == nil {
		prev = &Tree{}
	}
	if cur == nil {
		cur = &Tree{Mode: prev.Mode}
	}
	np, nc := countNodes(prev.Roots), countNodes(cur.Roots)
	d := &differ{
		opts:       o,
		prevByID:   make(map[string]*Node, np),
		prevByPath: make(map[pathKey]*Node),
		prevMatch:  make(map[*Node]*Node, min(np, nc)),
		curIndex:   make(map[*Node]int32, nc),
		curInfos:   make([]curInfo, 0, nc),
		occ:        make(map[pathKey]int),
		removedAt:  make(map[anchor][]*Node),
		curIDs:     make(map[string]bool, nc),
	}
	switch {
	case prev.Mode == ModeRole && cur.Mode == ModeRole:
		d.idMode = idRole
	case prev.Mode == ModeARIA && cur.Mode == ModeARIA:
		d.idMode = idBackend
	}
	if o.Compact {
		d.prevIndex = make(map[*Node]*childIndex)
		d.prevRoots = prev.Roots
		d.curAllIDs = make(map[string]bool, nc)
		d.aliases = make(map[string]string)
		d.collectIDs(cur.Roots)
	}
	d.indexPrev(prev.Roots, nil)
	clear(d.occ)
	d.walkCur(cur.Roots, nil, nil, true)
	d.placeRemoved(prev.Roots, nil, true)
	d.markDirty(cur.Roots)
	if o.Compact {
		(&compactEmitter{d: d}).emit(cur.Roots, nil, nil)
	} else {
		d.emit(cur.Roots, nil, 0, false)
	}
	r := d.result(budget)
	if len(d.aliases) > 0 {
		r.Aliases = d.aliases
	}
	return r
}

type idMode uint8

const (
	idRef     idMode = iota // the ref string (AI trees)
	idRole                  // role, name, nth, frame (Role trees)
	idBackend               // BackendDOMNodeID (ARIA trees)
)

type status uint8

const (
	statusSame status = iota
	statusChanged
	statusAdded
)

type pathKey struct {
	parent *Node // the parent in prev (nil at the top level)
	kind   Kind
	role   string
	name   string
	occ    int
}

type anchor struct {
	parent *Node // cur parent, nil at the top level
	after  *Node // cur sibling the removed lines follow, nil for first
}

type curInfo struct {
	parent *Node
	prev   *Node
	status status
	dirty  bool // something under or at this node is printed
	hasRm  bool // removed lines are placed among its children
}

type differ struct {
	opts       DiffOptions
	idMode     idMode
	prevByID   map[string]*Node
	prevByPath map[pathKey]*Node
	prevMatch  map[*Node]*Node // prev node → its match in cur
	curIndex   map[*Node]int32 // cur node → its curInfos index
	curInfos   []curInfo
	occ        map[pathKey]int
	removedAt  map[anchor][]*Node
	curIDs     map[string]bool // identities seen so far in cur

	// Compact only: prev nodes by parent and content, every identity of
	// cur, and the refs of replaced nodes.
	prevIndex map[*Node]*childIndex // built as needed (compact.go)
	prevRoots []*Node
	curAllIDs map[string]bool
	aliases   map[string]string

	lines                           []string
	added, removed, changed, newRef int
	buf                             []byte
}

// info returns the match record of a node of cur.
func (d *differ) info(n *Node) *curInfo {
	return &d.curInfos[d.curIndex[n]]
}

func (d *differ) identity(n *Node) string {
	if n.Ref == "" || n.Kind != KindElement {
		return ""
	}
	switch d.idMode {
	case idRole:
		if id := n.ident; id != nil {
			return "r\x00" + id.FrameID + "\x00" + id.Role + "\x00" + id.Name + "\x00" + strconv.Itoa(id.Nth)
		}
	case idBackend:
		if n.backend != 0 {
			return "b\x00" + strconv.FormatInt(n.backend, 10)
		}
	}
	return n.Ref
}

// siblingKey returns the path key of a ref-less node under parent, counting
// its rank among earlier siblings with the same key.
func (d *differ) siblingKey(n, parent *Node) pathKey {
	k := pathKey{parent: parent, kind: n.Kind, role: n.Role, name: n.Name}
	switch n.Kind {
	case KindText:
		k.name = n.Text
	case KindOpaque:
		k.name = n.Raw
	}
	occ := d.occ[k] // k.occ is still 0: the counter's key
	d.occ[k] = occ + 1
	k.occ = occ
	return k
}

func (d *differ) indexPrev(nodes []*Node, parent *Node) {
	for _, n := range nodes {
		// A repeated identity (malformed input) is matched like a line
		// without a ref, in both trees.
		if id := d.identity(n); id != "" && d.prevByID[id] == nil {
			d.prevByID[id] = n
		} else {
			d.prevByPath[d.siblingKey(n, parent)] = n
		}
		d.indexPrev(n.Children, n)
	}
}

// walkCur matches the nodes of cur to those of prev. prevParent is the match
// of their parent; parentMatched is false under an added node, where only
// refs can match.
func (d *differ) walkCur(nodes []*Node, parent, prevParent *Node, parentMatched bool) {
	for _, n := range nodes {
		d.curIndex[n] = int32(len(d.curInfos))
		d.curInfos = append(d.curInfos, curInfo{parent: parent, status: statusAdded})
		ci := &d.curInfos[len(d.curInfos)-1]
		var p *Node
		if id := d.identity(n); id != "" && !d.curIDs[id] {
			d.curIDs[id] = true
			p = d.prevByID[id]
			if p == nil && d.prevIndex != nil && parentMatched {
				// A new ref: a node the page replaced with an equal one?
				p = d.contentMatch(n, prevParent)
				if p == nil {
					// Or a container that had no ref, or another (an
					// empty main gets one when it gets children).
					p = d.shapeMatch(n, prevParent)
				}
				if p == nil {
					// Or the node at its place that had no ref (an empty
					// paragraph that got a text).
					k := d.siblingKey(n, parent)
					k.parent = prevParent
					if q := d.prevByPath[k]; q != nil && d.identity(q) == "" {
						p = q
					}
				}
			}
		} else {
			k := d.siblingKey(n, parent)
			if parentMatched {
				k.parent = prevParent
				p = d.prevByPath[k]
				if p == nil && d.prevIndex != nil {
					p = d.shapeMatch(n, prevParent) // a container that lost its ref
				}
			}
		}
		if p != nil && d.prevMatch[p] == nil {
			d.prevMatch[p] = n
			ci.prev = p
			ci.status = statusSame
			if !sameLine(n, p) && d.compareKey(n) != d.compareKey(p) {
				ci.status = statusChanged
			}
			if d.aliases != nil && p.Ref != "" && n.Ref != "" && p.Ref != n.Ref {
				d.aliases[p.Ref] = n.Ref
			}
		}
		d.walkCur(n.Children, n, ci.prev, ci.prev != nil)
	}
}

// sameLine reports whether a and b have the same fields, and so the same
// line (compareKey decides when they do not: two nodes may differ in
// fields yet render alike).
func sameLine(a, b *Node) bool {
	if a.Kind != b.Kind || a.Role != b.Role || a.Name != b.Name || a.Regex != b.Regex || a.Ref != b.Ref ||
		a.Text != b.Text || a.Raw != b.Raw || len(a.Attrs) != len(b.Attrs) || !sameProps(a.Props, b.Props) {
		return false
	}
	for i := range a.Attrs {
		if a.Attrs[i] != b.Attrs[i] {
			return false
		}
	}
	return true
}

// compareKey is the text that decides whether a matched line changed: the
// line without the ':' that only says it has children, and its properties.
func (d *differ) compareKey(n *Node) string {
	if d.opts.Compact {
		// A replaced node's new ref is not a change.
		d.buf = append(d.buf[:0], d.refless(n)...)
	} else {
		d.buf = appendLine(d.buf[:0], n, lineOpts{noColon: true})
	}
	for _, p := range n.Props {
		d.buf = append(d.buf, '\n')
		d.buf = appendProp(d.buf, p)
	}
	return string(d.buf)
}

// placeRemoved finds the nodes of prev that cur lacks and decides where they
// print: after the cur match of their nearest preceding matched sibling.
// Only the top node of a removed subtree is placed.
func (d *differ) placeRemoved(nodes []*Node, prevParent *Node, parentMatched bool) {
	var curParent *Node
	if prevParent != nil {
		curParent = d.prevMatch[prevParent]
	}
	var after *Node
	for _, n := range nodes {
		m := d.prevMatch[n]
		switch {
		case m != nil:
			if d.info(m).parent == curParent {
				after = m
			}
		case parentMatched:
			a := anchor{parent: curParent, after: after}
			d.removedAt[a] = append(d.removedAt[a], n)
			if curParent != nil {
				d.info(curParent).hasRm = true
			}
		}
		d.placeRemoved(n.Children, n, m != nil)
	}
}

// markDirty sets curInfo.dirty, bottom up, and reports whether any of nodes
// is dirty.
func (d *differ) markDirty(nodes []*Node) bool {
	dirty := false
	for _, n := range nodes {
		kids := d.markDirty(n.Children)
		ci := d.info(n)
		ci.dirty = kids || ci.hasRm || ci.status != statusSame
		dirty = dirty || ci.dirty
	}
	return dirty
}

func (d *differ) emit(nodes []*Node, parent *Node, depth int, inAdded bool) {
	d.emitRemoved(anchor{parent: parent}, depth)
	for _, n := range nodes {
		ci := d.info(n)
		switch {
		case inAdded || ci.status == statusAdded:
			id := d.identity(n)
			isNew := id != "" && d.prevByID[id] == nil
			if isNew {
				d.newRef++
			}
			d.addLine("+ ", depth, n, lineOpts{markNew: isNew && !(inAdded && d.opts.RootNewOnly)})
			d.addProps("+ ", depth+1, n)
			d.added += 1 + len(n.Props)
			if c := d.opts.Collapse; c > 0 && len(n.Children) > 2*c && homogeneous(n.Children) {
				d.emit(n.Children[:c], n, depth+1, true)
				d.collapsed(n, n.Children[c:], depth+1)
			} else {
				d.emit(n.Children, n, depth+1, true)
			}
		case ci.status == statusChanged:
			p := ci.prev
			samePropsList := sameProps(n.Props, p.Props)
			d.addLine("- ", depth, p, lineOpts{})
			if !samePropsList {
				d.addProps("- ", depth+1, p)
			}
			d.addLine("+ ", depth, n, lineOpts{})
			if !samePropsList {
				d.addProps("+ ", depth+1, n)
			}
			d.changed++
			d.emit(n.Children, n, depth+1, false)
		case ci.dirty:
			d.addLine("  ", depth, n, lineOpts{})
			d.emit(n.Children, n, depth+1, false)
		}
		d.emitRemoved(anchor{parent: parent, after: n}, depth)
	}
}

// homogeneous reports whether at least 4 in 5 nodes share a role: a list
// worth collapsing, not a form whose every field matters.
func homogeneous(ns []*Node) bool {
	count := map[string]int{}
	top := 0
	for _, n := range ns {
		key := n.Role
		if n.Kind != KindElement {
			key = "\x00text"
		}
		count[key]++
		top = max(top, count[key])
	}
	return top*5 >= len(ns)*4
}

// collapsed summarises the hidden children of an added node in one line.
func (d *differ) collapsed(parent *Node, hidden []*Node, depth int) {
	lineCount, refs := 0, 0
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, n := range ns {
			lineCount += 1 + len(n.Props)
			if n.Ref != "" {
				refs++
				if id := d.identity(n); id != "" && d.prevByID[id] == nil {
					d.newRef++
				}
			}
			walk(n.Children)
		}
	}
	walk(hidden)
	d.added += lineCount
	d.buf = append(d.buf[:0], "+ "...)
	d.buf = appendIndent(d.buf, depth)
	d.buf = append(d.buf, "- … "...)
	d.buf = append(d.buf, strconv.Itoa(len(hidden))...)
	d.buf = append(d.buf, " more ("...)
	d.buf = append(d.buf, lines(lineCount)...)
	d.buf = append(d.buf, ", "...)
	d.buf = append(d.buf, strconv.Itoa(refs)...)
	d.buf = append(d.buf, " refs)"...)
	if parent.Ref != "" {
		d.buf = append(d.buf, ": snapshot target="...)
		d.buf = append(d.buf, parent.Ref...)
	}
	d.lines = append(d.lines, string(d.buf))
}

func (d *differ) emitRemoved(a anchor, depth int) {
	for _, n := range d.removedAt[a] {
		inside := d.removedInside(n)
		d.buf = append(d.buf[:0], "- "...)
		d.buf = appendIndent(d.buf, depth)
		if inside > 0 {
			d.buf = appendLine(d.buf, n, lineOpts{noColon: true})
			d.buf = append(d.buf, " (+"...)
			d.buf = append(d.buf, lines(inside)...)
			d.buf = append(d.buf, " inside)"...)
		} else {
			d.buf = appendLine(d.buf, n, lineOpts{})
		}
		d.lines = append(d.lines, string(d.buf))
		d.removed += 1 + inside
	}
}

// removedInside counts the lines under a removed node that went with it
// (not those that moved elsewhere in cur).
func (d *differ) removedInside(n *Node) int {
	c := len(n.Props)
	for _, k := range n.Children {
		if d.prevMatch[k] == nil {
			c += 1 + d.removedInside(k)
		}
	}
	return c
}

func (d *differ) addLine(mark string, depth int, n *Node, o lineOpts) {
	d.buf = append(d.buf[:0], mark...)
	d.buf = appendIndent(d.buf, depth)
	d.buf = appendLine(d.buf, n, o)
	d.lines = append(d.lines, string(d.buf))
}

func (d *differ) addProps(mark string, depth int, n *Node) {
	for _, p := range n.Props {
		d.buf = append(d.buf[:0], mark...)
		d.buf = appendIndent(d.buf, depth)
		d.buf = appendProp(d.buf, p)
		d.lines = append(d.lines, string(d.buf))
	}
}

// lines returns "1 line" or "n lines".
func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return strconv.Itoa(n) + " lines"
}

func sameProps(a, b []Prop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (d *differ) result(budget int) DiffResult {
	r := DiffResult{
		Unchanged: len(d.lines) == 0,
		Added:     d.added,
		Removed:   d.removed,
		Changed:   d.changed,
		NewRefs:   d.newRef,
	}
	keep, used := len(d.lines), 0
	if budget > 0 {
		for i, l := range d.lines {
			n := utf8.RuneCountInString(l)
			if i > 0 {
				n++ // newline
			}
			if used+n > budget {
				keep = i
				break
			}
			used += n
		}
	}
	r.Text = strings.Join(d.lines[:keep], "\n")
	if keep < len(d.lines) {
		r.Truncated = true
		r.OmittedLines = len(d.lines) - keep
		for _, l := range d.lines[keep:] {
			r.OmittedChars += utf8.RuneCountInString(l) + 1
		}
		note := "[...DIFF TRUNCATED - " + lines(r.OmittedLines) + " (" +
			strconv.Itoa(r.OmittedChars) + " chars) not shown]"
		if r.Text != "" {
			r.Text += "\n"
		}
		r.Text += note
	}
	return r
}
