package tools

import "strings"

// Args are a tool call's arguments after validation against the schema, so
// the getters only convert.
type Args struct {
	m       map[string]any
	aliases map[string]string
}

func (a Args) raw(key string) (any, bool) {
	if v, ok := a.m[key]; ok {
		return v, true
	}
	for alias, target := range a.aliases {
		if target == key {
			if v, ok := a.m[alias]; ok {
				return v, true
			}
		}
	}
	return nil, false
}

// Has reports whether key (or an alias of it) was given and is not null.
func (a Args) Has(key string) bool {
	v, ok := a.raw(key)
	return ok && v != nil
}

// String returns a string argument or def.
func (a Args) String(key, def string) string {
	if v, ok := a.raw(key); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return def
}

// Bool returns a boolean argument or def.
func (a Args) Bool(key string, def bool) bool {
	if v, ok := a.raw(key); ok {
		if b, ok := v.(bool); ok {
			return b
		}
	}
	return def
}

// Number returns a numeric argument or def.
func (a Args) Number(key string, def float64) float64 {
	if v, ok := a.raw(key); ok {
		if f, ok := v.(float64); ok {
			return f
		}
	}
	return def
}

// Strings returns a string-array argument.
func (a Args) Strings(key string) []string {
	v, _ := a.raw(key)
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Objects returns an array-of-objects argument.
func (a Args) Objects(key string) []map[string]any {
	v, _ := a.raw(key)
	arr, _ := v.([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, x := range arr {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Raw returns the argument as decoded JSON.
func (a Args) Raw(key string) any {
	v, _ := a.raw(key)
	return v
}

// regexpCause is a regexp.Compile error without the pattern Go quotes again
// after the reason ("missing closing ): `(AAAA…`"): the caller quotes the
// pattern once, clipped.
func regexpCause(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": `"); i > 0 {
		msg = msg[:i]
	}
	return msg
}
