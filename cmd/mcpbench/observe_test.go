package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

const snap = `- generic [ref=e1]:
  - group "Guests" [ref=e25]:
    - button "Fewer guests" [ref=e26]: −
    - button "Add guest" [active] [ref=e28]: +
  - textbox "Full name" [ref=f2e20]
  - button "Next" [ref=e32]
  - button "Next page" [ref=e40]
`

func TestRefFor(t *testing.T) {
	cases := []struct{ role, name, want string }{
		{"button", "Add guest", "e28"},
		{"textbox", "Full name", "f2e20"},
		{"button", "Next", "e32"},
		{"button", "Fewer", ""},
		{"link", "Next", ""},
	}
	for _, tc := range cases {
		t.Run(tc.role+" "+tc.name, func(t *testing.T) {
			if got := refFor(snap, tc.role, tc.name); got != tc.want {
				t.Fatalf("refFor = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadLinked(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "page.yml"), []byte("- button \"Go\" [ref=e3]"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.yml")
	if err := os.WriteFile(outside, []byte("nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, text, want string
	}{
		{"relative to the workspace", "### Snapshot\n- [Snapshot](out/page.yml)", `- button "Go" [ref=e3]`},
		{"relative to the output dir", "[Snapshot](page.yml)", `- button "Go" [ref=e3]`},
		{"absolute inside", "[Snapshot](" + filepath.Join(out, "page.yml") + ")", `- button "Go" [ref=e3]`},
		{"file URL", "[Snapshot](file://" + filepath.Join(out, "page.yml") + ")", `- button "Go" [ref=e3]`},
		{"outside the server's dir is ignored", "[x](" + outside + ")", ""},
		{"web links are ignored", "[docs](https://example.com/page.yml)", ""},
		{"missing file", "[Snapshot](out/none.yml)", ""},
		{"same file twice is read once", "[a](out/page.yml) [b](page.yml)", `- button "Go" [ref=e3]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := readLinked(tc.text, dir, out)
			if got != tc.want {
				t.Fatalf("readLinked = %q, want %q", got, tc.want)
			}
		})
	}
	r := callResult{Text: "resp", Linked: "file"}
	if got := chars(r.Observed()); got != len("resp\nfile") {
		t.Fatalf("observed chars = %d", got)
	}
	if chars("…→") != 2 {
		t.Fatal("chars must count characters, not bytes")
	}
}

func TestAdaptArgs(t *testing.T) {
	schema := func(props ...string) mcp.Tool {
		t := mcp.Tool{InputSchema: mcp.ToolInputSchema{Type: "object", Properties: map[string]any{}}}
		for _, p := range props {
			t.InputSchema.Properties[p] = map[string]any{"type": "string"}
		}
		return t
	}
	in := map[string]any{"target": "e3", "element": "Go button", "text": "hi"}
	cases := []struct {
		name string
		tool mcp.Tool
		want map[string]any
	}{
		{"target schema", schema("target", "element", "text"), map[string]any{"target": "e3", "element": "Go button", "text": "hi"}},
		{"ref schema", schema("ref", "element", "text"), map[string]any{"ref": "e3", "element": "Go button", "text": "hi"}},
		{"no element property", schema("target", "text"), map[string]any{"target": "e3", "text": "hi"}},
		{"unknown schema passes through", mcp.Tool{}, in},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := json.Marshal(adaptArgs(tc.tool, in))
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Fatalf("adaptArgs = %s, want %s", got, want)
			}
		})
	}
}

// TestFixtureServerClosesWithHangingFrames checks that the never-ending
// frame endpoint sends its headers and that shutdown releases it.
func TestFixtureServerClosesWithHangingFrames(t *testing.T) {
	fx, err := startFixtures(filepath.Join("..", "..", "testdata", "bench"))
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	resp, err := http.Get(fx.URL + "/hang?slot=test")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") == "" {
		t.Fatalf("hang: status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if now, total := fx.hangStats(); now != 1 || total != 1 {
		t.Fatalf("hanging = %d, total = %d; want 1, 1", now, total)
	}
	r2, err := http.Get(fx.URL + "/api/orders?status=open")
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Orders []order }
	if err := json.NewDecoder(r2.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if len(body.Orders) != 25 || body.Orders[0].ID != firstOrderID {
		t.Fatalf("orders: %d, first %+v", len(body.Orders), body.Orders)
	}
	closed := make(chan struct{})
	go func() { fx.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("fixture server did not close while a /hang request was open")
	}
}

func TestFixturePagesExist(t *testing.T) {
	for _, p := range fixturePages {
		if _, err := os.Stat(filepath.Join("..", "..", "testdata", "bench", p.Path)); err != nil {
			t.Errorf("fixture %s: %v", p.Name, err)
		}
	}
}

func TestResultText(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent("### Page"),
		mcp.NewImageContent("aGk=", "image/png"),
		mcp.NewTextContent("- Page Title: Hi"),
	}}
	if got := resultText(res); got != "### Page\n- Page Title: Hi" {
		t.Fatalf("resultText = %q", got)
	}
}
