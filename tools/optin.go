package tools

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// props is the properties object of an input schema.
type props map[string]any

// Descriptions shared with upstream's element tools.
var (
	targetProp  = map[string]any{"type": "string", "description": "Exact target element reference from the page snapshot, or a unique element selector"}
	elementProp = map[string]any{"type": "string", "description": "Human-readable element description used to obtain permission to interact with the element"}
)

func pStr(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func pNum(desc string) map[string]any { return map[string]any{"type": "number", "description": desc} }
func pBool(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}
func pEnum(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}
func pStrings(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

// optDef builds the definition of a tool this server adds (upstream's own
// tools use upstreamDef): a strict object schema, with upstream's
// annotation conventions.
func optDef(name, title, desc string, readOnly bool, p props, required ...string) mcp.Tool {
	s := map[string]any{"type": "object", "properties": map[string]any(p), "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("schema of %s: %v", name, err)) // static data
	}
	destructive := !readOnly
	return mcp.Tool{
		Name:           name,
		Description:    desc,
		RawInputSchema: raw,
		Annotations: mcp.ToolAnnotation{
			Title:           title,
			ReadOnlyHint:    &readOnly,
			DestructiveHint: &destructive,
			OpenWorldHint:   boolPtr(true),
		},
	}
}

func boolPtr(b bool) *bool { return &b }
