package tools

import (
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestWebMCPNames: every name is webmcp_ and the page's name with other
// characters than letters, digits, _ and - made _, at most 64 characters,
// _2, _3… on a clash, so no page name shadows a built-in tool or another.
func TestWebMCPNames(t *testing.T) {
	long := strings.Repeat("x", 100)
	tools := []page.WebMCPTool{{Name: "shop.search"}, {Name: "shop search"}, {Name: "browser_click"}, {Name: "ünï"}, {Name: long}, {Name: long + "y"}, {Name: "shop_search"}}
	got := WebMCPNames(tools)
	want := []string{"webmcp_shop_search", "webmcp_shop_search_2", "webmcp_browser_click", "webmcp__n_", "webmcp_" + long[:57], "webmcp_" + long[:55] + "_2", "webmcp_shop_search_3"}
	for i := range want {
		if got[i] != want[i] || len(got[i]) > 64 {
			t.Errorf("%q → %q, want %q", tools[i].Name, got[i], want[i])
		}
	}
}

func TestWebMCPOutput(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{"hello", `"hello"`},
		{`{"a":1}`, "{\n  \"a\": 1\n}"},
		{nil, "null"},
		{map[string]any{"content": []any{}}, "{\n  \"content\": []\n}"},
	} {
		if got := webmcpOutput(c.in); got != c.want {
			t.Errorf("%v → %q, want %q", c.in, got, c.want)
		}
	}
	big := webmcpOutput(strings.Repeat("é", maxWebMCPResult))
	if !strings.Contains(big, "(cut: the page's result is") || len(big) > maxWebMCPResult+100 {
		t.Errorf("a big result: %d bytes", len(big))
	}
}
