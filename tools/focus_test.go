package tools

import (
	"strings"
	"testing"
)

func TestActiveLine(t *testing.T) {
	long := strings.Repeat("Q", 5000)
	for _, c := range []struct{ name, text, want string }{
		{"none", "- button \"Go\" [ref=e1]", ""},
		{"button", "- main:\n  - button \"Go\" [active] [ref=e2]\n  - link \"x\"", `button "Go" [ref=e2]`},
		{"value left out", "- textbox \"Name\" [active] [ref=e3]: " + long, `textbox "Name" [ref=e3]`},
		{"children", "- list [active] [ref=e4]:\n  - listitem: a", "list [ref=e4]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := activeLine(c.text); got != c.want {
				t.Errorf("activeLine = %q, want %q", got, c.want)
			}
		})
	}
}
