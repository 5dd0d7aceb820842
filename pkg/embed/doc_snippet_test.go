package embed_test

import (
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

// TestEmbeddingDocSnippet is the snippet docs/embedding.md shows, compiled
// and run: the lines between "snippet:" markers appear in that page verbatim
// (TestDocsShowSnippets in docs/ checks it).
func TestEmbeddingDocSnippet(t *testing.T) {
	testtier.BrowserTier(t)
	srv := page()
	defer srv.Close()
	// snippet: begin
	ctx := t.Context()
	c, err := embed.Start(ctx, embed.Options{
		// --output-dir: files the tools write go there, not into ./.playwright-mcp
		Args: []string{"--headless", "--no-download", "--output-dir", t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // stops the server and its browser, and waits

	nav, err := c.Navigate(ctx, srv.URL) // also Snapshot, Click, Type, Evaluate; Screenshot returns the PNG
	if err != nil {
		t.Fatal(err) // a tool error is an *embed.ToolError
	}
	if !strings.Contains(nav.Text, "Page Title: Hello") {
		t.Fatalf("unexpected page:\n%s", nav.Text)
	}
	res, err := c.Call(ctx, "browser_tabs", map[string]any{"action": "list"}) // any tool
	if err != nil || res.IsError {                                            // res.Text, res.Images
		t.Fatalf("browser_tabs: %v %v", err, res)
	}

	sc, err := smoke.Parse("hello.yaml", []byte(`
name: hello
steps:
  - tool: browser_navigate
    args: {url: "${URL}"}
    expect: {contains: ["Hello"]}
`)) // or smoke.LoadFile("testdata/hello.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := smoke.Run(ctx, sc, smoke.Options{
		Start: smoke.InProcess("--headless", "--no-download", "--output-dir", t.TempDir()),
		Vars:  map[string]string{"URL": srv.URL},
	})
	if err != nil || !out.Passed() {
		t.Fatalf("smoke: %v %+v", err, out)
	}
	// snippet: end
}
