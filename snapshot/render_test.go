package snapshot

import "testing"

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		tree *Tree
		want string
	}{
		{"empty", &Tree{}, ""},
		{"attribute order", &Tree{Roots: []*Node{{
			Kind: KindElement, Role: "button", Name: "B", Ref: "e1",
			Attrs: []Attr{{"cursor", "pointer"}, {"pressed", ""}, {"nth", "2"}, {"checked", "mixed"}},
		}}}, `- button "B" [pressed] [checked=mixed] [ref=e1] [cursor=pointer] [nth=2]`},
		{"key needing quotes", &Tree{Roots: []*Node{{
			Kind: KindElement, Role: "button", Name: "it's: {x}", Ref: "e1",
		}}}, `- 'button "it''s: {x}" [ref=e1]'`},
		{"regex name", &Tree{Roots: []*Node{{Kind: KindElement, Role: "link", Name: `Issue \d+`, Regex: true}}},
			`- link /Issue \d+/`},
		{"name with slashes is quoted", &Tree{Roots: []*Node{{Kind: KindElement, Role: "link", Name: "/a/"}}},
			`- link "/a/"`},
		{"children, props and text", &Tree{Roots: []*Node{{
			Kind: KindElement, Role: "list", Children: []*Node{
				{Kind: KindElement, Role: "listitem", Text: "yes"},
				{Kind: KindElement, Role: "link", Name: "L", Props: []Prop{{"url", "#top"}}},
				{Kind: KindText, Text: "- dash"},
				{Kind: KindOpaque, Raw: "anything: at all"},
			},
		}}}, "- list:\n  - listitem: \"yes\"\n  - link \"L\":\n    - /url: \"#top\"\n  - text: \"- dash\"\n  anything: at all"},
		{"raw wins", &Tree{Roots: []*Node{{Kind: KindElement, Role: "button", Raw: "- button  [x]"}}}, "- button  [x]"},
		{"omitted note", &Tree{Roots: []*Node{{Kind: KindElement, Role: "main"}}, Omitted: 7, Limit: 500},
			"- main\n[...TRUNCATED - 7 more nodes, node limit 500]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tree.Render(); got != tc.want {
				t.Errorf("Render:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestNodeLine(t *testing.T) {
	n := &Node{Kind: KindElement, Role: "textbox", Name: "Name", Ref: "e5", Text: "v", Children: []*Node{{Kind: KindText, Text: "x"}}}
	if got, want := n.Line(), `- textbox "Name" [ref=e5]: v`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
	if got, want := string(appendLine(nil, n, lineOpts{markNew: true})), `- textbox "Name" [ref=e5] [new]: v`; got != want {
		t.Errorf("markNew = %q, want %q", got, want)
	}
	raw := &Node{Kind: KindOpaque, Raw: "- odd:"}
	if got, want := string(appendLine(nil, raw, lineOpts{markNew: true})), "- odd [new]:"; got != want {
		t.Errorf("markNew on raw = %q, want %q", got, want)
	}
}
