package snapshot

import (
	"fmt"
	"strconv"
	"strings"
)

// The compact form of a diff (DiffOptions.Compact) says what changed and
// where, for an agent that pays for every character:
//
//	in main > list "Todo list" [ref=e12]:
//	~ checkbox "buy milk" [checked] [ref=e18]
//	- listitem: read book
//	in contentinfo:
//	- text: 3 items left
//	+ text: 2 items left
//	+ button "Clear completed" [ref=e40] [new]
//
// A change is printed under one path line naming its nearest landmark and
// its nearest named element or container ("in main > list … [ref=…]:"),
// printed again only when the next change is elsewhere; unchanged lines are
// never printed, nor the property lines (/url …) of a node whose properties
// did not change. An element whose states alone changed prints once, marked
// "~", with the states it lost ("~ button "All" [ref=e8] (was [pressed])");
// any other changed line prints as its old version ("- ", without ref) and
// its new one ("+ "). A removed node prints its line without ref (the ref is
// gone) and, when it had children, their text ("- listitem: read book"). An
// added subtree of more than one line prints as one line: its top line,
// marked [new], then its interactive elements, headings and texts ("+ list
// [ref=e13] [new]: 3 items — checkbox "buy milk" [ref=e16], …"), cut at
// compactSummary characters with a pointer to the rest. An element whose
// children are only a few texts (a counter "<strong>2</strong> items left")
// changes as one text line.
//
// Elements are matched by ref first, then, for a node whose ref is new, by
// content among the unmatched nodes of the same parent: a re-render that
// replaced nodes with equal ones (new refs, same lines) is no change, and
// DiffResult.Aliases maps each replaced ref to the ref of its equal.

// compactSummary bounds the text of one added subtree's summary line.
const compactSummary = 240

// containerRoles are the roles a path line names when no named ancestor is
// nearer.
var containerRoles = map[string]bool{
	"list": true, "table": true, "grid": true, "treegrid": true, "tree": true, "group": true,
	"menu": true, "menubar": true, "listbox": true, "tablist": true, "tabpanel": true,
	"toolbar": true, "radiogroup": true, "article": true, "form": true, "dialog": true,
	"alertdialog": true, "region": true, "navigation": true, "row": true,
}

// contentOf is what a node is when its ref is new: kind, role, name and
// inline text, and for an element without a name the text of what it
// holds (cut at 200 bytes).
func (d *differ) contentOf(n *Node) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(int(n.Kind)))
	b.WriteByte(0)
	b.WriteString(n.Role)
	b.WriteByte(0)
	b.WriteString(n.Name)
	b.WriteByte(0)
	b.WriteString(n.Text)
	b.WriteString(n.Raw)
	if n.Name == "" {
		b.WriteByte(0)
		b.WriteString(d.flat(n, 200))
	}
	return b.String()
}

// flat is the text of n's descendants (names and texts), space-separated,
// cut near max bytes.
func (d *differ) flat(n *Node, max int) string {
	var b []byte
	last := ""
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, c := range ns {
			if len(b) >= max {
				return
			}
			for _, s := range []string{c.Name, c.Text} {
				// A label's text after the control it names says it twice.
				if s != "" && s != last {
					if len(b) > 0 {
						b = append(b, ' ')
					}
					b = append(b, s...)
					last = s
				}
			}
			walk(c.Children)
		}
	}
	walk(n.Children)
	return string(b)
}

// childIndex is the content and shape index of one prev parent's
// children, built when a node under that parent first needs it.
type childIndex struct {
	content map[string][]*Node
	shape   map[string][]*Node
}

// children indexes the children of a prev parent (nil: the roots).
func (d *differ) children(prevParent *Node) *childIndex {
	if ix := d.prevIndex[prevParent]; ix != nil {
		return ix
	}
	kids := d.prevRoots
	if prevParent != nil {
		kids = prevParent.Children
	}
	ix := &childIndex{content: map[string][]*Node{}, shape: map[string][]*Node{}}
	for _, n := range kids {
		k := d.contentOf(n)
		ix.content[k] = append(ix.content[k], n)
		if shaped(n) {
			ix.shape[shapeOf(n)] = append(ix.shape[shapeOf(n)], n)
		}
	}
	d.prevIndex[prevParent] = ix
	return ix
}

// free reports whether a prev node may still be matched: not matched yet,
// and its identity is not elsewhere in cur.
func (d *differ) free(p *Node) bool {
	if d.prevMatch[p] != nil {
		return false
	}
	id := d.identity(p)
	return id == "" || !d.curAllIDs[id]
}

// shaped reports whether a node is matched by role and name alone when
// its ref and its content changed: a landmark or a container that got or
// lost a ref with its children (an empty list has none), not an item.
func shaped(n *Node) bool {
	return n.Kind == KindElement && (landmarkRoles[n.Role] || containerRoles[n.Role] && n.Role != "row" && n.Role != "article")
}

func shapeOf(n *Node) string { return n.Role + "\x00" + n.Name }

// shapeMatch finds the first free landmark or container of prev under
// prevParent with n's role and name.
func (d *differ) shapeMatch(n, prevParent *Node) *Node {
	if !shaped(n) {
		return nil
	}
	for _, p := range d.children(prevParent).shape[shapeOf(n)] {
		if d.free(p) {
			return p
		}
	}
	return nil
}

// contentMatch finds the first free node of prev under prevParent with
// n's content.
func (d *differ) contentMatch(n, prevParent *Node) *Node {
	for _, p := range d.children(prevParent).content[d.contentOf(n)] {
		if d.free(p) {
			return p
		}
	}
	return nil
}

func (d *differ) collectIDs(nodes []*Node) {
	for _, n := range nodes {
		if id := d.identity(n); id != "" {
			d.curAllIDs[id] = true
		}
		d.collectIDs(n.Children)
	}
}

// refless is n's line without its ref, "- " and the ':' that announces
// children.
func (d *differ) refless(n *Node) string {
	c := *n
	c.Ref = ""
	if c.Raw != "" && n.Ref != "" {
		c.Raw = strings.Replace(c.Raw, " [ref="+n.Ref+"]", "", 1)
	}
	return strings.TrimPrefix(string(appendLine(nil, &c, lineOpts{noColon: true})), "- ")
}

// compactLine is n's line without "- " (and without ':' when noColon).
func compactLine(n *Node, o lineOpts) string {
	return strings.TrimPrefix(string(appendLine(nil, n, o)), "- ")
}

// pathLabel names an ancestor in a path line.
func pathLabel(n *Node, withRef bool) string {
	c := Node{Kind: KindElement, Role: n.Role, Name: clip(n.Name, 40), Regex: n.Regex}
	if withRef {
		c.Ref = n.Ref
	}
	return compactLine(&c, lineOpts{noColon: true})
}

// header is the path line of a change under the ancestors stack (outermost
// first): the nearest landmark, then the nearest named element or
// container inside it, with its ref (an unnamed landmark's role says
// where; its ref would only cost).
func header(stack []*Node) string {
	li, ci := -1, -1
	for i := len(stack) - 1; i >= 0; i-- {
		n := stack[i]
		if n.Kind != KindElement {
			continue
		}
		if landmarkRoles[n.Role] {
			li = i
			break
		}
		if ci < 0 && (n.Name != "" || containerRoles[n.Role]) {
			ci = i
		}
	}
	var parts []string
	if li >= 0 {
		parts = append(parts, pathLabel(stack[li], ci < 0 && stack[li].Name != ""))
	}
	if ci >= 0 {
		parts = append(parts, pathLabel(stack[ci], true))
	}
	if len(parts) == 0 {
		return "in page:"
	}
	return "in " + strings.Join(parts, " > ") + ":"
}

// maxAddedShown is how many added siblings a compact diff prints under one
// parent; more are counted on one line that points at the parent.
const maxAddedShown = 5

// compactEmitter writes the compact lines.
type compactEmitter struct {
	d    *differ
	last string // the path line printed last
}

func (e *compactEmitter) line(stack []*Node, s string) {
	if h := header(stack); h != e.last {
		e.d.lines = append(e.d.lines, h)
		e.last = h
	}
	e.d.lines = append(e.d.lines, s)
}

func (e *compactEmitter) emit(nodes []*Node, parent *Node, stack []*Node) {
	d := e.d
	e.removed(anchor{parent: parent}, stack)
	shown, hidden := 0, 0
	defer func() {
		if hidden == 0 {
			return
		}
		l := fmt.Sprintf("+ … %d more added", hidden)
		if parent != nil && parent.Ref != "" {
			l += ": browser_snapshot target=" + parent.Ref
		}
		e.line(stack, l)
	}()
	for _, n := range nodes {
		ci := d.info(n)
		switch {
		case ci.status == statusAdded && shown >= maxAddedShown:
			// Rows of a list that loaded: the first ones say what they
			// are, the rest are counted.
			d.added += 1 + countNodes(n.Children) + len(n.Props)
			d.countNew(n)
			hidden++
		case ci.status == statusAdded:
			e.added(n, stack)
			shown++
		case ci.dirty && e.textGroup(n, ci, stack):
		case ci.status == statusChanged:
			p := ci.prev
			if gone, ok := onlyStates(p, n); ok {
				// A state that changed: one line, the state it lost said.
				l := "~ " + compactLine(n, lineOpts{noColon: true})
				if gone != "" {
					l += " (was" + gone + ")"
				}
				e.line(stack, l)
				d.changed++
				e.emit(n.Children, n, append(stack, n))
				break
			}
			e.line(stack, "- "+d.refless(p))
			e.line(stack, "+ "+compactLine(n, lineOpts{noColon: true}))
			if !sameProps(n.Props, p.Props) {
				for _, pr := range n.Props {
					if !hasProp(p.Props, pr) {
						e.line(stack, "+   "+strings.TrimPrefix(string(appendProp(nil, pr)), "- "))
					}
				}
				d.added += len(n.Props)
				d.removed += len(p.Props)
			}
			d.changed++
			e.emit(n.Children, n, append(stack, n))
		case ci.dirty:
			e.emit(n.Children, n, append(stack, n))
		}
		e.removed(anchor{parent: parent, after: n}, stack)
	}
}

// onlyStates reports whether p and n differ only in their bracketed
// states (and ref), and returns the states p had that n lacks, rendered
// (" [pressed]").
func onlyStates(p, n *Node) (string, bool) {
	if p.Kind != KindElement || n.Kind != KindElement || p.Raw != "" || n.Raw != "" || p.Role != n.Role ||
		p.Name != n.Name || p.Regex != n.Regex || p.Text != n.Text || !sameProps(p.Props, n.Props) {
		return "", false
	}
	var gone []byte
	for _, a := range p.Attrs {
		if v, ok := n.Attr(a.Key); !ok || v != a.Value {
			gone = appendAttr(gone, a)
		}
	}
	return string(gone), true
}

func hasProp(ps []Prop, p Prop) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// textGroup prints a matched element whose children (in both trees) are
// only a few texts as one changed text line, and reports whether it did.
func (e *compactEmitter) textGroup(n *Node, ci *curInfo, stack []*Node) bool {
	p := ci.prev
	if p == nil || n.Name != "" || len(n.Children) == 0 || len(n.Children) > 4 || len(p.Children) > 4 || !leafTexts(n.Children) || !leafTexts(p.Children) {
		return false
	}
	was, now := e.d.flat(p, 200), e.d.flat(n, 200)
	if len(now) > 120 || len(was) > 120 {
		return false
	}
	// Its own line changed too: a state or ref, not only its texts.
	if ci.status == statusChanged {
		return false
	}
	if was != now {
		if was != "" {
			e.line(stack, "- text: "+string(appendValue(nil, was)))
			e.d.removed++
		}
		e.line(stack, "+ text: "+string(appendValue(nil, now)))
		e.d.added++
		e.d.changed++
	}
	return true
}

// leafTexts reports whether ns are texts or childless elements that are
// not interactive (a <strong>, a <span>).
func leafTexts(ns []*Node) bool {
	for _, n := range ns {
		if len(n.Children) > 0 || n.Kind == KindOpaque || len(n.Props) > 0 {
			return false
		}
		if n.Kind == KindElement && (ClassOf(n.Role) == ClassInteractive || n.Name != "") {
			return false
		}
	}
	return true
}

// added prints an added subtree: its line, or one summary line.
func (e *compactEmitter) added(n *Node, stack []*Node) {
	d := e.d
	id := d.identity(n)
	isNew := id != "" && d.prevByID[id] == nil
	count := countNodes(n.Children) + len(n.Props)
	d.added += 1 + count
	d.countNew(n)
	if len(n.Children) == 0 {
		s := "+ " + compactLine(n, lineOpts{markNew: isNew, noColon: true})
		e.line(stack, s)
		for _, pr := range n.Props {
			e.line(stack, "+   "+strings.TrimPrefix(string(appendProp(nil, pr)), "- "))
		}
		return
	}
	s := "+ " + compactLine(n, lineOpts{markNew: isNew, noColon: true}) + ": " + summary(n)
	e.line(stack, s)
}

// countNew counts the new refs of an added subtree.
func (d *differ) countNew(n *Node) {
	if id := d.identity(n); id != "" && d.prevByID[id] == nil {
		d.newRef++
	}
	for _, c := range n.Children {
		d.countNew(c)
	}
}

// summary is what an added subtree holds, for its one line: the number of
// items of a list-like node, then its interactive elements, headings and
// texts in document order, cut at compactSummary characters.
func summary(n *Node) string {
	var b strings.Builder
	if len(n.Children) > 1 && homogeneous(n.Children) {
		b.WriteString(strconv.Itoa(len(n.Children)))
		b.WriteString(" items — ")
	}
	start := b.Len()
	var parts []string
	lastName := ""
	var walk func(ns []*Node)
	walk = func(ns []*Node) {
		for _, c := range ns {
			switch {
			case c.Kind == KindText:
				if c.Text != lastName {
					parts = append(parts, string(appendValue(nil, clip(c.Text, 60))))
				}
			case c.Kind == KindElement && (ClassOf(c.Role) == ClassInteractive || c.Role == "heading"):
				parts = append(parts, shortCompact(c))
				lastName = c.Name
				if ClassOf(c.Role) == ClassInteractive {
					continue // a control's children are its own
				}
			case c.Kind == KindElement && c.Text != "" && c.Text != lastName:
				parts = append(parts, string(appendValue(nil, clip(c.Text, 60))))
			}
			walk(c.Children)
		}
	}
	if n.Text != "" {
		parts = append(parts, string(appendValue(nil, clip(n.Text, 60))))
	}
	walk(n.Children)
	for i, p := range parts {
		if i > 0 && b.Len()-start+len(p) > compactSummary {
			b.WriteString(", … ")
			b.WriteString(strconv.Itoa(len(parts) - i))
			b.WriteString(" more")
			if n.Ref != "" {
				b.WriteString(": browser_snapshot target=")
				b.WriteString(n.Ref)
			}
			return b.String()
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p)
	}
	if len(parts) == 0 {
		b.WriteString(lines(countNodes(n.Children)))
	}
	return b.String()
}

// shortCompact is shortLine without "- ".
func shortCompact(n *Node) string {
	return strings.TrimPrefix(shortLine(n), "- ")
}

// removed prints the removed subtrees placed at a.
func (e *compactEmitter) removed(a anchor, stack []*Node) {
	d := e.d
	for _, n := range d.removedAt[a] {
		inside := d.removedInside(n)
		s := "- " + d.refless(n)
		if len(n.Children) > 0 && n.Text == "" {
			if f := d.flat(n, 80); f != "" {
				s += ": " + string(appendValue(nil, clip(f, 60)))
			}
		}
		e.line(stack, s)
		d.removed += 1 + inside
	}
}
