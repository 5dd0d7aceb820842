package tools_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/tools"
)

// upstreamAllCaps are upstream's capability groups, every one enabled for
// the recording (core groups are always on).
const upstreamAllCaps = "config,devtools,network,pdf,storage,testing,vision"

// upstreamToolList is tools/list of @playwright/mcp 0.0.83 with every cap,
// as recorded under testdata/upstream/tools-list-all-caps.json (re-recorded
// by the upstream task).
func upstreamToolList(t *testing.T) []wireTool {
	t.Helper()
	rec := mcptest.Recorded(t, "tools-list-all-caps.json", func() string {
		r := mcptest.StartUpstreamRaw(t, mcptest.Chromium(t), "--caps", upstreamAllCaps)
		r.Send(t, map[string]any{"jsonrpc": "2.0", "id": "list", "method": "tools/list", "params": map[string]any{}})
		m := r.Next(t, 60*time.Second, "tools/list response", func(m map[string]any) bool { return m["id"] == "list" })
		res, _ := m["result"].(map[string]any)
		if res == nil {
			t.Fatalf("tools/list: %v", m)
		}
		b, err := json.Marshal(map[string]any{"tools": res["tools"]})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		return out.String() + "\n"
	})
	var doc struct {
		Tools []wireTool `json:"tools"`
	}
	if err := json.Unmarshal([]byte(rec), &doc); err != nil {
		t.Fatalf("recording: %v", err)
	}
	if len(doc.Tools) < 60 {
		t.Fatalf("recording lists %d tools; with every cap upstream has more than 60", len(doc.Tools))
	}
	return doc.Tools
}

// wireTool is one tools/list entry as a client reads it.
type wireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// optInExceptions are upstream's opt-in tools this server does not list
// with upstream's exact definition, each with the reason.
var optInExceptions = map[string]string{
	// A person at a headed browser.
	"browser_start_recording": "records what a person does in a headed browser; this server runs headless for agents",
	"browser_stop_recording":  "records what a person does in a headed browser; this server runs headless for agents",
	"browser_annotate":        "waits for a person to draw on the page in Playwright's dashboard; this server runs headless for agents",
	"browser_resume":          "resumes a script paused in Playwright's debugger, which this server does not run",
}

// optInExtended are upstream's opt-in tools to which this server adds
// properties, each with what it adds; upstream's own stay as they are.
var optInExtended = map[string]string{
	"browser_stop_tracing": "filename: where the trace goes (upstream always names it)",
}

// TestOptInSchemasMatchUpstream holds every opt-in tool (behind --caps) of
// upstream 0.0.83 against ours: the same name, description and input schema
// on the wire, or an exception above that says why not.
func TestOptInSchemasMatchUpstream(t *testing.T) {
	ours := map[string]*tools.Tool{}
	for _, tool := range tools.All() {
		ours[tool.Def.Name] = tool
	}
	var checked []string
	for _, u := range upstreamToolList(t) {
		tool := ours[u.Name]
		if why, ok := optInExceptions[u.Name]; ok {
			if tool != nil {
				t.Errorf("%s is listed as an exception (%s) but this server has it: check it", u.Name, why)
			}
			continue
		}
		if tool == nil {
			t.Errorf("upstream tool %s: this server has none; build it or list it in optInExceptions with the reason", u.Name)
			continue
		}
		if tool.Cap == "core" || tool.Cap == "local" {
			continue // TestUpstreamSchemasOnTheWire
		}
		checked = append(checked, u.Name)
		b, err := json.Marshal(tool.Def)
		if err != nil {
			t.Fatal(err)
		}
		var got wireTool
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Description != u.Description {
			t.Errorf("%s description:\n got %q\nwant %q", u.Name, got.Description, u.Description)
		}
		if _, ok := optInExtended[u.Name]; ok {
			var g, w map[string]any
			json.Unmarshal(got.InputSchema, &g)
			json.Unmarshal(u.InputSchema, &w)
			gp, _ := g["properties"].(map[string]any)
			wp, _ := w["properties"].(map[string]any)
			for k, v := range wp {
				if canonValue(t, gp[k]) != canonValue(t, v) {
					t.Errorf("%s: upstream property %s changed", u.Name, k)
				}
			}
			if canonValue(t, g["required"]) != canonValue(t, w["required"]) || g["additionalProperties"] != w["additionalProperties"] {
				t.Errorf("%s: required or additionalProperties changed", u.Name)
			}
			continue
		}
		if g, w := canonSchema(t, got.InputSchema), canonSchema(t, u.InputSchema); g != w {
			t.Errorf("%s input schema:\n got %s\nwant %s", u.Name, g, w)
		}
	}
	sort.Strings(checked)
	t.Logf("%d opt-in tools checked: %s", len(checked), strings.Join(checked, " "))
}

// TestEmbeddedOptInSchemasAreTheRecording checks that the copy of
// upstream's tools/list the tools package embeds
// (tools/schemas/playwright-mcp-0.0.83-all-caps.json) is the recording, so
// re-recording upstream shows when the definitions served must change.
func TestEmbeddedOptInSchemasAreTheRecording(t *testing.T) {
	root := mcptest.ModuleRoot(t)
	rec, err := os.ReadFile(filepath.Join(root, "testdata", "upstream", "tools-list-all-caps.json"))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := os.ReadFile(filepath.Join(root, "tools", "schemas", "playwright-mcp-0.0.83-all-caps.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec, emb) {
		t.Fatal("tools/schemas/playwright-mcp-0.0.83-all-caps.json is not testdata/upstream/tools-list-all-caps.json: copy the recording over it, then fix the tools whose definitions changed")
	}
}

func canonValue(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// canonSchema is a schema in a canonical form, without "$schema" (MCP's
// default dialect, which this server leaves out).
func canonSchema(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	delete(m, "$schema")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
