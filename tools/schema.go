package tools

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// upstreamTool is one tool definition as @playwright/mcp lists it.
type upstreamTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations struct {
		Title           string `json:"title"`
		ReadOnlyHint    *bool  `json:"readOnlyHint"`
		DestructiveHint *bool  `json:"destructiveHint"`
		OpenWorldHint   *bool  `json:"openWorldHint"`
	} `json:"annotations"`
}

// upstream are upstream's 25 core tools (the reference file); upstreamOptIn
// the rest of what it lists with every --caps group enabled (a copy of
// testdata/upstream/tools-list-all-caps.json, which the upstream task
// re-records).
var (
	upstream      = loadUpstream("schemas/playwright-mcp-0.0.83.json", nil)
	upstreamOptIn = loadUpstream("schemas/playwright-mcp-0.0.83-all-caps.json", upstream)
)

// loadUpstream reads an embedded tools/list, leaving out the tools of skip.
func loadUpstream(name string, skip map[string]upstreamTool) map[string]upstreamTool {
	b, err := schemaFS.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	var doc struct {
		Tools []upstreamTool `json:"tools"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(fmt.Sprintf("embedded upstream schemas %s: %v", name, err))
	}
	m := make(map[string]upstreamTool, len(doc.Tools))
	for _, t := range doc.Tools {
		if _, ok := skip[t.Name]; !ok {
			m[t.Name] = t
		}
	}
	return m
}

// upstreamDef returns the MCP tool definition of an upstream tool (core or
// opt-in), with the exact schema upstream publishes.
func upstreamDef(name string) mcp.Tool {
	u, ok := upstream[name]
	if !ok {
		u, ok = upstreamOptIn[name]
	}
	if !ok {
		panic("no upstream schema for " + name)
	}
	return mcp.Tool{
		Name:           u.Name,
		Description:    u.Description,
		RawInputSchema: withoutDialect(u.InputSchema),
		Annotations: mcp.ToolAnnotation{
			Title:           u.Annotations.Title,
			ReadOnlyHint:    u.Annotations.ReadOnlyHint,
			DestructiveHint: u.Annotations.DestructiveHint,
			OpenWorldHint:   u.Annotations.OpenWorldHint,
		},
	}
}

// extendedDef is upstreamDef with properties this server adds; upstream's
// own properties, required list and strictness stay as they are.
func extendedDef(name string, add props) mcp.Tool {
	d := upstreamDef(name)
	var s map[string]any
	if err := json.Unmarshal(d.RawInputSchema, &s); err != nil {
		panic(fmt.Sprintf("schema of %s: %v", name, err)) // static data
	}
	p, _ := s["properties"].(map[string]any)
	if p == nil {
		p = map[string]any{}
		s["properties"] = p
	}
	for k, v := range add {
		if _, dup := p[k]; dup {
			panic(fmt.Sprintf("%s: upstream already has property %s", name, k))
		}
		p[k] = v
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("schema of %s: %v", name, err))
	}
	d.RawInputSchema = raw
	return d
}

// withoutDialect drops "$schema" from a schema. MCP's default dialect is
// JSON Schema 2020-12, the one upstream names 25 times; leaving it out keeps
// every name, type, requirement and description while shrinking tools/list
// by ~1.4k characters for every agent that loads it.
func withoutDialect(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return raw
	}
	if _, ok := m["$schema"]; !ok {
		return raw
	}
	delete(m, "$schema")
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// schema is the subset of JSON Schema our tools use, enough to check
// arguments and say precisely what is wrong.
type schema struct {
	Type                 any                `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	AnyOf                []*schema          `json:"anyOf"`
	AdditionalProperties any                `json:"additionalProperties"`
	Minimum              *float64           `json:"minimum"`
	Default              any                `json:"default"`
	Maximum              *float64           `json:"maximum"`
}

func parseSchema(raw json.RawMessage) (*schema, error) {
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *schema) types() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// validateArgs checks args against a tool's input schema. aliases maps an
// accepted extra name to the property it stands for (e.g. ref → target).
func validateArgs(s *schema, args map[string]any, aliases map[string]string) error {
	for k := range args {
		if _, ok := s.Properties[k]; ok {
			continue
		}
		if _, ok := aliases[k]; ok {
			continue
		}
		if s.AdditionalProperties == false {
			names := propNames(s, aliases)
			if len(names) == 0 {
				return fmt.Errorf("unknown argument %s: this tool takes no arguments; call it with {}", clip.Quote(k))
			}
			return fmt.Errorf("unknown argument %s; accepted: %s", clip.Quote(k), strings.Join(names, ", "))
		}
	}
	for _, r := range s.Required {
		if _, ok := args[r]; ok {
			continue
		}
		// Upstream marks defaulted properties required; its validator fills
		// the default in, so an omitted one is fine.
		if p := s.Properties[r]; p != nil && p.Default != nil {
			continue
		}
		found := false
		for alias, target := range aliases {
			if target == r {
				if _, ok := args[alias]; ok {
					found = true
				}
			}
		}
		if !found {
			return fmt.Errorf("missing required argument %q", r)
		}
	}
	for k, v := range args {
		p := s.Properties[k]
		if p == nil {
			if t, ok := aliases[k]; ok {
				p = s.Properties[t]
			}
		}
		if p == nil {
			continue
		}
		if err := checkValue(k, p, v); err != nil {
			return err
		}
	}
	return nil
}

func propNames(s *schema, aliases map[string]string) []string {
	var names []string
	for k := range s.Properties {
		names = append(names, k)
	}
	for k := range aliases {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func checkValue(path string, s *schema, v any) error {
	if len(s.AnyOf) > 0 {
		var first error
		for _, alt := range s.AnyOf {
			err := checkValue(path, alt, v)
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
		return first
	}
	if ts := s.types(); len(ts) > 0 {
		ok := false
		for _, t := range ts {
			if typeMatches(t, v) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("argument %q must be %s, got %s", path, strings.Join(ts, " or "), jsonType(v))
		}
	}
	if len(s.Enum) > 0 {
		ok := false
		for _, e := range s.Enum {
			if e == v {
				ok = true
				break
			}
		}
		if !ok {
			var opts []string
			for _, e := range s.Enum {
				opts = append(opts, fmt.Sprint(e))
			}
			return fmt.Errorf("argument %q must be one of %s, got %s", path, strings.Join(opts, ", "), quoteValue(v))
		}
	}
	if n, ok := v.(float64); ok {
		if s.Minimum != nil && n < *s.Minimum {
			return fmt.Errorf("argument %q must be at least %v, got %v", path, *s.Minimum, n)
		}
		if s.Maximum != nil && n > *s.Maximum {
			return fmt.Errorf("argument %q must be at most %v, got %v", path, *s.Maximum, n)
		}
	}
	switch x := v.(type) {
	case []any:
		if s.Items != nil {
			for i, item := range x {
				if err := checkValue(fmt.Sprintf("%s[%d]", path, i), s.Items, item); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		if s.Properties != nil {
			for _, r := range s.Required {
				if _, ok := x[r]; !ok {
					return fmt.Errorf("argument %q is missing %q", path, r)
				}
			}
		}
		if s.Properties != nil || s.AdditionalProperties != nil {
			for k, item := range x {
				p := s.Properties[k]
				if p == nil {
					if ap, ok := s.AdditionalProperties.(map[string]any); ok {
						if t, _ := ap["type"].(string); t != "" && !typeMatches(t, item) {
							return fmt.Errorf("argument %q field %s must be %s, got %s", path, clip.Quote(k), t, jsonType(item))
						}
						continue
					}
					if s.AdditionalProperties == false {
						return fmt.Errorf("argument %q has unknown field %s", path, clip.Quote(k))
					}
					continue
				}
				if err := checkValue(path+"."+k, p, item); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func typeMatches(t string, v any) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "null":
		return v == nil
	}
	return true
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// quoteValue is a JSON value as an error quotes it: strings through
// clip.Quote, anything else as its JSON, clipped the same way.
func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return clip.Quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return jsonType(v)
	}
	if len(b) > clip.Max {
		return clip.Quote(string(b))
	}
	return string(b)
}
