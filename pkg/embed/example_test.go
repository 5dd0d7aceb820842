package embed_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

func page() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hello</title><h1>Hello</h1><button onclick="this.textContent='Clicked'">Press</button>`)
	}))
}

// Start a server in this process, open a page and click a button found in
// the snapshot.
func ExampleStart() {
	srv := page()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	c, err := embed.Start(ctx, embed.Options{Args: []string{"--headless", "--no-download"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	nav, err := c.Navigate(ctx, srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(nav.Text, "Page Title: Hello"))
	res, err := c.Click(ctx, "text=Press")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.Contains(res.Text, `button "Clicked"`))
	// Output:
	// true
	// true
}

// Run a smoke scenario from Go against a server in this process.
func Example_smokeRun() {
	srv := page()
	defer srv.Close()
	sc, err := smoke.Parse("hello.yaml", []byte(`
name: hello
steps:
  - tool: browser_navigate
    args: {url: "${URL}"}
  - tool: browser_click
    args: {target: {role: button, name: Press}}
    expect: {snapshot_has: [{role: button, name: Clicked}]}
`))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := smoke.Run(ctx, sc, smoke.Options{
		Start: smoke.InProcess("--headless", "--no-download"),
		Vars:  map[string]string{"URL": srv.URL},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, len(res.Steps))
	// Output: passed 2
}
