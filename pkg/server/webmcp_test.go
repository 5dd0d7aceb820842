package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// webmcpPages serves the WebMCP fixtures: /tools registers two tools,
// /hostile a huge schema, 10,000 tools and one that never answers, /plain
// none. http://127.0.0.1 is a secure context, where modelContext exists.
func webmcpPages(t *testing.T) *httptest.Server {
	t.Helper()
	doc := func(title, script string) string {
		return "<!doctype html><title>" + title + "</title><h1>" + title + "</h1><script>" + script + "</script>"
	}
	pages := map[string]string{
		"/tools": doc("Tools", `
const mc = document.modelContext;
mc.registerTool({name: 'add_numbers', description: 'Adds two numbers',
  inputSchema: {type: 'object', properties: {a: {type: 'number'}, b: {type: 'number'}}, required: ['a', 'b']},
  annotations: {readOnlyHint: true},
  execute: async ({a, b}) => ({content: [{type: 'text', text: 'sum=' + (a + b)}]})});
mc.registerTool({name: 'shop.search', description: 'Searches the shop',
  inputSchema: {type: 'object', properties: {q: {type: 'string'}}},
  execute: async ({q}) => 'found ' + q});`),
		"/hostile": doc("Hostile", `
const mc = document.modelContext;
mc.registerTool({name: 'never', description: 'never answers', execute: () => new Promise(() => {})});
mc.registerTool({name: 'huge', description: 'huge schema',
  inputSchema: {type: 'object', description: 'x'.repeat(1 << 20)}, execute: () => 'no'});
mc.registerTool({name: 'notobject', description: 'a string schema', inputSchema: {type: 'string'}, execute: () => 'no'});
mc.registerTool({name: 'long', description: 'w'.repeat(100000), execute: () => 'r'.repeat(200000)});
for (let i = 0; i < 10000; i++) mc.registerTool({name: 't' + i, description: 'tool ' + i, execute: () => 'answer ' + i});`),
		"/later": doc("Later", `
setTimeout(() => document.modelContext.registerTool({name: 'later', description: 'Registered after load',
  execute: async () => 'late answer'}), 200);`),
		"/plain": doc("Plain", `document.title = typeof document.modelContext === 'undefined' ? 'Plain none' : 'Plain has';`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// webmcpListed returns the client's tools named webmcp_*, by name.
func webmcpListed(t *testing.T, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		if strings.HasPrefix(tl.Name, "webmcp_") {
			out[tl.Name] = tl
		}
	}
	return out
}

func webmcpNames(m map[string]mcp.Tool) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

const toolsChanged = "notifications/tools/list_changed"

var ignoredRE = regexp.MustCompile(`- (\d+) more webmcp tools ignored: at most 64 are offered per page`)

// TestWebMCPPageTools: with --caps webmcp, the two tools a page registers
// become MCP tools webmcp_<name> (sanitised), announced with
// tools/list_changed; a call with arguments reaches the page and answers
// its result as text; the Page section counts them; a navigation takes
// them away (and a call of a gone tool says so).
func TestWebMCPPageTools(t *testing.T) {
	srv := webmcpPages(t)
	c, _ := inProcess(t, "--caps", "webmcp")
	if caps := c.Init.Capabilities.Tools; caps == nil || !caps.ListChanged {
		t.Fatalf("initialize: tools capability %+v, want listChanged", caps)
	}
	notes := mcptest.Record(c.Client)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/tools"}, "Tools")
	notes.Wait(t, 20*time.Second, toolsChanged, func(n mcp.JSONRPCNotification) bool { return n.Method == toolsChanged })

	var listed map[string]mcp.Tool
	testtier.EventuallyState(t, 20*time.Second, "two webmcp tools listed", func() (bool, string) {
		listed = webmcpListed(t, c.Client)
		return len(listed) == 2, fmt.Sprint(webmcpNames(listed))
	})
	add, ok := listed["webmcp_add_numbers"]
	if _, ok2 := listed["webmcp_shop_search"]; !ok || !ok2 {
		t.Fatalf("listed %v, want webmcp_add_numbers and webmcp_shop_search", webmcpNames(listed))
	}
	if !strings.HasPrefix(add.Description, "[UNTRUSTED") || !strings.HasSuffix(add.Description, "Adds two numbers") || !strings.Contains(add.Description, "[READ-ONLY]") {
		t.Fatalf("description %q", add.Description)
	}
	if schema := add.InputSchema; schema.Type != "object" || len(schema.Properties) != 2 || !slices.Equal(schema.Required, []string{"a", "b"}) {
		t.Fatalf("inputSchema %+v", schema)
	}
	if add.Annotations.Title != "add_numbers" || add.Annotations.ReadOnlyHint == nil || !*add.Annotations.ReadOnlyHint {
		t.Fatalf("annotations %+v", add.Annotations)
	}

	must(t, c, "browser_snapshot", nil, "- 2 webmcp tools available on the page")
	must(t, c, "webmcp_add_numbers", map[string]any{"a": 2, "b": 3},
		`Called WebMCP tool "add_numbers". Output is page-provided and untrusted:`, `"text": "sum=5"`)
	must(t, c, "webmcp_shop_search", map[string]any{"q": "socks"}, `found socks`)

	count := func(what string, n int) {
		t.Helper()
		testtier.EventuallyState(t, 20*time.Second, what, func() (bool, string) {
			listed = webmcpListed(t, c.Client)
			return len(listed) == n, fmt.Sprint(webmcpNames(listed))
		})
	}
	// Current tab only: another tab takes them away, coming back returns them.
	must(t, c, "browser_tabs", map[string]any{"action": "new"})
	count("no webmcp tools on a new tab", 0)
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0}, "Tools")
	count("the tools back with their tab", 2)
	// Another site (a new renderer process) is still heard.
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	must(t, c, "browser_navigate", map[string]any{"url": localhost + "/tools"}, "Tools")
	count("the tools of the page on another site", 2)
	must(t, c, "webmcp_add_numbers", map[string]any{"a": 1, "b": 2}, "sum=3")

	// A tool the page registers later, with no call in flight, is
	// announced by itself.
	before := len(notes.All(toolsChanged))
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/later"}, "Later")
	testtier.EventuallyState(t, 20*time.Second, "webmcp_later listed", func() (bool, string) {
		listed = webmcpListed(t, c.Client)
		_, ok := listed["webmcp_later"]
		return ok && len(listed) == 1, fmt.Sprint(webmcpNames(listed))
	})
	testtier.Eventually(t, 20*time.Second, "a list_changed for the later tool", func() bool {
		return len(notes.All(toolsChanged)) >= before+2 // the navigation's removal, the later addition
	})
	must(t, c, "webmcp_later", nil, `"late answer"`)

	before = len(notes.All(toolsChanged))
	out := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/plain"}, "Plain has")
	if strings.Contains(out, "webmcp") {
		t.Fatalf("the new page's section still counts webmcp tools:\n%s", out)
	}
	testtier.EventuallyState(t, 20*time.Second, "webmcp tools gone after the navigation", func() (bool, string) {
		listed = webmcpListed(t, c.Client)
		return len(listed) == 0, fmt.Sprint(webmcpNames(listed))
	})
	if len(notes.All(toolsChanged)) <= before {
		t.Fatal("no tools/list_changed when the tools went")
	}
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "webmcp_add_numbers", Arguments: map[string]any{"a": 1, "b": 1}}})
	if err == nil && !res.IsError {
		t.Fatalf("a gone tool answered: %s", mcptest.Text(res))
	}
}

// TestWebMCPHostilePage: a page with a huge schema, 10,000 tools, a
// 100,000-character description and a tool that never answers stays
// bounded: 64 tools offered, the rest counted in one line, the huge and
// non-object schemas refused with their reasons, the description and the
// result cut; the tool that never answers ends in a timeout error and the
// server goes on serving.
func TestWebMCPHostilePage(t *testing.T) {
	srv := webmcpPages(t)
	c, _ := inProcess(t, "--caps", "webmcp", "--timeout-action", "1500")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/hostile"}, "Hostile")
	var text string
	testtier.EventuallyState(t, 60*time.Second, "every registration heard", func() (bool, string) {
		text = c.MustCall(t, "browser_snapshot", nil)
		// 10,002 valid registrations, 64 kept. (A registration the
		// browser reported both in the domain's first list and as it
		// happened would count twice: at least is what holds.)
		m := ignoredRE.FindStringSubmatch(text)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n >= 9938, text
	})
	for _, want := range []string{
		"- 64 webmcp tools available on the page",
		`webmcp tools refused: "huge": its inputSchema is`,
		`"notobject": its inputSchema is not an object schema`,
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("page section lacks %q:\n%s", want, text)
		}
	}
	var listed map[string]mcp.Tool
	testtier.EventuallyState(t, 20*time.Second, "64 webmcp tools listed", func() (bool, string) {
		listed = webmcpListed(t, c.Client)
		return len(listed) == 64, fmt.Sprint(len(listed))
	})
	for name, tl := range listed {
		if len(name) > 64 || len(tl.Description) > 2600 || schemaLen(tl) > 16<<10 {
			t.Fatalf("%s: name %d, description %d, schema %d bytes: past the bounds", name, len(name), len(tl.Description), schemaLen(tl))
		}
	}
	if _, ok := listed["webmcp_huge"]; ok {
		t.Fatal("the huge schema's tool is offered")
	}
	// The browser reports the tools registered before the domain was
	// enabled at once, by name: never and long are kept either way.
	for _, name := range []string{"webmcp_never", "webmcp_long"} {
		if _, ok := listed[name]; !ok {
			t.Fatalf("%s missing: %v", name, webmcpNames(listed))
		}
	}

	res := c.Call(t, "webmcp_never", nil)
	if !res.IsError || !strings.Contains(mcptest.Text(res), `WebMCP tool "never" did not answer within 1.5s`) {
		t.Fatalf("never: isError=%v\n%s", res.IsError, mcptest.Text(res))
	}
	out := must(t, c, "webmcp_long", nil, "(cut: the page's result is")
	if len(out) > 70<<10 {
		t.Fatalf("long answered %d bytes", len(out))
	}
	must(t, c, "webmcp_t0", nil, `"answer 0"`)
	must(t, c, "browser_snapshot", nil, "Hostile")
}

// TestWebMCPOff: without --caps webmcp, or with it and upstream's ways to
// turn WebMCP off (--no-webmcp, "webmcp": false in the config file,
// PLAYWRIGHT_MCP_WEBMCP=false), pages have no document.modelContext (the
// feature flag is not passed: no fingerprint difference) and no webmcp
// tool is listed.
func TestWebMCPOff(t *testing.T) {
	srv := webmcpPages(t)
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgFile, []byte(`{"webmcp": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"no cap", nil, nil},
		{"--no-webmcp", []string{"--caps", "webmcp", "--no-webmcp"}, nil},
		{"config webmcp false", []string{"--caps", "webmcp", "--config", cfgFile}, nil},
		{"PLAYWRIGHT_MCP_WEBMCP=false", []string{"--caps", "webmcp"}, []string{"PLAYWRIGHT_MCP_WEBMCP=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v) // read by the in-process server's config
			}
			c, _ := inProcess(t, tc.args...)
			if caps := c.Init.Capabilities.Tools; caps != nil && caps.ListChanged {
				t.Fatalf("initialize: tools capability %+v, want no listChanged", caps)
			}
			out := must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/plain"}, "Plain none")
			must(t, c, "browser_evaluate", map[string]any{"function": "() => typeof document.modelContext"}, `"undefined"`)
			must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/tools"}, "Tools")
			if strings.Contains(out, "webmcp") {
				t.Fatalf("page section mentions webmcp:\n%s", out)
			}
			if listed := webmcpListed(t, c.Client); len(listed) != 0 {
				t.Fatalf("webmcp tools listed: %v", webmcpNames(listed))
			}
		})
	}
}

func schemaLen(tl mcp.Tool) int {
	b, _ := json.Marshal(tl.InputSchema)
	return len(b)
}

// TestWebMCPSessionToolsHTTP: over Streamable HTTP a page's tools are
// session tools of the MCP session whose tab shows the page: A lists and
// calls them and hears tools/list_changed; B, another session of the same
// server, neither lists nor calls them nor hears of them; B's own page of
// the same tools gives B its own.
func TestWebMCPSessionToolsHTTP(t *testing.T) {
	mcptest.Chromium(t)
	_, tmp := serverEnv(t)
	t.Setenv("TMPDIR", tmp)
	srv := webmcpPages(t)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--caps", "webmcp", "--output-dir", tmp+"/out")})
	a := h.Connect(t, mcptest.ConnectOptions{})
	b := h.Connect(t, mcptest.ConnectOptions{})
	notesA, notesB := mcptest.Record(a.Client.Client), mcptest.Record(b.Client.Client)
	must(t, b.Client, "browser_navigate", map[string]any{"url": srv.URL + "/plain"}, "Plain has")
	must(t, a.Client, "browser_navigate", map[string]any{"url": srv.URL + "/tools"}, "Tools")
	notesA.Wait(t, 20*time.Second, toolsChanged+" to A", func(n mcp.JSONRPCNotification) bool { return n.Method == toolsChanged })
	testtier.EventuallyState(t, 20*time.Second, "A lists two webmcp tools", func() (bool, string) {
		l := webmcpListed(t, a.Client.Client)
		return len(l) == 2, fmt.Sprint(webmcpNames(l))
	})
	must(t, a.Client, "webmcp_add_numbers", map[string]any{"a": 40, "b": 2}, "sum=42")
	if l := webmcpListed(t, b.Client.Client); len(l) != 0 {
		t.Fatalf("B lists A's page tools: %v", webmcpNames(l))
	}
	res, err := b.Client.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "webmcp_add_numbers", Arguments: map[string]any{"a": 1, "b": 1}}})
	if err == nil && !res.IsError {
		t.Fatalf("B called A's page tool: %s", mcptest.Text(res))
	}
	if n := len(notesB.All(toolsChanged)); n != 0 {
		t.Fatalf("B heard %d tools/list_changed for A's page", n)
	}
	must(t, b.Client, "browser_navigate", map[string]any{"url": srv.URL + "/tools"}, "Tools")
	testtier.EventuallyState(t, 20*time.Second, "B lists its own page's tools", func() (bool, string) {
		l := webmcpListed(t, b.Client.Client)
		return len(l) == 2, fmt.Sprint(webmcpNames(l))
	})
	must(t, b.Client, "webmcp_shop_search", map[string]any{"q": "b"}, "found b")
}
