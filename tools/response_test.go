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
