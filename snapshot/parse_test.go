package snapshot

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// dump prints the parsed structure of a tree, one node per line, for golden
// files and failure messages.
func dump(t *Tree) string {
	var b strings.Builder
	t.Walk(func(n *Node, depth int) bool {
		b.WriteString(strings.Repeat("  ", depth))
		switch n.Kind {
		case KindElement:
			fmt.Fprintf(&b, "element role=%q", n.Role)
		case KindText:
			b.WriteString("text")
		case KindOpaque:
			b.WriteString("opaque")
		}
		if n.Name != "" {
			fmt.Fprintf(&b, " name=%q", n.Name)
		}
		if n.Regex {
			b.WriteString(" regex")
		}
		if n.Ref != "" {
			fmt.Fprintf(&b, " ref=%s", n.Ref)
		}
		for _, a := range n.Attrs {
			fmt.Fprintf(&b, " [%s=%q]", a.Key, a.Value)
		}
		if n.Text != "" {
			fmt.Fprintf(&b, " text=%q", n.Text)
		}
		for _, p := range n.Props {
			fmt.Fprintf(&b, " /%s=%q", p.Name, p.Value)
		}
		if n.Raw != "" {
			fmt.Fprintf(&b, " raw=%q", n.Raw)
		}
		b.WriteByte('\n')
		return true
	})
	return b.String()
}

func TestParseLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Node // Children are not compared; Raw only for its presence
	}{
		{"role only", "- generic", Node{Kind: KindElement, Role: "generic"}},
		{"name and ref", `- button "Press me" [ref=e3] [cursor=pointer]`,
			Node{Kind: KindElement, Role: "button", Name: "Press me", Ref: "e3", Attrs: []Attr{{"cursor", "pointer"}}}},
		{"state attributes", `- heading "Lab page" [level=1] [ref=e2]`,
			Node{Kind: KindElement, Role: "heading", Name: "Lab page", Ref: "e2", Attrs: []Attr{{"level", "1"}}}},
		{"checked mixed", `- checkbox "Partly" [checked=mixed] [disabled] [ref=e7]`,
			Node{Kind: KindElement, Role: "checkbox", Name: "Partly", Ref: "e7", Attrs: []Attr{{"checked", "mixed"}, {"disabled", ""}}}},
		{"frame ref and box", `- button "In frame" [ref=f1e2] [box=10,20,30,40]`,
			Node{Kind: KindElement, Role: "button", Name: "In frame", Ref: "f1e2", Attrs: []Attr{{"box", "10,20,30,40"}}}},
		{"inline text", `- textbox "Name" [ref=e5]: initial value`,
			Node{Kind: KindElement, Role: "textbox", Name: "Name", Ref: "e5", Text: "initial value"}},
		{"quoted inline text", `- paragraph [ref=e12]: "\"Quoted: text\""`,
			Node{Kind: KindElement, Role: "paragraph", Ref: "e12", Text: `"Quoted: text"`}},
		{"escaped quotes in name", `- button "Say \"hi\"" [ref=e1]`,
			Node{Kind: KindElement, Role: "button", Name: `Say "hi"`, Ref: "e1"}},
		{"unicode escape in name", `- button "a\u0001b" [ref=e1]`,
			Node{Kind: KindElement, Role: "button", Name: "a\x01b", Ref: "e1"}},
		{"single-quoted key", `- 'button "Menu: open" [expanded] [ref=e13]': ☰`,
			Node{Kind: KindElement, Role: "button", Name: "Menu: open", Ref: "e13", Attrs: []Attr{{"expanded", ""}}, Text: "☰"}},
		{"single quote inside quoted key", `- 'button "it''s: here" [ref=e1]'`,
			Node{Kind: KindElement, Role: "button", Name: "it's: here", Ref: "e1"}},
		{"regex name", `- link /Issue \d+/ [ref=e4]`,
			Node{Kind: KindElement, Role: "link", Name: `Issue \d+`, Regex: true, Ref: "e4"}},
		{"regex name with brackets", `- link /a [b]/ [ref=e4]`,
			Node{Kind: KindElement, Role: "link", Name: `a [b]`, Regex: true, Ref: "e4"}},
		{"text line", "- text: Name", Node{Kind: KindText, Text: "Name"}},
		{"quoted text line", `- text: "link and trailing # hash"`, Node{Kind: KindText, Text: "link and trailing # hash"}},
		{"value with \\x escape", `- text: "a\x85b\tc"`, Node{Kind: KindText, Text: "a\u0085b\tc"}},
		{"yaml-quoted scalar is opaque", `- 'text: with: colon'`, Node{Kind: KindOpaque, Raw: "x"}},
		{"not a list item", "hello", Node{Kind: KindOpaque, Raw: "x"}},
		{"bad attribute", `- button "x" [ref=e1`, Node{Kind: KindOpaque, Raw: "x"}},
		{"unterminated name", `- button "x [ref=e1]`, Node{Kind: KindOpaque, Raw: "x"}},
		{"junk after name", `- button "x" y`, Node{Kind: KindOpaque, Raw: "x"}},
		{"playwright diff marker", `- ref=e5 [unchanged]`, Node{Kind: KindOpaque, Raw: "x"}},
		{"non-canonical attribute order keeps raw", `- button [ref=e1] [disabled]`,
			Node{Kind: KindElement, Role: "button", Ref: "e1", Attrs: []Attr{{"disabled", ""}}, Raw: "x"}},
		{"needless key quotes keep raw", `- 'button'`, Node{Kind: KindElement, Role: "button", Raw: "x"}},
		{"colon without children keeps raw", `- list:`, Node{Kind: KindElement, Role: "list", Raw: "x"}},
		{"carriage return is opaque", "- button \"x\"\r", Node{Kind: KindOpaque, Raw: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustParse(t, tc.line)
			if len(tr.Roots) != 1 {
				t.Fatalf("got %d roots, want 1:\n%s", len(tr.Roots), dump(tr))
			}
			got := *tr.Roots[0]
			if (got.Raw != "") != (tc.want.Raw != "") {
				t.Errorf("Raw = %q, want set: %v", got.Raw, tc.want.Raw != "")
			}
			if got.Raw != "" && got.Raw != tc.line {
				t.Errorf("Raw = %q, want the line %q", got.Raw, tc.line)
			}
			got.Raw, tc.want.Raw = "", ""
			got.Children = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if r := tr.Render(); r != tc.line {
				t.Errorf("Render = %q, want %q", r, tc.line)
			}
		})
	}
}

func TestParseStructure(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"children and props", "- link \"Other\" [ref=e6]:\n  - /url: /other\n  - text: x",
			"element role=\"link\" name=\"Other\" ref=e6 /url=\"/other\"\n  text text=\"x\"\n"},
		{"prop after a child stays a line", "- link [ref=e6]:\n  - text: x\n  - /url: /other",
			"element role=\"link\" ref=e6\n  text text=\"x\"\n  opaque raw=\"- /url: /other\"\n"},
		{"top-level prop is opaque", "- /url: /x", "opaque raw=\"- /url: /x\"\n"},
		{"indentation jump keeps its spaces", "- list:\n      - listitem",
			"element role=\"list\"\n  opaque raw=\"    - listitem\"\n"},
		{"odd indentation", "- list:\n   - listitem",
			"element role=\"list\"\n  opaque raw=\" - listitem\"\n"},
		{"blank line resets to the top", "- list:\n\n  - listitem",
			"element role=\"list\" raw=\"- list:\"\nopaque\nopaque raw=\"  - listitem\"\n"},
		{"siblings after nesting", "- a:\n  - b:\n    - c\n  - d\n- e",
			"element role=\"a\"\n  element role=\"b\"\n    element role=\"c\"\n  element role=\"d\"\nelement role=\"e\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustParse(t, tc.text)
			if got := dump(tr); got != tc.want {
				t.Errorf("structure:\n%s\nwant:\n%s", got, tc.want)
			}
			if r := tr.Render(); r != tc.text {
				t.Errorf("Render = %q, want %q", r, tc.text)
			}
		})
	}
}

func TestParseRoundTrip(t *testing.T) {
	tests := map[string]string{
		"empty":            "",
		"one newline":      "\n",
		"trailing newline": "- button \"x\" [ref=e1]\n",
		"crlf":             "- list [ref=e1]:\r\n  - listitem [ref=e2]\r\n",
		"tabs":             "- list:\n\t- listitem",
		"deep":             strings.Repeat("  ", 600) + "- x\n" + strings.Repeat("- a:\n", 3),
		"nesting past the bound": func() string {
			var b strings.Builder
			for i := 0; i < maxNesting+20; i++ {
				b.WriteString(strings.Repeat("  ", i) + "- generic:\n")
			}
			return b.String()
		}(),
		"invalid utf-8":     "- button \"\xff\xfe\" [ref=e1]: \"\xffx\"",
		"empty value":       "- textbox [ref=e1]: \"\"",
		"empty plain value": "- textbox [ref=e1]: ",
		"spaces only":       "   ",
		"dash only":         "-",
		"empty key":         "- : x",
		"quote not closed":  "- 'button",
		"json name escapes": `- button "\u00e9\n\t\\" [ref=e1]`,
		"surrogate pair":    `- button "\ud83d\ude00" [ref=e1]`,
		"lone surrogate":    `- button "\ud83d" [ref=e1]`,
		"number-like texts": "- listitem: \"42\"\n- listitem: \"0x1F\"\n- listitem: 1_000\n- listitem: \"Infinity\"\n- listitem: \".5e3\"",
		"yaml words":        "- listitem: \"yes\"\n- listitem: \"NULL\"\n- listitem: yesterday",
		"codegen diff":      "- <changed> button \"x\" [ref=e1]\n- ref=e2 [unchanged]",
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			tr := mustParse(t, text)
			if got := tr.Render(); got != text {
				t.Errorf("Render(Parse(s)) = %q\nwant %q\nparsed:\n%s", got, text, dump(tr))
			}
		})
	}
}

// TestParseFixtures parses the real Playwright 1.64 output recorded by
// testdata/snapshot/capture.mjs: it must round-trip with every line
// understood (no Raw fallback).
func TestParseFixtures(t *testing.T) {
	for _, name := range []string{"lab.ai.yml", "lab.boxes.ai.yml", "lab.after.ai.yml", "brief.ai.yml"} {
		t.Run(name, func(t *testing.T) {
			text := readFixture(t, name)
			tr := mustParse(t, text)
			if got := tr.Render(); got != text {
				t.Fatalf("round trip differs:\n%s", got)
			}
			if name == "brief.ai.yml" {
				return // holds a hand-written opaque line
			}
			tr.Walk(func(n *Node, _ int) bool {
				if n.Raw != "" {
					t.Errorf("line kept raw: %q", n.Raw)
				}
				return true
			})
		})
	}
	golden(t, "lab.ai.parsed.txt", dump(mustParse(t, readFixture(t, "lab.ai.yml"))))
}

func TestParseTooLarge(t *testing.T) {
	_, err := Parse(strings.Repeat("x", MaxParseBytes+1))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}
