package snapshot

import (
	"testing"
	"unicode/utf8"
)

func TestYAMLNeedsQuotes(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", true},
		{"plain text", false},
		{" leading", true},
		{"trailing ", true},
		{"nbsp\u00a0", true},
		{"ctrl\x01", true},
		{"c1\u0085", true},
		{"- dash", true},
		{"mid-dash", false},
		{"key: value", true},
		{"ends with:", true},
		{"a:b", false},
		{"url http://x", false},
		{"a #b", true},
		{"a#b", false},
		{"line\nbreak", true},
		{"&amp", true},
		{"*star", true},
		{"]", true},
		{",comma", true},
		{"?q", true},
		{"!bang", true},
		{">gt", true},
		{"|pipe", true},
		{"@at", true},
		{`"dq`, true},
		{"'sq", true},
		{"#hash", true},
		{"%pct", true},
		{"[bracket", true},
		{"a{b", true},
		{"a}b", true},
		{"a`b", true},
		{"a[b]", false},
		{"42", true},
		{"-1.5e3", true},
		{".5", true},
		{"5.", true},
		{"0x1F", true},
		{"0b101", true},
		{"0o17", true},
		{"0xZZ", false},
		{"+0x10", false},
		{"Infinity", true},
		{"-Infinity", true},
		{"1_000", false},
		{"1e", false},
		{"e5", false},
		{"yes", true},
		{"No", true},
		{"TRUE", true},
		{"Off", true},
		{"null", true},
		{"nullable", false},
		{"~", false},
		{".inf", false},
		{"☰", false},
	}
	for _, tc := range tests {
		if got := yamlNeedsQuotes(tc.in); got != tc.want {
			t.Errorf("yamlNeedsQuotes(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestAppendValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"", `""`},
		{`"Quoted: text"`, `"\"Quoted: text\""`},
		{"a\\b: c", `"a\\b: c"`},
		{"tab\there ", "\"tab\\there \""},
		{"\b\f\n\r", `"\b\f\n\r"`},
		{"x\x01\x7f\u0085", `"x\x01\x7f\x85"`},
		{"42", `"42"`},
		{"\xff: bad utf-8", "\"\xff: bad utf-8\""},
	}
	for _, tc := range tests {
		if got := string(appendValue(nil, tc.in)); got != tc.want {
			t.Errorf("appendValue(%q) = %s, want %s", tc.in, got, tc.want)
		}
		if got := decodeValue(string(appendValue(nil, tc.in))); got != tc.in {
			t.Errorf("decodeValue(appendValue(%q)) = %q", tc.in, got)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`say "hi" \o/`, `"say \"hi\" \\o/"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x1f\x7f", "\"\\u0000\\u001f\x7f\""},
		{"<&> \u2028 é", "\"<&> \u2028 é\""},
	}
	for _, tc := range tests {
		got := string(appendJSONString(nil, tc.in))
		if got != tc.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tc.in, got, tc.want)
		}
		back, n, ok := scanQuoted(got, jsonEscapes)
		if !ok || n != len(got) || back != tc.in {
			t.Errorf("scanQuoted(%s) = %q, %d, %v", got, back, n, ok)
		}
	}
}

func TestScanQuotedRejects(t *testing.T) {
	for _, in := range []string{``, `"`, `"abc`, `"a\`, `"\q"`, `"\u12"`, `"\u12zz"`, `"\x41"`, `x"a"`} {
		if _, _, ok := scanQuoted(in, jsonEscapes); ok {
			t.Errorf("scanQuoted(%q) accepted", in)
		}
	}
	if s, _, ok := scanQuoted(`"\x41\0"`, yamlEscapes); !ok || s != "A\x00" {
		t.Errorf("yaml escapes: %q, %v", s, ok)
	}
}

func FuzzValueQuoting(f *testing.F) {
	for _, s := range []string{"", "a", "key: v", "\"x\"", "\x85", "42", " pad "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		v := string(appendValue(nil, s))
		if got := decodeValue(v); got != s {
			t.Fatalf("decodeValue(%q) = %q, want %q", v, got, s)
		}
		j := string(appendJSONString(nil, s))
		if got, n, ok := scanQuoted(j, jsonEscapes); !ok || n != len(j) || got != s {
			t.Fatalf("scanQuoted(%q) = %q", j, got)
		}
	})
}
