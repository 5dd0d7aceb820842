package server_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

func pages(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir("../../testdata/pages")))
	t.Cleanup(srv.Close)
	return srv
}

// serverEnv isolates a server process: its own temp dir (profiles land
// there), an empty CloakBrowser cache, and downloads off.
func serverEnv(t *testing.T) (env []string, tmp string) {
	// Short: Chromium refuses a singleton socket path over ~107 bytes.
	tmp, err := os.MkdirTemp("", "cbm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	return []string{"TMPDIR=" + tmp, "CLOAKBROWSER_CACHE_DIR=" + filepath.Join(tmp, "cloak-cache")}, tmp
}

var refRE = regexp.MustCompile(`(\w[^\n]*?) \[ref=((?:f\d+)?e\d+)\]`)

// refFor finds the ref of the first snapshot line containing what.
func refFor(t *testing.T, snapshot, what string) string {
	t.Helper()
	for _, line := range strings.Split(snapshot, "\n") {
		if strings.Contains(line, what) {
			if m := refRE.FindStringSubmatch(line); m != nil {
				return m[2]
			}
		}
	}
	t.Fatalf("no ref for %q in snapshot:\n%s", what, snapshot)
	return ""
}

func TestStdioBinaryEndToEnd(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	mcptest.Chromium(t)
	srv := pages(t)
	env, tmp := serverEnv(t)
	c := mcptest.StartBinary(t, mcptest.Binary(t), mcptest.Options{
		Args: []string{"--no-download", "--output-dir", filepath.Join(tmp, "out")},
		Env:  env,
	})
	t.Logf("spawn → initialize: %v (protocol %s)", c.InitDuration, c.Init.ProtocolVersion)
	if c.Init.ServerInfo.Name != "cloakbrowser-mcp" {
		t.Fatalf("server name %q", c.Init.ServerInfo.Name)
	}

	t.Run("tools/list matches upstream schemas", func(t *testing.T) {
		ctx := t.Context()
		list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		upstream := loadUpstreamSchemas(t)
		got := map[string]mcp.Tool{}
		for _, tool := range list.Tools {
			got[tool.Name] = tool
		}
		for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "cloakbrowser_binary_info", "cloakbrowser_bridge_info"} {
			if _, ok := got[name]; !ok {
				t.Errorf("tool %s missing", name)
			}
		}
		for name, tool := range got {
			want, ok := upstream[name]
			if !ok {
				continue
			}
			b, _ := json.Marshal(tool.InputSchema)
			if len(tool.RawInputSchema) > 0 {
				b = tool.RawInputSchema
			}
			if msg := compatible(t, b, want); msg != "" {
				t.Errorf("%s: %s", name, msg)
			}
		}
	})

	start := time.Now()
	nav := c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"})
	t.Logf("first navigate: %v", time.Since(start))
	for _, want := range []string{"### Page", "- Page URL: " + srv.URL + "/lab.html", "- Page Title: Lab", "### Snapshot", "```yaml", `heading "Lab page"`, "[ref=e"} {
		if !strings.Contains(nav, want) {
			t.Fatalf("navigate response lacks %q:\n%s", want, nav)
		}
	}

	snap := c.MustCall(t, "browser_snapshot", nil)
	button := refFor(t, snap, `button "Press me"`)
	textbox := refFor(t, snap, `textbox "Name"`)

	t.Run("click by ref changes the page", func(t *testing.T) {
		out := c.MustCall(t, "browser_click", map[string]any{"target": button, "element": "Press me button"})
		if !strings.Contains(out, "Pressed 1") || !strings.Contains(out, "- Page Title: Clicked 1") {
			t.Fatalf("click did not show its effect:\n%s", out)
		}
		// The older argument name still works.
		out = c.MustCall(t, "browser_click", map[string]any{"ref": button})
		if !strings.Contains(out, "Pressed 2") {
			t.Fatalf("click via ref alias:\n%s", out)
		}
	})

	t.Run("type into a field", func(t *testing.T) {
		out := c.MustCall(t, "browser_type", map[string]any{"target": textbox, "text": "Ada"})
		if !strings.Contains(out, "Hello Ada") {
			t.Fatalf("type did not show its effect:\n%s", out)
		}
		out = c.MustCall(t, "browser_type", map[string]any{"target": textbox, "text": "Bob", "slowly": true})
		if !strings.Contains(out, "Hello AdaBob") { // slowly types at the caret, like upstream
			t.Fatalf("slow typing:\n%s", out)
		}
	})

	t.Run("binary info is honest", func(t *testing.T) {
		res := c.Call(t, "cloakbrowser_binary_info", nil)
		var v struct {
			BrowserEngine  string `json:"browserEngine"`
			ExecutablePath string `json:"executablePath"`
			OutputDir      string `json:"outputDir"`
			Binary         struct {
				Source   string   `json:"source"`
				Stealth  bool     `json:"stealth"`
				Tried    []string `json:"tried"`
				Platform string   `json:"platform"`
			} `json:"binary"`
		}
		if err := json.Unmarshal([]byte(mcptest.Text(res)), &v); err != nil {
			t.Fatalf("%v: %s", err, mcptest.Text(res))
		}
		if v.BrowserEngine != "chromium" || v.Binary.Source != "system" || v.Binary.Stealth || v.ExecutablePath == "" || len(v.Binary.Tried) == 0 {
			t.Fatalf("binary info not honest about the fallback: %+v", v)
		}
		if res.StructuredContent == nil {
			t.Fatal("no structuredContent")
		}
	})

	t.Run("bridge info", func(t *testing.T) {
		var v struct {
			Name          string `json:"name"`
			Runtime       string `json:"runtime"`
			BrowserEngine string `json:"browserEngine"`
			Upstream      struct {
				Package   string `json:"package"`
				ToolCount int    `json:"toolCount"`
			} `json:"upstream"`
			LocalTools struct {
				ToolCount int      `json:"toolCount"`
				Names     []string `json:"names"`
			} `json:"localTools"`
			CDP struct {
				Enabled bool `json:"enabled"`
			} `json:"cdp"`
		}
		text := c.MustCall(t, "cloakbrowser_bridge_info", nil)
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatal(err)
		}
		if v.Upstream.Package != "@playwright/mcp" || v.Upstream.ToolCount < 4 || v.LocalTools.ToolCount != 2 || v.BrowserEngine != "chromium" || v.Runtime == "" {
			t.Fatalf("bridge info: %s", text)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		closed := closedPort(t)
		cases := []struct {
			name string
			tool string
			args map[string]any
			want string
		}{
			{"unknown ref", "browser_click", map[string]any{"target": "e9999"}, "not found in the current page snapshot"},
			{"frame ref unknown", "browser_click", map[string]any{"target": "f7e3"}, "not found"},
			{"missing target", "browser_click", map[string]any{}, `missing required argument "target"`},
			{"wrong type", "browser_click", map[string]any{"target": 12}, `"target" must be string`},
			{"bad enum", "browser_click", map[string]any{"target": button, "button": "fourth"}, "must be one of"},
			{"unknown argument", "browser_navigate", map[string]any{"url": srv.URL, "bogus": 1}, `unknown argument "bogus"`},
			{"missing url", "browser_navigate", map[string]any{}, `missing required argument "url"`},
			{"javascript url", "browser_navigate", map[string]any{"url": "javascript:alert(1)"}, "javascript: URLs"},
			{"file url", "browser_navigate", map[string]any{"url": "file:///etc/passwd"}, "file: URLs are blocked"},
			{"unreachable url", "browser_navigate", map[string]any{"url": "http://127.0.0.1:" + closed + "/"}, "ERR_CONNECTION_REFUSED"},
			{"selector matches nothing", "browser_click", map[string]any{"target": "#nope"}, "no element matches"},
			{"type missing text", "browser_type", map[string]any{"target": textbox}, `missing required argument "text"`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				start := time.Now()
				res := c.Call(t, tc.tool, tc.args)
				text := mcptest.Text(res)
				if !res.IsError {
					t.Fatalf("want isError, got:\n%s", text)
				}
				if !strings.Contains(text, tc.want) {
					t.Fatalf("error %q lacks %q", text, tc.want)
				}
				if !strings.Contains(text, "### Error") {
					t.Fatalf("no Error section:\n%s", text)
				}
				t.Logf("%s: %v", tc.name, time.Since(start))
			})
		}
		// A stale ref: the page it came from is gone.
		c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/other.html"})
		res := c.Call(t, "browser_click", map[string]any{"target": button})
		if !res.IsError || !strings.Contains(mcptest.Text(res), "Try capturing new snapshot") {
			t.Fatalf("stale ref: %s", mcptest.Text(res))
		}
		// The server still serves.
		c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"})
	})

	// The browser runs with its profile under our TMPDIR; closing the client
	// must leave neither a process nor the profile behind.
	profiles, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*"))
	if len(profiles) != 1 {
		t.Fatalf("want one temp profile under %s, got %v", tmp, profiles)
	}
	if pids := session.ProfilePIDs(profiles[0]); len(pids) == 0 {
		t.Fatal("no browser process found for the profile")
	}
	if err := c.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if pids := session.ProfilePIDs(profiles[0]); len(pids) != 0 {
		t.Fatalf("browser processes left after close: %v", pids)
	}
	if _, err := os.Stat(profiles[0]); !os.IsNotExist(err) {
		t.Fatalf("temp profile left after close: %v", err)
	}
	if strings.Contains(c.Stderr.String(), "panic") {
		t.Fatalf("server panicked:\n%s", c.Stderr.String())
	}
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func loadUpstreamSchemas(t *testing.T) map[string]json.RawMessage {
	b, err := os.ReadFile("../../tools/schemas/playwright-mcp-0.0.83.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	m := map[string]json.RawMessage{}
	for _, tool := range doc.Tools {
		m[tool.Name] = tool.InputSchema
	}
	return m
}

// compatible checks a listed schema against upstream's as a client sees it:
// every upstream property with the same type, enum and description, the same
// required list and strictness. Extra properties are allowed (browser_snapshot
// adds some); mcp-go's client keeps neither "$schema" nor an absent
// "required" apart from an empty one. The wire bytes are checked in tools.
func compatible(t *testing.T, gotRaw, wantRaw []byte) string {
	var got, want map[string]any
	if err := json.Unmarshal(gotRaw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		t.Fatal(err)
	}
	gp, _ := got["properties"].(map[string]any)
	wp, _ := want["properties"].(map[string]any)
	for k, v := range wp {
		a, _ := json.Marshal(gp[k])
		b, _ := json.Marshal(v)
		if string(a) != string(b) {
			return fmt.Sprintf("property %s is %s, upstream %s", k, a, b)
		}
	}
	req := func(m map[string]any) string {
		r, _ := m["required"].([]any)
		b, _ := json.Marshal(r)
		return string(b)
	}
	if req(got) != req(want) && !(req(got) == "[]" && req(want) == "null") {
		return fmt.Sprintf("required %s, upstream %s", req(got), req(want))
	}
	if got["additionalProperties"] != want["additionalProperties"] {
		return "additionalProperties differs"
	}
	return ""
}

// TestPrewarmAtFirstRequest: the stdio server launches its browser ahead
// of the first tool call, but only once a client has asked something: a
// process whose stdin closes before any request (a probe, a client that
// left) starts no Playwright driver and no browser; one that got its
// initialize starts both without a tool call.
func TestPrewarmAtFirstRequest(t *testing.T) {
	t.Parallel() // its own server processes, no process-wide state
	mcptest.Chromium(t)
	bin := mcptest.Binary(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	// A node that records each start, first on PATH and named as the
	// driver's Node.js: every driver start passes through it.
	wrap := t.TempDir()
	started := filepath.Join(wrap, "started")
	script := fmt.Sprintf("#!/bin/sh\necho \"$$ $*\" >> %q\nexec %q \"$@\"\n", started, node)
	if err := os.WriteFile(filepath.Join(wrap, "node"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env, tmp := serverEnv(t)
	env = append(env, "PATH="+wrap+string(os.PathListSeparator)+os.Getenv("PATH"), "PLAYWRIGHT_NODEJS_PATH="+filepath.Join(wrap, "node"))
	args := []string{"--no-download", "--output-dir", filepath.Join(tmp, "out")}

	t.Run("stdin closed before any request", func(t *testing.T) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader("")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, mcptest.Tail(string(out), 2000))
		}
		if b, err := os.ReadFile(started); err == nil {
			t.Fatalf("a driver was started (node pids %q) for a client that asked nothing:\n%s", b, mcptest.Tail(string(out), 2000))
		}
		if strings.Contains(string(out), "browser launched") {
			t.Fatalf("a browser was launched for a client that asked nothing:\n%s", mcptest.Tail(string(out), 2000))
		}
	})
	t.Run("initialize starts the prewarm", func(t *testing.T) {
		c := mcptest.StartBinary(t, bin, mcptest.Options{Args: args, Env: env})
		testtier.EventuallyState(t, 60*time.Second, "the browser launched ahead of any tool call", func() (bool, string) {
			return strings.Contains(c.Stderr.String(), "browser launched"), mcptest.Tail(c.Stderr.String(), 1000)
		})
		if _, err := os.Stat(started); err != nil {
			t.Fatalf("the browser launched, but not through the driver's Node.js on PATH: %v", err)
		}
	})
}
