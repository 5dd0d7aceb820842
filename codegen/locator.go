package codegen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Language is a --codegen language.
type Language string

// The languages upstream prints code in; None prints nothing.
const (
	TypeScript Language = "typescript"
	Python     Language = "python"
	Java       Language = "java"
	CSharp     Language = "csharp"
	None       Language = "none"
)

// languages lists the accepted --codegen values.
var languages = []Language{TypeScript, Python, Java, CSharp, None}

// Languages returns a copy of the accepted --codegen values.
func Languages() []Language { return slices.Clone(languages) }

// ParseLanguage checks a --codegen value; empty means TypeScript.
func ParseLanguage(s string) (Language, error) {
	if s == "" {
		return TypeScript, nil
	}
	for _, l := range languages {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown codegen language %q: use typescript, python, java, csharp or none", trim(s))
}

func trim(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// Fence is the language tag of the section's code fence.
func (l Language) Fence() string {
	if l == TypeScript {
		return "js"
	}
	return string(l)
}

// AsLocator turns a Playwright selector into the locator expression of
// lang (without the leading page.), e.g. getByRole('button', { name: 'Save' }).
// A selector it cannot parse comes back unchanged, as in Playwright.
func AsLocator(lang Language, sel string) string {
	p, err := parseSelector(sel)
	if err != nil {
		return sel
	}
	out, err := asLocator(lang, p, false)
	if err != nil {
		return sel
	}
	return out
}

// asLocator is Playwright's innerAsLocators keeping only the first (the
// preferred) spelling of each part.
func asLocator(lang Language, s *selector, frameLocator bool) (string, error) {
	g := gen{lang: lang}
	var tokens []string
	nextBase := "page"
	if frameLocator {
		nextBase = "frame-locator"
	}
	parts := s.parts
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		base := nextBase
		nextBase = "locator"
		switch p.name {
		case "internal:describe":
			continue
		case "nth":
			switch p.source {
			case "0":
				tokens = append(tokens, g.simple("first", ""))
			case "-1":
				tokens = append(tokens, g.simple("last", ""))
			default:
				tokens = append(tokens, g.simple("nth", p.source))
			}
			continue
		case "visible":
			if p.source == "true" {
				tokens = append(tokens, g.simple("visible", ""))
			} else {
				tokens = append(tokens, g.filterVisible(base, p.source))
			}
			continue
		case "internal:text", "internal:label":
			v, exact := detectExact(p.source)
			kind := map[string]string{"internal:text": "text", "internal:label": "label"}[p.name]
			tokens = append(tokens, g.byText(base, kind, v, exact))
			continue
		case "internal:has-text", "internal:has-not-text":
			if v, exact := detectExact(p.source); !exact {
				tokens = append(tokens, g.hasText(base, p.name == "internal:has-not-text", v))
				continue
			}
		case "internal:has", "internal:has-not", "internal:and", "internal:or", "internal:chain":
			inner, err := asLocator(lang, p.nested, false)
			if err != nil {
				return "", err
			}
			tokens = append(tokens, g.wrap(base, p.name, inner))
			continue
		case "internal:role":
			tok, err := g.role(base, p.source)
			if err != nil {
				return "", err
			}
			tokens = append(tokens, tok)
			continue
		case "internal:testid":
			_, attrs, err := parseAttrSelector(p.source)
			if err != nil || len(attrs) == 0 {
				return "", fmt.Errorf("bad testid selector %q", p.source)
			}
			v := value{s: attrs[0].bare}
			if attrs[0].str != nil {
				v = *attrs[0].str
			}
			tokens = append(tokens, g.testID(v))
			continue
		case "internal:attr":
			_, attrs, err := parseAttrSelector(p.source)
			if err != nil || len(attrs) == 0 {
				return "", fmt.Errorf("bad attr selector %q", p.source)
			}
			a := attrs[0]
			if a.name == "placeholder" || a.name == "alt" || a.name == "title" {
				v := value{s: a.bare}
				if a.str != nil {
					v = *a.str
				}
				tokens = append(tokens, g.byText(base, a.name, v, a.caseSensitive))
				continue
			}
		case "internal:control":
			if p.source == "any-frame" {
				tokens = append(tokens, g.simple("any-frame", ""))
				nextBase = "frame-locator"
				continue
			}
			if p.source == "enter-frame" {
				if len(tokens) == 0 {
					return "", fmt.Errorf("selector cannot start with entering a frame")
				}
				tokens[len(tokens)-1] += "." + g.simple("frame", "")
				nextBase = "frame-locator"
				continue
			}
		}
		text := p.stringify(false)
		if i+1 < len(parts) && (parts[i+1].name == "internal:has-text" || parts[i+1].name == "internal:has-not-text") {
			if v, exact := detectExact(parts[i+1].source); !exact {
				tokens = append(tokens, g.locator(base, text)+"."+g.hasText("locator", parts[i+1].name == "internal:has-not-text", v))
				i++
				continue
			}
		}
		tokens = append(tokens, g.locator(base, text))
	}
	return strings.Join(tokens, "."), nil
}

// gen prints locator parts in one language (Playwright's *LocatorFactory).
type gen struct{ lang Language }

func (g gen) quote(s string) string {
	if g.lang == TypeScript {
		return escapeWithQuotes(literal(s), '\'')
	}
	return escapeWithQuotes(literal(s), '"')
}

// class is the Java options class for a base.
func class(base string) string {
	switch base {
	case "page":
		return "Page"
	case "frame-locator":
		return "FrameLocator"
	}
	return "Locator"
}

func (g gen) simple(kind, body string) string {
	type names struct{ ts, py, java, cs string }
	n := map[string]names{
		"first":     {"first()", "first", "first()", "First"},
		"last":      {"last()", "last", "last()", "Last"},
		"visible":   {"visible()", "visible", "visible()", "Visible"},
		"frame":     {"contentFrame()", "content_frame", "contentFrame()", "ContentFrame"},
		"any-frame": {"frameLocator()", "frame_locator()", "frameLocator()", "FrameLocator()"},
		"nth":       {"nth(" + body + ")", "nth(" + body + ")", "nth(" + body + ")", "Nth(" + body + ")"},
	}[kind]
	return g.pick(n.ts, n.py, n.java, n.cs)
}

func (g gen) pick(ts, py, java, cs string) string {
	switch g.lang {
	case Python:
		return py
	case Java:
		return java
	case CSharp:
		return cs
	}
	return ts
}

func (g gen) filterVisible(base, body string) string {
	b := "false"
	if body == "true" {
		b = "true"
	}
	py := "False"
	if b == "true" {
		py = "True"
	}
	return g.pick("filter({ visible: "+b+" })", "filter(visible="+py+")",
		"filter(new "+class(base)+".FilterOptions().setVisible("+b+"))", "Filter(new() { Visible = "+b+" })")
}

func (g gen) locator(base, sel string) string {
	q := g.quote(sel)
	return g.pick("locator("+q+")", "locator("+q+")", "locator("+q+")", "Locator("+q+")")
}

func (g gen) hasText(base string, not bool, v value) string {
	t := g.text(v)
	if not {
		cs := "HasNotText = " + t
		if v.re {
			cs = "HasNotTextRegex = " + t
		}
		return g.pick("filter({ hasNotText: "+t+" })", "filter(has_not_text="+t+")",
			"filter(new "+class(base)+".FilterOptions().setHasNotText("+t+"))", "Filter(new() { "+cs+" })")
	}
	cs := "HasText = " + t
	if v.re {
		cs = "HasTextRegex = " + t
	}
	return g.pick("filter({ hasText: "+t+" })", "filter(has_text="+t+")",
		"filter(new "+class(base)+".FilterOptions().setHasText("+t+"))", "Filter(new() { "+cs+" })")
}

func (g gen) wrap(base, name, inner string) string {
	switch name {
	case "internal:has":
		return g.pick("filter({ has: "+inner+" })", "filter(has="+inner+")", "filter(new "+class(base)+".FilterOptions().setHas("+inner+"))", "Filter(new() { Has = "+inner+" })")
	case "internal:has-not":
		return g.pick("filter({ hasNot: "+inner+" })", "filter(has_not="+inner+")", "filter(new "+class(base)+".FilterOptions().setHasNot("+inner+"))", "Filter(new() { HasNot = "+inner+" })")
	case "internal:and":
		return g.pick("and("+inner+")", "and_("+inner+")", "and("+inner+")", "And("+inner+")")
	case "internal:or":
		return g.pick("or("+inner+")", "or_("+inner+")", "or("+inner+")", "Or("+inner+")")
	}
	return g.pick("locator("+inner+")", "locator("+inner+")", "locator("+inner+")", "Locator("+inner+")")
}

func (g gen) testID(v value) string {
	t := g.text(v)
	return g.pick("getByTestId("+t+")", "get_by_test_id("+t+")", "getByTestId("+t+")", "GetByTestId("+t+")")
}

// byText prints getByText/getByLabel/getByPlaceholder/getByAltText/getByTitle.
func (g gen) byText(base, kind string, v value, exact bool) string {
	m := map[string]string{"text": "Text", "label": "Label", "placeholder": "Placeholder", "alt": "AltText", "title": "Title"}[kind]
	t := g.text(v)
	switch g.lang {
	case Python:
		name := "get_by_" + toSnakeCase(m)
		if exact && !v.re {
			return name + "(" + t + ", exact=True)"
		}
		return name + "(" + t + ")"
	case Java:
		if exact && !v.re {
			return "getBy" + m + "(" + t + ", new " + class(base) + ".GetBy" + m + "Options().setExact(true))"
		}
		return "getBy" + m + "(" + t + ")"
	case CSharp:
		if exact && !v.re {
			return "GetBy" + m + "(" + t + ", new() { Exact = true })"
		}
		return "GetBy" + m + "(" + t + ")"
	}
	if exact && !v.re {
		return "getBy" + m + "(" + t + ", { exact: true })"
	}
	return "getBy" + m + "(" + t + ")"
}

// text prints a string or a regex value.
func (g gen) text(v value) string {
	if !v.re {
		return g.quote(v.s)
	}
	src := normalizeEscapedRegexQuotes(v.s)
	suffix := func(enum string, names map[byte]string) string {
		var fl []string
		for i := 0; i < len(v.flags); i++ {
			if n, ok := names[v.flags[i]]; ok {
				fl = append(fl, enum+"."+n)
			}
		}
		if len(fl) == 0 {
			return ""
		}
		return ", " + strings.Join(fl, " | ")
	}
	switch g.lang {
	case Python:
		s := strings.Replace(src, `\/`, "/", 1)
		s = strings.ReplaceAll(s, `"`, `\"`)
		return `re.compile(r"` + s + `"` + suffix("re", map[byte]string{'i': "IGNORECASE", 'm': "MULTILINE", 's': "DOTALL"}) + ")"
	case Java:
		return "Pattern.compile(" + g.quote(src) + suffix("Pattern", map[byte]string{'i': "CASE_INSENSITIVE", 'm': "MULTILINE", 's': "DOTALL"}) + ")"
	case CSharp:
		return "new Regex(" + g.quote(src) + suffix("RegexOptions", map[byte]string{'i': "IgnoreCase", 'm': "Multiline", 's': "Singleline"}) + ")"
	}
	return normalizeEscapedRegexQuotes("/" + v.s + "/" + v.flags)
}

func (g gen) role(base, body string) (string, error) {
	role, attrs, err := parseAttrSelector(body)
	if err != nil {
		return "", err
	}
	var name, desc *value
	var exact *bool
	type opt struct {
		name, lit string
		isString  bool
	}
	var opts []opt
	for _, a := range attrs {
		if a.name == "name" || a.name == "description" {
			v := a.str
			if v == nil {
				v = &value{s: a.bare} // an unquoted name is a string too
			}
			if !v.re && a.str != nil {
				if exact != nil && *exact != a.caseSensitive {
					return "", fmt.Errorf("conflicting exactness in %q", body)
				}
				cs := a.caseSensitive
				exact = &cs
			}
			if a.name == "name" {
				name = v
			} else {
				desc = v
			}
			continue
		}
		n := a.name
		if n == "include-hidden" {
			n = "includeHidden"
		}
		if a.str != nil {
			opts = append(opts, opt{n, a.str.s, true})
			continue
		}
		lit, isStr := bareValue(a.name, a.bare)
		opts = append(opts, opt{n, lit, isStr})
	}
	isExact := exact != nil && *exact && ((name != nil && !name.re) || (desc != nil && !desc.re))
	var list []string
	add := func(s string) { list = append(list, s) }
	switch g.lang {
	case Python:
		if name != nil {
			add("name=" + g.text(*name))
		}
		if desc != nil {
			add("description=" + g.text(*desc))
		}
		if isExact {
			add("exact=True")
		}
		for _, o := range opts {
			v := o.lit
			if o.isString {
				v = g.quote(o.lit)
			} else if v == "true" {
				v = "True"
			} else if v == "false" {
				v = "False"
			}
			add(toSnakeCase(o.name) + "=" + v)
		}
		s := ""
		if len(list) > 0 {
			s = ", " + strings.Join(list, ", ")
		}
		return "get_by_role(" + g.quote(role) + s + ")", nil
	case Java:
		if name != nil {
			add(".setName(" + g.text(*name) + ")")
		}
		if desc != nil {
			add(".setDescription(" + g.text(*desc) + ")")
		}
		if isExact {
			add(".setExact(true)")
		}
		for _, o := range opts {
			v := o.lit
			if o.isString {
				v = g.quote(o.lit)
			}
			add(".set" + toTitleCase(o.name) + "(" + v + ")")
		}
		s := ""
		if len(list) > 0 {
			s = ", new " + class(base) + ".GetByRoleOptions()" + strings.Join(list, "")
		}
		return "getByRole(AriaRole." + strings.ToUpper(toSnakeCase(role)) + s + ")", nil
	case CSharp:
		if name != nil {
			if name.re {
				add("NameRegex = " + g.text(*name))
			} else {
				add("Name = " + g.text(*name))
			}
		}
		if desc != nil {
			if desc.re {
				add("DescriptionRegex = " + g.text(*desc))
			} else {
				add("Description = " + g.text(*desc))
			}
		}
		if isExact {
			add("Exact = true")
		}
		for _, o := range opts {
			v := o.lit
			if o.isString {
				v = g.quote(o.lit)
			}
			add(toTitleCase(o.name) + " = " + v)
		}
		s := ""
		if len(list) > 0 {
			s = ", new() { " + strings.Join(list, ", ") + " }"
		}
		return "GetByRole(AriaRole." + toTitleCase(role) + s + ")", nil
	}
	if name != nil {
		add("name: " + g.text(*name))
	}
	if desc != nil {
		add("description: " + g.text(*desc))
	}
	if isExact {
		add("exact: true")
	}
	for _, o := range opts {
		v := o.lit
		if o.isString {
			v = g.quote(o.lit)
		}
		add(o.name + ": " + v)
	}
	s := ""
	if len(list) > 0 {
		s = ", { " + strings.Join(list, ", ") + " }"
	}
	return "getByRole(" + g.quote(role) + s + ")", nil
}

// escapeWithQuotes is Playwright's: JSON.stringify's escapes, then the
// quote character escaped.
func escapeWithQuotes(s string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
				continue
			}
			if r == rune(q) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

var (
	snake1 = regexp.MustCompile(`([a-z0-9])([A-Z])`)
	snake2 = regexp.MustCompile(`([A-Z])([A-Z][a-z])`)
	// escapedQuote matches a backslash-escaped quote not itself escaped.
	escapedQuote = regexp.MustCompile(`(^|[^\\])((?:\\\\)*)\\(['"` + "`" + `])`)
)

func toSnakeCase(s string) string {
	s = snake1.ReplaceAllString(s, "${1}_${2}")
	return strings.ToLower(snake2.ReplaceAllString(s, "${1}_${2}"))
}

func toTitleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func normalizeEscapedRegexQuotes(s string) string {
	return escapedQuote.ReplaceAllString(s, "${1}${2}${3}")
}
