package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// actCostPage has a plain input and a button that changes a paragraph's text.
const actCostPage = `<!doctype html><title>Cost</title>
<input aria-label="Name">
<button onclick="document.getElementById('out').textContent = 'clicked ' + (++window.n)">Go</button>
<p id="out">idle</p><script>window.n = 0</script>`

var sendRE = regexp.MustCompile(`SEND ► \{"id":\d+,"method":"([\w.]+)"`)

// TestActCost measures the CDP round trips and time of browser_type
// (submit false) and browser_click. Set CLOAKMCP_ACTCOST=1 to run it; it
// prints, asserts nothing about speed (speed is measured, not asserted).
func TestActCost(t *testing.T) {
	if os.Getenv("CLOAKMCP_ACTCOST") == "" {
		t.Skip("set CLOAKMCP_ACTCOST=1 to measure")
	}
	t.Setenv("DEBUG", "pw:protocol,pw:channel*")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, actCostPage)
	}))
	defer ts.Close()
	c, _ := inProcess(t)
	snap := c.MustCall(t, "browser_navigate", map[string]any{"url": ts.URL})
	ref := func(role, name string) string {
		m := regexp.MustCompile(role + ` "` + name + `".*?\[ref=(e\d+)\]`).FindStringSubmatch(snap)
		if m == nil {
			t.Fatalf("no %s %q in %s", role, name, snap)
		}
		return m[1]
	}
	input, button := ref("textbox", "Name"), ref("button", "Go")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_type", map[string]any{"target": input, "text": "hello"}},
		{"browser_click", map[string]any{"target": button}},
	} {
		var ms []float64
		var methods []string
		for i := 0; i < 21; i++ {
			mark := len(c.Stderr.String())
			start := time.Now()
			out := c.MustCall(t, tc.tool, tc.args)
			ms = append(ms, float64(time.Since(start).Microseconds())/1000)
			if i == 0 {
				t.Logf("%s response:\n%s", tc.tool, out)
			}
			if i == 20 {
				os.WriteFile("/tmp/actcost-"+tc.tool+".log", []byte(c.Stderr.String()[mark:]), 0o644)
				for _, m := range sendRE.FindAllStringSubmatch(c.Stderr.String()[mark:], -1) {
					methods = append(methods, m[1])
				}
			}
		}
		sort.Float64s(ms)
		t.Logf("%s: %d CDP round trips %v; median %.1f ms (min %.1f, max %.1f, 21 calls)", tc.tool, len(methods), strings.Join(methods, ","), ms[10], ms[0], ms[20])
	}
}

// titlePage changes only the title: at once, after a fetch, and after the
// response would have been built were the title read once, too early.
const titlePage = `<!doctype html><title>Before</title>
<button onclick="document.title = 'Now'">Now</button>
<button onclick="fetch('/slow').then(r => r.text()).then(t => document.title = t)">Fetch</button>
<button onclick="location.hash = 'x'; document.title = 'Hash'">Hash</button>`

// TestActionTitleIsCurrent: the title Settle reads with its round trip (and
// reuses for the Page section) is the title after the action, including one
// a request the action started sets.
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
