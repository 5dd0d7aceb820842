package snapshot

import (
	"errors"
	"fmt"
	"strings"
)

// MaxParseBytes is the largest text Parse accepts (64 MiB).
const MaxParseBytes = 64 << 20

// ErrTooLarge is returned by Parse for text longer than MaxParseBytes.
var ErrTooLarge = errors.New("snapshot: text too large")

// maxNesting bounds the depth of a parsed tree so that the recursive walks
// over it stay shallow whatever the input. Deeper lines are kept as opaque
// lines at this depth (their extra indentation in Raw).
const maxNesting = 512

// Parse reads the text of Playwright's AI snapshot (page.ariaSnapshot with
// mode "ai"). It never fails on syntax: a line it does not understand
// becomes a KindOpaque node, and a line it understands but would render
// differently keeps its text in Raw, so Render(Parse(s)) == s for any s.
// The only error is ErrTooLarge.
func Parse(text string) (*Tree, error) {
	if len(text) > MaxParseBytes {
		return nil, fmt.Errorf("parse snapshot of %d bytes: %w", len(text), ErrTooLarge)
	}
	p := parser{tree: &Tree{Mode: ModeAI}}
	if text == "" {
		return p.tree, nil
	}
	p.stack = make([]frame, 0, 32)
	for start := 0; ; {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			p.line(text[start:])
			break
		}
		p.line(text[start : start+end])
		start += end + 1
	}
	for _, c := range p.checks {
		if c.n.Raw == "" && string(appendLine(nil, c.n, lineOpts{})) != c.src {
			c.n.Raw = c.src
		}
	}
	return p.tree, nil
}

type frame struct {
	n            *Node
	level, depth int
}

type check struct {
	n   *Node
	src string
}

type parser struct {
	tree   *Tree
	stack  []frame
	checks []check
}

func (p *parser) line(line string) {
	spaces := 0
	for spaces < len(line) && line[spaces] == ' ' {
		spaces++
	}
	level := spaces / 2
	for len(p.stack) > 0 && p.stack[len(p.stack)-1].level >= level {
		p.stack = p.stack[:len(p.stack)-1]
	}
	var parent *Node
	depth := 0
	if len(p.stack) > 0 {
		top := p.stack[len(p.stack)-1]
		parent, depth = top.n, top.depth+1
	}
	// depth <= level always holds, so the cut only removes spaces; any
	// indentation beyond 2*depth stays in the content and makes it opaque.
	content := line[2*depth:]

	n, prop, isProp := parseItem(content)
	if isProp {
		canonical := string(appendProp(nil, prop)) == content
		if canonical && parent != nil && parent.Kind == KindElement && len(parent.Children) == 0 {
			parent.Props = append(parent.Props, prop)
			return
		}
		n = &Node{Kind: KindOpaque, Raw: content}
	}
	if n.Kind != KindOpaque {
		p.checks = append(p.checks, check{n, content})
	}
	if parent == nil {
		p.tree.Roots = append(p.tree.Roots, n)
	} else {
		parent.Children = append(parent.Children, n)
	}
	if depth < maxNesting && content != "" {
		p.stack = append(p.stack, frame{n: n, level: level, depth: depth})
	}
}

// parseItem parses one line without its indentation. A property line
// (`- /url: x`) is returned as a Prop with isProp set.
func parseItem(s string) (n *Node, prop Prop, isProp bool) {
	opaque := &Node{Kind: KindOpaque, Raw: s}
	if !strings.HasPrefix(s, "- ") {
		return opaque, Prop{}, false
	}
	key, quoted, value, hasValue, ok := splitItem(s[2:])
	if !ok {
		return opaque, Prop{}, false
	}
	if !quoted && hasValue {
		if key == "text" {
			return &Node{Kind: KindText, Text: decodeValue(value)}, Prop{}, false
		}
		if len(key) > 1 && key[0] == '/' && !strings.ContainsAny(key, " [") {
			return nil, Prop{Name: key[1:], Value: decodeValue(value)}, true
		}
	}
	n = &Node{Kind: KindElement}
	if !parseElementKey(key, n) {
		return opaque, Prop{}, false
	}
	if hasValue {
		n.Text = decodeValue(value)
	}
	return n, Prop{}, false
}

// splitItem splits `key`, `key:` or `key: value`, where key may be a
// single-quoted YAML scalar.
func splitItem(s string) (key string, quoted bool, value string, hasValue, ok bool) {
	rest := ""
	if strings.HasPrefix(s, "'") {
		var b strings.Builder
		i := 1
		for {
			j := strings.IndexByte(s[i:], '\'')
			if j < 0 {
				return "", false, "", false, false
			}
			b.WriteString(s[i : i+j])
			i += j + 1
			if i < len(s) && s[i] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			break
		}
		key, quoted, rest = b.String(), true, s[i:]
	} else {
		i := 0
		for {
			j := strings.IndexByte(s[i:], ':')
			if j < 0 {
				return s, false, "", false, s != ""
			}
			i += j
			if i+1 == len(s) || s[i+1] == ' ' {
				break
			}
			i++
		}
		key, rest = s[:i], s[i:]
	}
	switch {
	case rest == "" || rest == ":":
		return key, quoted, "", false, key != ""
	case strings.HasPrefix(rest, ": "):
		return key, quoted, rest[2:], true, key != ""
	}
	return "", false, "", false, false
}

// parseElementKey parses `role "name" [attr] [ref=e1] [attr=v]` into n.
func parseElementKey(key string, n *Node) bool {
	i := 0
	for i < len(key) && isRoleByte(key[i], i) {
		i++
	}
	if i == 0 {
		return false
	}
	n.Role = key[:i]
	rest := key[i:]
	if rest == "" {
		return true
	}
	if rest[0] != ' ' || len(rest) < 2 {
		return false
	}
	switch rest[1] {
	case '"':
		name, used, ok := scanQuoted(rest[1:], jsonEscapes)
		if !ok {
			return false
		}
		n.Name = name
		rest = rest[1+used:]
	case '/':
		// A regular expression /…/: it ends at the first '/' after which
		// only attributes follow.
		body := rest[2:]
		found := false
		for p := 0; p < len(body); {
			j := strings.IndexByte(body[p:], '/')
			if j < 0 {
				break
			}
			p += j
			if validAttrs(body[p+1:]) {
				n.Name, n.Regex = body[:p], true
				rest = body[p+1:]
				found = true
				break
			}
			p++
		}
		if !found {
			return false
		}
	}
	return parseAttrs(rest, n)
}

func isRoleByte(c byte, i int) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case i > 0 && (isDigit(c) || c == '_' || c == '-'):
		return true
	}
	return false
}

// nextAttr reads ` [key]` or ` [key=value]` at the start of s.
func nextAttr(s string) (a Attr, used int, ok bool) {
	if len(s) < 4 || s[0] != ' ' || s[1] != '[' {
		return Attr{}, 0, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return Attr{}, 0, false
	}
	body := s[2:end]
	k, v, hasEq := strings.Cut(body, "=")
	if k == "" || (hasEq && v == "") || strings.IndexByte(body, '[') >= 0 {
		return Attr{}, 0, false
	}
	for i := 0; i < len(k); i++ {
		if !isRoleByte(k[i], i) {
			return Attr{}, 0, false
		}
	}
	return Attr{Key: k, Value: v}, end + 1, true
}

func validAttrs(s string) bool {
	for s != "" {
		_, used, ok := nextAttr(s)
		if !ok {
			return false
		}
		s = s[used:]
	}
	return true
}

func parseAttrs(s string, n *Node) bool {
	for s != "" {
		a, used, ok := nextAttr(s)
		if !ok {
			return false
		}
		s = s[used:]
		if a.Key == "ref" && n.Ref == "" {
			n.Ref = a.Value
			continue
		}
		n.Attrs = append(n.Attrs, a)
	}
	return true
}
