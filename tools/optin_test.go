package tools

import (
	"encoding/json"
	"testing"
)

// TestOptInTools checks every tool behind --caps: a strict schema that
// parses, requirements that exist, upstream's annotation conventions, and no
// name clash with the core.
func TestOptInTools(t *testing.T) {
	caps := map[string]int{}
	seen := map[string]bool{}
	for _, tool := range All() {
		if seen[tool.Def.Name] {
			t.Errorf("%s defined twice", tool.Def.Name)
		}
		seen[tool.Def.Name] = true
		if tool.Cap == "core" || tool.Cap == "local" {
			continue
		}
		caps[tool.Cap]++
		sc, err := parseSchema(tool.Def.RawInputSchema)
		if err != nil {
			t.Errorf("%s: schema: %v", tool.Def.Name, err)
			continue
		}
		if sc.AdditionalProperties != false {
			t.Errorf("%s: schema accepts unknown arguments", tool.Def.Name)
		}
		for _, r := range sc.Required {
			if sc.Properties[r] == nil {
				t.Errorf("%s: required %q is not a property", tool.Def.Name, r)
			}
		}
		for alias, target := range tool.Aliases {
			if sc.Properties[target] == nil {
				t.Errorf("%s: alias %s → %s, which is not a property", tool.Def.Name, alias, target)
			}
		}
		a := tool.Def.Annotations
		if a.Title == "" || a.ReadOnlyHint == nil || a.DestructiveHint == nil || tool.Def.Description == "" {
			t.Errorf("%s: title, description and hints must be set", tool.Def.Name)
		}
		var m map[string]any
		if err := json.Unmarshal(tool.Def.RawInputSchema, &m); err != nil || m["type"] != "object" {
			t.Errorf("%s: schema must be an object", tool.Def.Name)
		}
	}
	// Upstream's group sizes, where this server has the whole group.
	for c, n := range map[string]int{"storage": 17, "network": 4, "testing": 5, "pdf": 1} {
		if caps[c] != n {
			t.Errorf("--caps %s has %d tools, upstream %d", c, caps[c], n)
		}
	}
	t.Logf("opt-in tools per cap: %v", caps)
}
