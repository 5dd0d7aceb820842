package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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

// optDef builds the definition of a tool this server adds (or an upstream
// opt-in tool whose schema is not in the embedded 0.0.83 file): a strict
// object schema, with upstream's annotation conventions.
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

// readPath resolves a file an agent names for the server to read (a storage
// state): a relative name is taken in the output directory, an absolute one
// must lie under the allowed roots (inputPath).
func (env *Env) readPath(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("filename is empty")
	}
	if filepath.IsAbs(name) {
		return env.inputPath(name)
	}
	dir, err := filepath.Abs(env.OutputDir)
	if err != nil {
		return "", err
	}
	p := filepath.Clean(filepath.Join(dir, name))
	if !env.AllowUnrestrictedFileAccess {
		if !within(dir, p) {
			return "", fmt.Errorf("file %q is outside the output directory %s", name, dir)
		}
		// A symlink in the output directory must not lead out of it.
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", fmt.Errorf("file %q: %v", name, err)
		}
		realDir, err := filepath.EvalSymlinks(dir)
		if err != nil {
			realDir = dir
		}
		if !within(realDir, real) {
			return "", fmt.Errorf("file %q is outside the output directory %s", name, dir)
		}
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("file %q: %v", name, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%q is not a regular file", name)
	}
	return p, nil
}
