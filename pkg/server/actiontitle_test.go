package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// titlePage changes only the title: at once, after a fetch, and after the
// response would have been built were the title read once, too early.
const titlePage = `<!doctype html><title>Before</title>
<button onclick="document.title = 'Now'">Now</button>
<button onclick="fetch('/slow').then(r => r.text()).then(t => document.title = t)">Fetch</button>
<button onclick="location.hash = 'x'; document.title = 'Hash'">Hash</button>`

// TestActionTitleIsCurrent: the Page section's title is the title after
// the action, including one a request the action started sets.
func TestActionTitleIsCurrent(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, titlePage)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		fmt.Fprint(w, "Fetched")
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	c, _ := inProcess(t)
	snap := c.MustCall(t, "browser_navigate", map[string]any{"url": ts.URL})
	ref := func(name string) string {
		m := regexp.MustCompile(`button "` + name + `" \[ref=(e\d+)\]`).FindStringSubmatch(snap)
		if m == nil {
			t.Fatalf("no button %q in %s", name, snap)
		}
		return m[1]
	}
	for _, tc := range []struct{ button, title string }{
		{"Now", "Now"},
		{"Fetch", "Fetched"},
		{"Hash", "Hash"},
	} {
		out := c.MustCall(t, "browser_click", map[string]any{"target": ref(tc.button)})
		if !strings.Contains(out, "- Page Title: "+tc.title+"\n") {
			t.Errorf("click %s: want Page Title %q in:\n%s", tc.button, tc.title, out)
		}
	}
	// A tool right after that changes the title and does not act: its
	// response (and the next) reads the title anew.
	c.MustCall(t, "browser_evaluate", map[string]any{"function": "() => { document.title = 'Script' }"})
	if out := c.MustCall(t, "browser_snapshot", nil); !strings.Contains(out, "- Page Title: Script\n") {
		t.Errorf("snapshot after a script set the title: want Page Title %q in:\n%s", "Script", out)
	}
}
