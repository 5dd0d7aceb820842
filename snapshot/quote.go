package snapshot

import (
	"strings"
	"unicode/utf8"
)

// This file reproduces the quoting of Playwright 1.64's snapshot YAML
// (yamlEscapeKeyIfNeeded, yamlEscapeValueIfNeeded and JSON.stringify for
// names) and undoes it.
// Strings are treated as sequences of runes; invalid UTF-8 bytes pass
// through untouched so that rendering a parsed snapshot gives it back.

// isJSSpace reports whether r is matched by JavaScript's \s.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// yamlNeedsQuotes mirrors yamlStringNeedsQuotes.
func yamlNeedsQuotes(s string) bool {
	if s == "" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if isJSSpace(first) || isJSSpace(last) {
		return true
	}
	switch s[0] {
	case '-', '&', '*', ']', ',', '?', '!', '>', '|', '@', '"', '\'', '#', '%', '[':
		return true
	}
	prevSpace := false
	for i, r := range s {
		switch {
		case r <= 0x08 || r == 0x0b || r == 0x0c || (r >= 0x0e && r <= 0x1f) || (r >= 0x7f && r <= 0x9f):
			return true
		case r == '\n' || r == '\r' || r == '{' || r == '}' || r == '`':
			return true
		case r == ':':
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if i+1 == len(s) || isJSSpace(next) {
				return true
			}
		case r == '#' && prevSpace:
			return true
		}
		prevSpace = isJSSpace(r)
	}
	// Leading white space and '-' were handled above, so only these can
	// start a number.
	if c := s[0]; (isDigit(c) || c == '.' || c == '+' || c == 'I') && jsIsNumber(s) {
		return true
	}
	if len(s) <= 5 {
		for _, w := range yamlWords {
			if strings.EqualFold(s, w) {
				return true
			}
		}
	}
	return false
}

// yamlWords are the scalars YAML reads as booleans or null.
var yamlWords = [...]string{"y", "n", "yes", "no", "true", "false", "on", "off", "null"}

// jsIsNumber reports whether JavaScript's Number(s) is not NaN.
func jsIsNumber(s string) bool {
	s = strings.TrimFunc(s, isJSSpace)
	if s == "" {
		return true
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			for i := 2; i < len(s); i++ {
				if digitValue(s[i]) >= base {
					return false
				}
			}
			return true
		}
	}
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	if s == "Infinity" {
		return true
	}
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

const hexDigits = "0123456789abcdef"

// appendValue appends s as yamlEscapeValueIfNeeded renders it.
func appendValue(dst []byte, s string) []byte {
	if !yamlNeedsQuotes(s) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[i])
			i++
			continue
		}
		switch {
		case r == '\\':
			dst = append(dst, `\\`...)
		case r == '"':
			dst = append(dst, `\"`...)
		case r == '\b':
			dst = append(dst, `\b`...)
		case r == '\f':
			dst = append(dst, `\f`...)
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r <= 0x1f || (r >= 0x7f && r <= 0x9f):
			dst = append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// decodeValue undoes appendValue. A value that is not one well-formed
// double-quoted string is returned as it is (a plain scalar).
func decodeValue(v string) string {
	if len(v) < 2 || v[0] != '"' {
		return v
	}
	s, n, ok := scanQuoted(v, yamlEscapes)
	if !ok || n != len(v) {
		return v
	}
	return s
}

// appendKey appends key as yamlEscapeKeyIfNeeded renders it.
func appendKey(dst []byte, key []byte) []byte {
	if !yamlNeedsQuotes(string(key)) {
		return append(dst, key...)
	}
	dst = append(dst, '\'')
	for _, c := range key {
		if c == '\'' {
			dst = append(dst, '\'', '\'')
		} else {
			dst = append(dst, c)
		}
	}
	return append(dst, '\'')
}

// appendJSONString appends s as JavaScript's JSON.stringify renders it.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			dst = append(dst, `\"`...)
		case c == '\\':
			dst = append(dst, `\\`...)
		case c == '\b':
			dst = append(dst, `\b`...)
		case c == '\f':
			dst = append(dst, `\f`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

type escapeSet uint8

const (
	jsonEscapes escapeSet = iota // \" \\ \/ \b \f \n \r \t \uXXXX
	yamlEscapes                  // the above plus \xXX and \0
)

// scanQuoted decodes the double-quoted string at the start of s and returns
// it with the number of bytes it took. ok is false if s does not start with
// a well-formed quoted string.
func scanQuoted(s string, set escapeSet) (out string, n int, ok bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	// Fast path: no escapes.
	for i := 1; i < len(s); i++ {
		if s[i] == '"' {
			return s[1:i], i + 1, true
		}
		if s[i] == '\\' {
			break
		}
	}
	var b []byte
	for i := 1; i < len(s); {
		c := s[i]
		switch c {
		case '"':
			return string(b), i + 1, true
		case '\\':
			if i+1 >= len(s) {
				return "", 0, false
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case '0':
				if set != yamlEscapes {
					return "", 0, false
				}
				b = append(b, 0)
			case 'x':
				if set != yamlEscapes || i+2 > len(s) {
					return "", 0, false
				}
				v, ok := hexValue(s[i : i+2])
				if !ok {
					return "", 0, false
				}
				b = utf8.AppendRune(b, rune(v))
				i += 2
			case 'u':
				if i+4 > len(s) {
					return "", 0, false
				}
				v, ok := hexValue(s[i : i+4])
				if !ok {
					return "", 0, false
				}
				i += 4
				r := rune(v)
				if r >= 0xd800 && r < 0xdc00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if lo, ok := hexValue(s[i+2 : i+6]); ok && lo >= 0xdc00 && lo < 0xe000 {
						r = 0x10000 + (r-0xd800)<<10 + rune(lo-0xdc00)
						i += 6
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", 0, false
			}
		default:
			b = append(b, c)
			i++
		}
	}
	return "", 0, false
}

func hexValue(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		d := digitValue(s[i])
		if d >= 16 {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}
