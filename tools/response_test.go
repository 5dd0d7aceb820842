package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestResponseSections(t *testing.T) {
	r := &Response{}
	r.Result("done %d", 1)
	r.SetPage([]string{"- Page URL: u", "- Page Title: t"})
	r.AddModal("- [x]: can be handled by y")
	r.SetSnapshot(fence("yaml", "- a\n"))
	r.AddEvent("- e")
	got := r.Build()
	text := got.Content[0].(mcp.TextContent).Text
	want := "### Result\ndone 1\n\n### Page\n- Page URL: u\n- Page Title: t\n\n### Modal state\n- [x]: can be handled by y\n\n### Snapshot\n```yaml\n- a\n```\n\n### Events\n- e"
	if text != want || got.IsError {
		t.Fatalf("got:\n%q\nwant:\n%q", text, want)
	}
	e := (&Response{}).Error("bad %s", "thing")
	e.Result("ignored?")
	res := e.Build()
	if !res.IsError || !strings.HasPrefix(res.Content[0].(mcp.TextContent).Text, "### Error\nbad thing\n\n### Result") {
		t.Fatalf("error response: %+v", res)
	}
}

func TestFindInSnapshot(t *testing.T) {
	snap := `- generic [ref=e1]:
  - navigation [ref=e2]:
    - link "Home" [ref=e3]:
      - /url: /
  - main [ref=e4]:
    - heading "Orders" [ref=e5]
    - list [ref=e6]:
      - listitem [ref=e7]: Apple pie
      - listitem [ref=e8]: Cherry
      - listitem [ref=e9]: Apple tart`
	got := findInSnapshot(snap, func(s string) bool { return strings.Contains(s, "Apple") }, 3)
	want := `- generic [ref=e1]:
  - main [ref=e4]:
    - list [ref=e6]:
      - listitem [ref=e7]: Apple pie
      # …
      - listitem [ref=e9]: Apple tart`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if findInSnapshot(snap, func(string) bool { return false }, 3) != "" {
		t.Fatal("no match should be empty")
	}
}

func BenchmarkResponseBuild(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 1500; i++ {
		fmt.Fprintf(&sb, "  - row [ref=e%d]:\n    - cell \"Customer %d\"\n", i, i)
	}
	snap := sb.String()
	b.ReportAllocs()
	for b.Loop() {
		r := &Response{}
		r.SetPage([]string{"- Page URL: http://x/", "- Page Title: T"})
		r.SetSnapshot(fence("yaml", snap))
		_ = r.Build()
	}
}
