package codegen

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// Object is a JavaScript object literal for FormatObject: keys print
// sorted; a key whose value is Omitted does not print (JavaScript's
// undefined), a nil value prints as null.
type Object map[string]any

// Omitted is the value of an Object key that is left out of the code.
var Omitted = omitted{}

type omitted struct{}

// FormatObject prints v as upstream's hand-written TypeScript lines do
// (formatObject in Playwright's string utilities): strings in single
// quotes, numbers as JavaScript prints them, objects with sorted keys (no
// "timeout"), one key a line indented by two spaces unless oneLine.
// Nested objects are always multi-line, as upstream's are.
func FormatObject(v any, oneLine bool) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		return Number(x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = FormatObject(s, false)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = FormatObject(e, false)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]string:
		o := Object{}
		for k, s := range x {
			o[k] = s
		}
		return FormatObject(o, oneLine)
	case Object:
		var keys []string
		for k, e := range x {
			if k != "timeout" && e != Omitted {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return "{}"
		}
		sort.Strings(keys)
		tokens := make([]string, len(keys))
		for i, k := range keys {
			tokens[i] = k + ": " + FormatObject(x[k], false)
		}
		if oneLine {
			return "{ " + strings.Join(tokens, ", ") + " }"
		}
		return "{\n  " + strings.Join(tokens, ",\n  ") + "\n}"
	}
	return ""
}

// FormatOptions is FormatObject for an optional last argument: empty when
// the object prints as {}.
func FormatOptions(o Object) string {
	if s := FormatObject(o, false); s != "{}" {
		return s
	}
	return ""
}

// Number prints f as JavaScript's String(number) does.
func Number(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		// Exponent form: shortest digits, "e+21" / "e-7" without padding.
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// JSON prints v as JavaScript's JSON.stringify does without indentation:
// strings, numbers, booleans, nil and []string (objects: Fields).
func JSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return jsonQuote(literal(x))
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "null"
		}
		return Number(x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = JSON(s)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return "null"
}

// Fields is a JSON object whose keys print in order (JSON.stringify keeps
// insertion order); a field whose value is Omitted is left out.
type Fields []Field

// Field is one key of Fields.
type Field struct {
	Key   string
	Value any
}

// JSON prints the object as JSON.stringify does.
func (f Fields) JSON() string {
	var parts []string
	for _, kv := range f {
		if kv.Value == Omitted {
			continue
		}
		parts = append(parts, jsonQuote(kv.Key)+":"+JSON(kv.Value))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// jsonQuote quotes s as JSON.stringify does: unlike encoding/json it
// leaves <, >, &, U+2028 and U+2029 as they are.
func jsonQuote(s string) string { return escapeWithQuotes(s, '"') }

// quoteMultiline is the TypeScript generator's template literal for a
// multi-line text (an ARIA snapshot): one line of text in backticks, or
// the lines indented on their own between a backtick line and an indented
// closing backtick.
func quoteMultiline(text, indent string) string {
	esc := func(s string) string {
		s = strings.ReplaceAll(s, `\`, `\\`)
		s = strings.ReplaceAll(s, "`", "\\`")
		return strings.ReplaceAll(s, "${", `\${`)
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		return "`" + esc(text) + "`"
	}
	for i, l := range lines {
		lines[i] = indent + esc(l)
	}
	return "`\n" + strings.Join(lines, "\n") + "\n" + indent + "`"
}

// IsFunction reports whether a JavaScript expression, as browser_evaluate
// takes it, is a function (which Playwright calls) rather than a value:
// an arrow function, a function expression, or one of them in
// parentheses. It reads the text only; nothing runs.
func IsFunction(expr string) bool {
	s := strings.TrimSpace(expr)
	for strings.HasPrefix(s, "(") {
		end := matchingParen(s)
		if end < 0 {
			return false
		}
		rest := strings.TrimSpace(s[end+1:])
		if strings.HasPrefix(rest, "=>") {
			return true
		}
		if rest != "" {
			return false
		}
		s = strings.TrimSpace(s[1:end]) // (expr): look inside
	}
	if after, ok := strings.CutPrefix(s, "async"); ok && after != "" && !isIdentChar(after[0]) {
		s = strings.TrimSpace(after)
		if strings.HasPrefix(s, "(") {
			end := matchingParen(s)
			return end >= 0 && strings.HasPrefix(strings.TrimSpace(s[end+1:]), "=>")
		}
	}
	if after, ok := strings.CutPrefix(s, "function"); ok && (after == "" || !isIdentChar(after[0])) {
		return true
	}
	// x => …
	i := 0
	for i < len(s) && isIdentChar(s[i]) {
		i++
	}
	return i > 0 && (s[0] < '0' || s[0] > '9') && strings.HasPrefix(strings.TrimSpace(s[i:]), "=>")
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// matchingParen is the index of the parenthesis closing s[0], skipping
// strings, template literals and comments; -1 if there is none.
func matchingParen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				if c != ')' {
					return -1
				}
				return i
			}
		case '\'', '"', '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(s) && s[i+1] == '/' {
				for i < len(s) && s[i] != '\n' {
					i++
				}
			} else if i+1 < len(s) && s[i+1] == '*' {
				end := strings.Index(s[i+2:], "*/")
				if end < 0 {
					return -1
				}
				i += end + 3
			}
		}
	}
	return -1
}

// ListSnapshot is the ARIA snapshot upstream's browser_verify_list_visible
// asserts: a list of the items' texts.
func ListSnapshot(items []string) string {
	lines := []string{"- list:"}
	for _, it := range items {
		lines = append(lines, "  - listitem: "+escapeWithQuotes(literal(it), '"'))
	}
	return strings.Join(lines, "\n")
}
