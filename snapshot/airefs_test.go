package snapshot

import "testing"

func TestAIRefs(t *testing.T) {
	got := AIRefs(mustParse(t, `- navigation [ref=e1]:
  - link "Home" [ref=e2]:
    - /url: /
  - link "Home" [ref=e3]
- button "Send" [ref=e4]
- text: plain
- iframe [ref=e5]:
  - button "Send" [ref=f1e2]
  - button "Send" [ref=f1e3]
`))
	want := map[string]RoleRef{
		"e1":   {Role: "navigation"},
		"e2":   {Role: "link", Name: "Home"},
		"e3":   {Role: "link", Name: "Home", Nth: 1},
		"e4":   {Role: "button", Name: "Send"},
		"e5":   {Role: "iframe"},
		"f1e2": {Role: "button", Name: "Send", FrameID: "f1"},
		"f1e3": {Role: "button", Name: "Send", Nth: 1, FrameID: "f1"},
	}
	wantAIRefs(t, got, want)
}

// TestAIRefsOfALaterPage: on a tab's later page Playwright prefixes the main
// frame's refs too (f2e1); they are the main frame's all the same, and a
// frame inside it has a prefix of its own.
func TestAIRefsOfALaterPage(t *testing.T) {
	text := `- generic [active] [ref=f2e1]:
  - button "Send" [ref=f2e2]
  - iframe [ref=f2e3]:
    - button "Send" [ref=f3e2]
`
	got := AIRefs(mustParse(t, text))
	want := map[string]RoleRef{
		"f2e1": {Role: "generic"},
		"f2e2": {Role: "button", Name: "Send"},
		"f2e3": {Role: "iframe"},
		"f3e2": {Role: "button", Name: "Send", FrameID: "f3"},
	}
	wantAIRefs(t, got, want)
	for in, want := range map[string]string{text: "f2", "- button \"A\" [ref=e4]": "", "- text: none": "", "- button [ref=f12e1] [cursor=pointer]": "f12"} {
		if got := mustParse(t, in).MainFrame(); got != want {
			t.Errorf("MainFrame of %q = %q, want %q", in, got, want)
		}
	}
}

// wantAIRefs fails t unless got is want.
func wantAIRefs(t *testing.T, got, want map[string]RoleRef) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d refs %v, want %d", len(got), got, len(want))
	}
	for ref, w := range want {
		if got[ref] != w {
			t.Errorf("%s = %+v, want %+v", ref, got[ref], w)
		}
	}
}
