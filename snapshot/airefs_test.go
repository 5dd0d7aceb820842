package snapshot

import "testing"

func TestAIRefs(t *testing.T) {
	tree, err := Parse(`- navigation [ref=e1]:
  - link "Home" [ref=e2]:
    - /url: /
  - link "Home" [ref=e3]
- button "Send" [ref=e4]
- text: plain
- iframe [ref=e5]:
  - button "Send" [ref=f1e2]
  - button "Send" [ref=f1e3]
`)
	if err != nil {
		t.Fatal(err)
	}
	got := AIRefs(tree)
	want := map[string]RoleRef{
		"e1":   {Role: "navigation"},
		"e2":   {Role: "link", Name: "Home"},
		"e3":   {Role: "link", Name: "Home", Nth: 1},
		"e4":   {Role: "button", Name: "Send"},
		"e5":   {Role: "iframe"},
		"f1e2": {Role: "button", Name: "Send", FrameID: "f1"},
		"f1e3": {Role: "button", Name: "Send", Nth: 1, FrameID: "f1"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d refs %v, want %d", len(got), got, len(want))
	}
	for ref, w := range want {
		if got[ref] != w {
			t.Errorf("%s = %+v, want %+v", ref, got[ref], w)
		}
	}
}
