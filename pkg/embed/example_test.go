package embed_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

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
	// Prints (TestExamples runs it; examples with an Output comment would run in the unit tier too):
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
	// Prints (TestExamples runs it): passed 2
}

// TestExamples runs the examples, which start a browser, in the browser
// tier and checks what they print (as an Output comment would, but an
// example with one also runs under -short).
func TestExamples(t *testing.T) {
	testtier.BrowserTier(t)
	for _, ex := range []struct {
		name string
		run  func()
		want string
	}{
		{"Start", ExampleStart, "true\ntrue\n"},
		{"smokeRun", Example_smokeRun, "passed 2\n"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			if got := captureStdout(t, ex.run); got != ex.want {
				t.Fatalf("Example%s printed %q, want %q", ex.name, got, ex.want)
			}
		})
	}
}

// captureStdout runs fn with os.Stdout redirected and returns what it wrote.
func captureStdout(t *testing.T, fn func()) string {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stdout = saved }()
	fn()
	_ = w.Close()
	return <-done
}
