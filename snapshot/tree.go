package snapshot

import (
	"errors"
	"strings"
)

// ErrUnknownRef is returned when a ref does not name a node of the snapshot.
// Callers tell the agent to take a new snapshot.
var ErrUnknownRef = errors.New("snapshot: unknown ref")

// Mode names the source a Tree was built from.
type Mode uint8

const (
	// ModeAI is Playwright's AI snapshot text (refs e1, f1e2), read by Parse.
	ModeAI Mode = iota
	// ModeARIA is Chromium's full accessibility tree (refs ax1, ax2…), built
	// by FromAXTree.
	ModeARIA
	// ModeRole is the role snapshot built from the accessibility tree by
	// RoleTree (refs r1, r2…).
	ModeRole
)

// String returns "ai", "aria" or "role".
func (m Mode) String() string {
	switch m {
	case ModeAI:
		return "ai"
	case ModeARIA:
		return "aria"
	case ModeRole:
		return "role"
	}
	return "unknown"
}

// Kind says what a line of a snapshot is.
type Kind uint8

const (
	// KindElement is a role line: `- role "name" [attr] [ref=e1]: text`.
	KindElement Kind = iota
	// KindText is a text line: `- text: value`.
	KindText
	// KindOpaque is a line the parser did not understand; Raw holds it.
	KindOpaque
)

// Attr is one bracketed attribute of an element line: [Key] when Value is
// empty, [Key=Value] otherwise. The ref is not an Attr: it is Node.Ref.
type Attr struct {
	Key, Value string
}

// Prop is a property line under an element, rendered `- /Name: Value`
// (Playwright's /url and /placeholder).
type Prop struct {
	Name, Value string
}

// Node is one line of a snapshot and the lines nested under it. The same type
// serves the AI, ARIA and Role modes.
type Node struct {
	Kind Kind
	// Role is the ARIA role (Chromium's raw role in ARIA mode).
	Role string
	// Name is the accessible name.
	Name string
	// Regex says Name is a regular expression, written /…/ without quotes
	// (Playwright's codegen and expect templates); AI snapshots quote every
	// name.
	Regex bool
	// Ref is the short reference an agent acts on ("e5", "f1e2", "ax3", "r7").
	Ref string
	// Attrs are the bracketed attributes other than the ref, in order.
	Attrs []Attr
	// Text is the inline value after ": " (a textbox value, a single text
	// child), or the text of a KindText line.
	Text string
	// Props are the property lines (/url …) rendered before the children.
	Props []Prop
	// Children are the nested lines.
	Children []*Node
	// Raw, when not empty, is rendered verbatim (after the indentation)
	// instead of the line built from the fields above. Parse sets it for
	// KindOpaque lines and for lines whose canonical rendering would differ
	// from the input, so that rendering a parsed snapshot reproduces it.
	Raw string

	backend int64    // BackendDOMNodeID, ARIA and Role trees
	ident   *RoleRef // role identity, Role trees
}

// Attr returns the value of the attribute key and whether the node has it.
func (n *Node) Attr(key string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Tree is a parsed or built snapshot: the top-level lines and, for ARIA and
// Role trees, what their refs resolve to.
//
// A Tree is not modified once built. Filters return new Trees that may share
// nodes with their source, so callers must not change the nodes of a Tree
// that other code may be reading.
type Tree struct {
	Mode  Mode
	Roots []*Node
	// Omitted counts the nodes a builder left out because of its node limit
	// (FromAXTree); Limit is that limit. Render notes them on a last line.
	Omitted int
	Limit   int

	backends map[string]int64   // ref → BackendDOMNodeID
	roleRefs map[string]RoleRef // ref → getByRole arguments (Role trees)
}

// derive returns a tree like t with other roots; the ref maps are shared.
func (t *Tree) derive(roots []*Node) *Tree {
	c := *t
	c.Roots = roots
	return &c
}

// Backend returns the BackendDOMNodeID that ref (axN or rN) stands for, so a
// caller can resolve it with DOM.resolveNode.
func (t *Tree) Backend(ref string) (int64, bool) {
	id, ok := t.backends[ref]
	return id, ok
}

// RoleRef returns the getByRole arguments of a Role tree ref.
func (t *Tree) RoleRef(ref string) (RoleRef, bool) {
	r, ok := t.roleRefs[ref]
	return r, ok
}

// RoleRefs returns a copy of the ref → RoleRef map of a Role tree (empty for
// other trees).
func (t *Tree) RoleRefs() map[string]RoleRef {
	m := make(map[string]RoleRef, len(t.roleRefs))
	for k, v := range t.roleRefs {
		m[k] = v
	}
	return m
}

// Walk calls fn for every node in document order with its depth (0 for the
// roots). If fn returns false, the node's children are skipped.
func (t *Tree) Walk(fn func(n *Node, depth int) bool) {
	walk(t.Roots, 0, fn)
}

func walk(nodes []*Node, depth int, fn func(*Node, int) bool) {
	for _, n := range nodes {
		if fn(n, depth) {
			walk(n.Children, depth+1, fn)
		}
	}
}

// Find returns the first node whose ref is ref.
func (t *Tree) Find(ref string) (*Node, bool) {
	var found *Node
	if ref == "" {
		return nil, false
	}
	t.Walk(func(n *Node, _ int) bool {
		if found != nil {
			return false
		}
		if n.Ref == ref {
			found = n
			return false
		}
		return true
	})
	return found, found != nil
}

// RefKind says which snapshot mode a ref string belongs to.
type RefKind uint8

const (
	// RefNone is not a ref (a selector, say).
	RefNone RefKind = iota
	// RefAI is an AI snapshot ref: e12 or f1e3, resolved with aria-ref=.
	RefAI
	// RefARIA is an ARIA snapshot ref: ax12, resolved through Tree.Backend.
	RefARIA
	// RefRole is a Role snapshot ref: r12, resolved through RoleRef.
	RefRole
)

// ClassifyRef tells which kind of ref s is, by its shape alone.
func ClassifyRef(s string) RefKind {
	switch {
	case strings.HasPrefix(s, "ax") && allDigits(s[2:]):
		return RefARIA
	case strings.HasPrefix(s, "r") && allDigits(s[1:]):
		return RefRole
	}
	rest := s
	if strings.HasPrefix(rest, "f") {
		i := 1
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		if i == 1 {
			return RefNone
		}
		rest = rest[i:]
	}
	if strings.HasPrefix(rest, "e") && allDigits(rest[1:]) {
		return RefAI
	}
	return RefNone
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// RoleClass groups ARIA roles the way role snapshots treat them.
type RoleClass uint8

const (
	// ClassOther is every role not in the three classes (paragraph, img…).
	ClassOther RoleClass = iota
	// ClassInteractive roles always get a ref in Role mode.
	ClassInteractive
	// ClassContent roles get a ref in Role mode when they have a name.
	ClassContent
	// ClassStructural roles are dropped by Compact when unnamed.
	ClassStructural
)

var roleClasses = map[string]RoleClass{
	// INTERACTIVE
	"button": ClassInteractive, "link": ClassInteractive, "textbox": ClassInteractive,
	"checkbox": ClassInteractive, "radio": ClassInteractive, "combobox": ClassInteractive,
	"listbox": ClassInteractive, "menuitem": ClassInteractive, "option": ClassInteractive,
	"searchbox": ClassInteractive, "slider": ClassInteractive, "spinbutton": ClassInteractive,
	"switch": ClassInteractive, "tab": ClassInteractive, "treeitem": ClassInteractive,
	// CONTENT
	"heading": ClassContent, "cell": ClassContent, "gridcell": ClassContent,
	"columnheader": ClassContent, "rowheader": ClassContent, "listitem": ClassContent,
	"article": ClassContent, "region": ClassContent, "main": ClassContent,
	"navigation": ClassContent,
	// STRUCTURAL
	"generic": ClassStructural, "group": ClassStructural, "list": ClassStructural,
	"table": ClassStructural, "row": ClassStructural, "rowgroup": ClassStructural,
	"grid": ClassStructural, "treegrid": ClassStructural, "menu": ClassStructural,
	"menubar": ClassStructural, "toolbar": ClassStructural, "tablist": ClassStructural,
	"tree": ClassStructural, "directory": ClassStructural, "document": ClassStructural,
	"application": ClassStructural,
}

// ClassOf returns the class of an ARIA role (case-sensitive, lower case).
func ClassOf(role string) RoleClass {
	return roleClasses[role]
}
