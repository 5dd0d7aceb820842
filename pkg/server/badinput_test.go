package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// badInputPages serves the pages of the bad-input tests.
func badInputPages(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Form</title><label>Name <input id="name"></label><button>Go</button>`)
	})
	// Every key costs the page 100 ms, so typing 120 characters one at a
	// time cannot finish within a 2 s action timeout.
	mux.HandleFunc("/slowkeys", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Slow keys</title><label>Code <input id="code"></label>
<script>document.getElementById('code').addEventListener('keydown', () => { const t = Date.now(); while (Date.now() - t < 100) {} });</script>`)
	})
	// Two images that 404; the favicon is there, so the page causes
	// exactly two console errors, with one text.
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Missing</title><img src="/nope.png" alt="nope"><img src="/nada.png" alt="nada"><p>hello</p>`)
	})
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Write([]byte{0, 0, 1, 0, 0, 0})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// payloadRun is what betrays an argument echoed back: 200 of the 1 MB
// payload's characters in a row.
var payloadRun = strings.Repeat("Q", 200)

// TestBadInputMegabyteArguments passes a huge string to every string
// property of every tool, one at a time: each answer that is an error is
// under 1,000 characters, no answer echoes the argument, and the server
// keeps serving. The sweep's strings are 256 KiB (every message path is
// the same for 1 MB; -race on a loaded 2-core machine makes eighty 1 MB
// round trips take minutes); the 1 MB cases the issue names (url, cookie
// domain, a selector) are sent whole.
func TestBadInputMegabyteArguments(t *testing.T) {
	// Short action timeouts: a huge selector matches nothing, and the
	// answer to it, not the wait, is what is checked.
	c, _ := inProcess(t, "--caps", allCaps+",config", "--timeout-action", "1000")
	srv := badInputPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/form"}, "Form")
	mega := strings.Repeat("Q", 1<<20)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": mega}},
		{"browser_cookie_set", map[string]any{"name": "a", "value": "b", "domain": mega}},
		{"browser_click", map[string]any{"element": "x", "target": mega}},
	} {
		res := c.Call(t, tc.tool, tc.args)
		if text := mcptest.Text(res); !res.IsError || len(text) > 1000 || strings.Contains(text, payloadRun) {
			t.Fatalf("%s with a 1 MB argument: isError=%v, %d characters: %.300s", tc.tool, res.IsError, len(text), text)
		}
	}
	huge := strings.Repeat("Q", 256<<10)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, tool := range list.Tools {
		var s struct {
			Properties map[string]struct {
				Type any   `json:"type"`
				Enum []any `json:"enum"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if len(tool.RawInputSchema) > 0 {
			raw = tool.RawInputSchema
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s schema: %v", tool.Name, err)
		}
		var names []string
		for name, p := range s.Properties {
			if p.Type == "string" {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			switch {
			case tool.Name == "browser_wait_for" && name == "text":
				// Waits its full 30 s for text that never appears;
				// textGone covers the same message.
				continue
			case tool.Name == "browser_close" || tool.Name == "browser_tabs":
				continue // would end the page the other calls use
			}
			args := map[string]any{}
			for _, r := range s.Required {
				args[r] = filler(r, s.Properties[r].Type, s.Properties[r].Enum)
			}
			if p, ok := s.Properties["timeout"]; ok && p.Type == "number" && name != "timeout" {
				args["timeout"] = 1 // wait_for_download: do not wait out the default 30 s
			}
			args[name] = huge
			calls++
			t.Run(tool.Name+"."+name, func(t *testing.T) {
				res := c.Call(t, tool.Name, args)
				text := mcptest.Text(res)
				if strings.Contains(text, payloadRun) {
					i := strings.Index(text, payloadRun)
					t.Errorf("answer (isError=%v, %d characters) echoes the argument: …%s…", res.IsError, len(text), text[max(0, i-150):i+20])
				}
				if res.IsError && len(text) > 1000 {
					t.Errorf("error of %d characters: %.300s", len(text), text)
				}
			})
		}
	}
	if calls < 40 {
		t.Fatalf("only %d string arguments found in %d tools: the schema walk is broken", calls, len(list.Tools))
	}
	// Still serving, on the same page.
	must(t, c, "browser_snapshot", map[string]any{}, "Form")
}

// filler is a plausible value for a required argument next to the huge one.
func filler(name string, typ any, enum []any) any {
	if len(enum) > 0 {
		return enum[0]
	}
	switch typ {
	case "boolean":
		return false
	case "number", "integer":
		return 1
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	switch name {
	case "target", "ref", "startTarget", "endTarget":
		return "e2"
	case "url":
		return "http://127.0.0.1:9/"
	}
	return "x"
}

// TestBadInputShortErrors covers the short, true answers to bad input one
// by one, each against today's behaviour.
func TestBadInputShortErrors(t *testing.T) {
	c, _ := inProcess(t, "--caps", allCaps)
	srv := badInputPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/form"}, "Form")

	t.Run("url of a megabyte is refused before any lookup", func(t *testing.T) {
		fails(t, c, "browser_navigate", map[string]any{"url": strings.Repeat("A", 1<<20)}, "the host is 1048576 characters long; a hostname has at most 253")
	})
	t.Run("cookie domain of a megabyte", func(t *testing.T) {
		res := c.Call(t, "browser_cookie_set", map[string]any{"name": "a", "value": "b", "domain": strings.Repeat("d", 1<<20)})
		text := mcptest.Text(res)
		if !res.IsError || len(text) > 1000 || !strings.Contains(text, "(1048576 chars)") {
			t.Fatalf("isError=%v, %d characters: %.400s", res.IsError, len(text), text)
		}
	})
	t.Run("no arguments", func(t *testing.T) {
		fails(t, c, "browser_navigate_back", map[string]any{"foo": 1}, `browser_navigate_back: unknown argument "foo": this tool takes no arguments; call it with {}`)
	})
	for _, tc := range []struct{ url, scheme string }{
		{"view-source:" + srv.URL + "/form", "view-source"},
		{"ftp://example.com/file", "ftp"},
		{"chrome://version", "chrome"},
		{"devtools://devtools/bundled/inspector.html", "devtools"},
	} {
		t.Run(tc.scheme+" refused with what is allowed", func(t *testing.T) {
			fails(t, c, "browser_navigate", map[string]any{"url": tc.url}, strconv.Quote(tc.scheme)+": URLs are not allowed")
			fails(t, c, "browser_navigate", map[string]any{"url": tc.url}, "this server navigates to http:, https:, about: and data: URLs")
		})
	}
	t.Run("defaulted arguments upstream lists as required", func(t *testing.T) {
		must(t, c, "browser_take_screenshot", map[string]any{"type": "png"}, "Screenshot of viewport")
		must(t, c, "browser_console_messages", map[string]any{})
		must(t, c, "browser_network_requests", map[string]any{})
	})
}

var consoleHeaderRE = regexp.MustCompile(`- Console: (\d+) errors?, (\d+) warnings?`)

// TestBadInputConsoleCount: two missing images give two console errors
// with one text; the page header counts what browser_console_messages
// lists, and each listed error names its source (as upstream's "@ url:line"
// does), so the list does not read as one 404 reported twice.
func TestBadInputConsoleCount(t *testing.T) {
	c, _ := inProcess(t)
	srv := badInputPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/missing"}, "Missing")
	var out string
	// Each 404 is reported once its request ends: poll until both are.
	for deadline := time.Now().Add(10 * time.Second); ; {
		out = must(t, c, "browser_console_messages", map[string]any{"level": "error"})
		if strings.Count(out, "[ERROR]") >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	snap := must(t, c, "browser_snapshot", map[string]any{})
	m := consoleHeaderRE.FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no console line in the page header:\n%s", snap)
	}
	listed := strings.Count(out, "[ERROR]")
	if m[1] != strconv.Itoa(listed) || listed != 2 {
		t.Fatalf("header says %s errors, browser_console_messages lists %d (want 2):\n%s\n---\n%s", m[1], listed, snap, out)
	}
	for _, img := range []string{"/nope.png:", "/nada.png:"} {
		if strings.Count(out, img) != 1 {
			t.Errorf("the list does not name %s once:\n%s", img, out)
		}
	}
}

// TestBadInputTypeSlowlyTimeout: typing one key at a time into a page that
// handles keys slowly says how much was typed when the action timeout ends
// it, and that is what the field holds.
func TestBadInputTypeSlowlyTimeout(t *testing.T) {
	c, _ := inProcess(t, "--timeout-action", "2000")
	srv := badInputPages(t)
	snap := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/slowkeys"}, "Slow keys")
	ref := refFor(t, snap, `textbox "Code"`)
	text := strings.Repeat("abcdefghij", 12)
	res := c.Call(t, "browser_type", map[string]any{"target": ref, "text": text, "slowly": true})
	out := mcptest.Text(res)
	m := regexp.MustCompile(`typed (\d+) of 120 characters before the 2s timeout`).FindStringSubmatch(out)
	if !res.IsError || m == nil {
		t.Fatalf("isError=%v:\n%s", res.IsError, out)
	}
	if strings.Contains(out, "may be hidden") {
		t.Errorf("blames visibility for a slow page:\n%s", out)
	}
	n, _ := strconv.Atoi(m[1])
	if n <= 0 || n >= 120 {
		t.Fatalf("typed %d of 120", n)
	}
	// The page has caught up: the field holds what the error said.
	val := must(t, c, "browser_evaluate", map[string]any{"function": "() => document.getElementById('code').value"})
	if want := strconv.Quote(text[:n]); !strings.Contains(val, want) {
		t.Fatalf("the error says %d characters were typed; the field holds:\n%s", n, val)
	}
}

// TestBadInputConfigFileType: a config file with a wrong type stops the
// binary with the key, the type it takes and the value.
func TestBadInputConfigFileType(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte(`{"browser": {"isolated": "yes"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mcptest.Binary(t), "--config", p)
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 5 * time.Second
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err == nil {
		t.Fatalf("the binary started with a bad config:\n%s", out)
	}
	want := `key "browser.isolated" must be a boolean (true or false), got string "yes"`
	if !strings.Contains(out, want) || strings.Contains(out, "Go struct") {
		t.Fatalf("output lacks %q:\n%s", want, out)
	}
}
