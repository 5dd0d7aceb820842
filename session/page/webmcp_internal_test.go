package page

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseWebMCPTool: a page's tool is untrusted input: its name and
// schema are bounded and validated (refused with a reason), its
// description cut.
func TestParseWebMCPTool(t *testing.T) {
	obj := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	for _, c := range []struct {
		name   string
		tool   map[string]any
		why    string // "" when kept
		schema string
	}{
		{"plain", map[string]any{"name": "search", "description": "d", "inputSchema": obj}, "", `{"properties":{"q":{"type":"string"}},"type":"object"}`},
		{"no schema", map[string]any{"name": "ping"}, "", `{"type":"object"}`},
		{"schema as JSON text", map[string]any{"name": "s", "inputSchema": `{"type":"object"}`}, "", `{"type":"object"}`},
		{"no name", map[string]any{"description": "d"}, "a tool has no name", ""},
		{"blank name", map[string]any{"name": "  "}, "a tool has no name", ""},
		{"long name", map[string]any{"name": strings.Repeat("n", MaxWebMCPNameLen+1)}, "its name is 257 bytes", ""},
		{"string schema", map[string]any{"name": "s", "inputSchema": map[string]any{"type": "string"}}, "not an object schema", ""},
		{"array schema", map[string]any{"name": "s", "inputSchema": []any{1.0}}, "not a JSON object", ""},
		{"bad properties", map[string]any{"name": "s", "inputSchema": map[string]any{"type": "object", "properties": "x"}}, "properties is not an object", ""},
		{"huge schema", map[string]any{"name": "s", "inputSchema": map[string]any{"type": "object", "description": strings.Repeat("x", MaxWebMCPSchema)}}, "(at most 16384)", ""},
		{"huge schema text", map[string]any{"name": "s", "inputSchema": strings.Repeat(" ", MaxWebMCPSchema+1)}, "(at most 16384)", ""},
		{"bad schema text", map[string]any{"name": "s", "inputSchema": "{"}, "not JSON", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tool, why := parseWebMCPTool(c.tool)
			if c.why == "" {
				if why != "" || string(tool.InputSchema) != c.schema {
					t.Fatalf("refused (%q) or schema %s, want kept with %s", why, tool.InputSchema, c.schema)
				}
				return
			}
			if !strings.Contains(why, c.why) {
				t.Fatalf("why %q, want %q", why, c.why)
			}
			if len(why) > 200 {
				t.Fatalf("the reason quotes the page at length: %d bytes", len(why))
			}
		})
	}
	tool, why := parseWebMCPTool(map[string]any{"name": "d", "description": strings.Repeat("é", 3*MaxWebMCPDescription), "annotations": map[string]any{"readOnly": true}})
	if why != "" || utf8.RuneCountInString(tool.Description) != MaxWebMCPDescription+1 || !strings.HasSuffix(tool.Description, "…") || !tool.ReadOnly {
		t.Fatalf("description %d runes, readOnly %v (%q)", utf8.RuneCountInString(tool.Description), tool.ReadOnly, why)
	}
}
