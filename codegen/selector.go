package codegen

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// part is one ">>"-separated piece of a Playwright selector.
type part struct {
	name   string
	source string // the body as written
	nested *selector
}

type selector struct{ parts []part }

var (
	engineName   = regexp.MustCompile(`^[a-zA-Z_0-9-+:*]+$`)
	xpathStart   = regexp.MustCompile(`^\(*//`)
	nestedNames  = map[string]bool{"internal:has": true, "internal:has-not": true, "internal:and": true, "internal:or": true, "internal:chain": true, "left-of": true, "right-of": true, "above": true, "below": true, "near": true}
	textEqPrefix = regexp.MustCompile(`^\s*text\s*=(.*)$`)
)

// parseSelector splits a selector into parts as Playwright's
// selectorParser does (quotes protect ">>"; nested selectors are parsed).
func parseSelector(s string) (*selector, error) {
	raw, err := splitSelector(s)
	if err != nil {
		return nil, err
	}
	out := &selector{}
	for _, p := range raw {
		if p.name == "css:light" {
			p.name, p.source = "css", ":light("+p.source+")"
		}
		if nestedNames[p.name] {
			var arr []any
			if err := json.Unmarshal([]byte("["+p.source+"]"), &arr); err != nil || len(arr) < 1 || len(arr) > 2 {
				return nil, fmt.Errorf("malformed selector: %s=%s", p.name, p.source)
			}
			inner, ok := arr[0].(string)
			if !ok {
				return nil, fmt.Errorf("malformed selector: %s=%s", p.name, p.source)
			}
			n, err := parseSelector(inner)
			if err != nil {
				return nil, err
			}
			p.nested = n
		}
		out.parts = append(out.parts, p)
	}
	if len(out.parts) == 0 || nestedNames[out.parts[0].name] {
		return nil, errors.New("selector cannot start with a nested selector")
	}
	return out, nil
}

func splitSelector(s string) ([]part, error) {
	var parts []part
	appendPart := func(text string) error {
		text = strings.TrimSpace(text)
		var name, body string
		if i := strings.IndexByte(text, '='); i >= 0 && engineName.MatchString(strings.TrimSpace(text[:i])) {
			name, body = strings.TrimSpace(text[:i]), text[i+1:]
		} else if len(text) > 1 && ((text[0] == '"' && text[len(text)-1] == '"') || (text[0] == '\'' && text[len(text)-1] == '\'')) {
			name, body = "text", text
		} else if xpathStart.MatchString(text) || strings.HasPrefix(text, "..") {
			name, body = "xpath", text
		} else {
			name, body = "css", text
		}
		name = strings.TrimPrefix(name, "*") // capture marks do not change the locator
		if name == "" {
			return errors.New("empty selector part")
		}
		parts = append(parts, part{name: name, source: body})
		return nil
	}
	if !strings.Contains(s, ">>") {
		return parts, appendPart(s)
	}
	var quote byte
	start, i := 0, 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i += 2
		case quote != 0 && c == quote:
			quote = 0
			i++
		case quote == 0 && (c == '"' || c == '\'' || c == '`') && !ignoreTextQuote(s[start:i]):
			quote = c
			i++
		case quote == 0 && c == '>' && i+1 < len(s) && s[i+1] == '>':
			if err := appendPart(s[start:i]); err != nil {
				return nil, err
			}
			i += 2
			start = i
		default:
			i++
		}
	}
	return parts, appendPart(s[start:])
}

func ignoreTextQuote(prefix string) bool {
	m := textEqPrefix.FindStringSubmatch(prefix)
	return m != nil && m[1] != ""
}

// stringify prints one part back as a selector; css (and xpath starting
// with // or ..) goes without its engine name unless forced.
func (p part) stringify(force bool) string {
	include := true
	if !force {
		if p.name == "css" || (p.name == "xpath" && (strings.HasPrefix(p.source, "//") || strings.HasPrefix(p.source, ".."))) {
			include = false
		}
	}
	if include {
		return p.name + "=" + p.source
	}
	return p.source
}

// value is a string or a regular expression a locator matches.
type value struct {
	s     string
	re    bool
	flags string
}

// attr is one [name=value] of an attribute selector.
type attr struct {
	name          string
	str           *value // a quoted string or a regex
	bare          string // an unquoted value: true, false, a number or a word
	caseSensitive bool
}

// parseAttrSelector parses role[name="x"i][level=2] as Playwright does
// with unquoted strings allowed.
func parseAttrSelector(s string) (name string, attrs []attr, err error) {
	pos := 0
	eol := func() bool { return pos >= len(s) }
	next := func() byte {
		if eol() {
			return 0
		}
		return s[pos]
	}
	fail := func(stage string) error {
		if eol() {
			return fmt.Errorf("unexpected end of selector %q", s)
		}
		return fmt.Errorf("unexpected symbol %q at position %d of %q during %s", next(), pos, s, stage)
	}
	skip := func() {
		for !eol() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r' || s[pos] == '\f') {
			pos++
		}
	}
	isName := func(c byte) bool {
		return c >= 0x80 || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
	}
	ident := func() string {
		skip()
		st := pos
		for !eol() && isName(s[pos]) {
			pos++
		}
		return s[st:pos]
	}
	quoted := func(q byte) (string, error) {
		pos++
		var b strings.Builder
		for !eol() && s[pos] != q {
			if s[pos] == '\\' {
				pos++
				if eol() {
					break
				}
			}
			b.WriteByte(s[pos])
			pos++
		}
		if next() != q {
			return "", fail("parsing quoted string")
		}
		pos++
		return b.String(), nil
	}
	name = ident()
	skip()
	for next() == '[' {
		pos++
		skip()
		var key string
		if c := next(); c == '\'' || c == '"' {
			if key, err = quoted(c); err != nil {
				return
			}
		} else {
			key = ident()
		}
		if key == "" {
			return "", nil, fail("parsing property path")
		}
		skip()
		for next() == '.' {
			pos++
			k := ident()
			key += "." + k
			skip()
		}
		if next() == ']' {
			pos++
			attrs = append(attrs, attr{name: key, bare: "true"})
			skip()
			continue
		}
		if next() != '=' {
			return "", nil, fail("parsing operator")
		}
		pos++
		skip()
		a := attr{name: key, caseSensitive: true}
		switch c := next(); {
		case c == '/':
			pos++
			var src strings.Builder
			inClass := false
			for !eol() {
				ch := s[pos]
				if ch == '\\' {
					src.WriteByte(ch)
					pos++
					if eol() {
						return "", nil, fail("parsing regular expression")
					}
				} else if inClass && ch == ']' {
					inClass = false
				} else if !inClass && ch == '[' {
					inClass = true
				} else if !inClass && ch == '/' {
					break
				}
				src.WriteByte(s[pos])
				pos++
			}
			if next() != '/' {
				return "", nil, fail("parsing regular expression")
			}
			pos++
			st := pos
			for !eol() && strings.IndexByte("dgimsuvy", s[pos]) >= 0 {
				pos++
			}
			a.str = &value{s: src.String(), re: true, flags: s[st:pos]}
		case c == '\'' || c == '"':
			v, err := quoted(c)
			if err != nil {
				return "", nil, err
			}
			a.str = &value{s: v}
			skip()
			switch next() {
			case 'i', 'I':
				a.caseSensitive = false
				pos++
			case 's', 'S':
				pos++
			}
		default:
			st := pos
			for !eol() && (isName(s[pos]) || s[pos] == '+' || s[pos] == '.') {
				pos++
			}
			a.bare = s[st:pos]
		}
		skip()
		if next() != ']' {
			return "", nil, fail("parsing attribute value")
		}
		pos++
		attrs = append(attrs, a)
		skip()
	}
	if !eol() {
		return "", nil, fail("parsing selector")
	}
	if name == "" && len(attrs) == 0 {
		return "", nil, fmt.Errorf("selector %q is empty", s)
	}
	return name, attrs, nil
}

var regexBody = regexp.MustCompile(`^/(.*)/([dgimsuvy]*)$`)

// detectExact reads a text selector body: "x" and "x"s are exact, "x"i
// is not, /re/f is a regex, anything else is loose text.
func detectExact(body string) (value, bool) {
	if m := regexBody.FindStringSubmatch(body); m != nil {
		return value{s: m[1], re: true, flags: m[2]}, false
	}
	unq := func(q string) string {
		var out string
		if json.Unmarshal([]byte(q), &out) != nil {
			return q
		}
		return out
	}
	switch {
	case strings.HasSuffix(body, `"`):
		return value{s: unq(body)}, true
	case strings.HasSuffix(body, `"s`):
		return value{s: unq(body[:len(body)-1])}, true
	case strings.HasSuffix(body, `"i`):
		return value{s: unq(body[:len(body)-1])}, false
	}
	return value{s: body}, false
}

// bareValue is an unquoted attribute value as Playwright reads it: true and
// false are booleans, level is a number, other words stay strings.
func bareValue(name, v string) (lit string, isString bool) {
	if v == "true" || v == "false" {
		return v, false
	}
	if name == "level" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'f', -1, 64), false
		}
		return "NaN", false
	}
	return v, true
}
