package tools

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// WriteReference writes the tools reference (docs/tools-reference.md):
// every tool of every group, with its description and arguments, rendered
// from the input schemas the server registers. TestReferenceIsCurrent keeps
// the file in step with them.
func WriteReference(w io.Writer) error {
	byCap := map[string][]*Tool{}
	for _, t := range All() {
		byCap[t.Cap] = append(byCap[t.Cap], t)
	}
	caps := make([]string, 0, len(byCap))
	for c := range byCap {
		caps = append(caps, c)
	}
	sort.Slice(caps, func(i, j int) bool {
		return capOrder(caps[i]) < capOrder(caps[j]) || capOrder(caps[i]) == capOrder(caps[j]) && caps[i] < caps[j]
	})

	var b strings.Builder
	b.WriteString("# Tools reference\n\n")
	b.WriteString("Generated from the input schemas the server registers (`go test ./tools -run TestReferenceIsCurrent -update`);\n")
	b.WriteString("do not edit by hand. `core` and `local` tools are always listed; the others with `--caps <group>`.\n")
	b.WriteString("An element's `target` is a ref from the last snapshot (`e12`) or a selector; see [tools.md](tools.md).\n")
	for _, c := range caps {
		fmt.Fprintf(&b, "\n## %s\n", capTitle(c))
		for _, t := range byCap[c] {
			if err := writeTool(&b, t); err != nil {
				return fmt.Errorf("%s: %w", t.Def.Name, err)
			}
		}
	}
	// A group without tools of its own: what a page registers.
	b.WriteString("\n## webmcp (`--caps webmcp`)\n\n")
	b.WriteString("No tools of its own: the tools the current tab's page registers through WebMCP are listed as `" + WebMCPPrefix + "<name>`\n")
	fmt.Fprintf(&b, "while the page offers them (at most %d; input schemas and descriptions are the page's); see\n", page.MaxWebMCPTools)
	b.WriteString("[WebMCP page tools](tools.md#webmcp-page-tools).\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func capOrder(c string) int {
	switch c {
	case "core":
		return 0
	case "local":
		return 1
	}
	return 2
}

func capTitle(c string) string {
	switch c {
	case "core":
		return "core (always on; upstream's core tools)"
	case "local":
		return "local (always on; this server's own)"
	}
	return fmt.Sprintf("%s (`--caps %s`)", c, c)
}

// refSchema is the part of a JSON schema the reference shows.
type refSchema struct {
	Type        any                  `json:"type"`
	Description string               `json:"description"`
	Enum        []any                `json:"enum"`
	Items       *refSchema           `json:"items"`
	Properties  map[string]refSchema `json:"properties"`
	Required    []string             `json:"required"`
	AnyOf       []refSchema          `json:"anyOf"`
	OneOf       []refSchema          `json:"oneOf"`
}

func writeTool(b *strings.Builder, t *Tool) error {
	raw := t.Def.RawInputSchema
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(t.Def.InputSchema); err != nil {
			return err
		}
	}
	var s refSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	fmt.Fprintf(b, "\n### `%s`\n\n%s\n", t.Def.Name, oneParagraph(t.Def.Description))
	if len(s.Properties) == 0 {
		b.WriteString("\nNo arguments: call it with `{}`.\n")
		return nil
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if required[names[i]] != required[names[j]] {
			return required[names[i]]
		}
		return names[i] < names[j]
	})
	b.WriteString("\n| argument | type | required | description |\n|---|---|---|---|\n")
	for _, n := range names {
		p := s.Properties[n]
		req := ""
		if required[n] {
			req = "yes"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", n, typeOf(p), req, cell(p.Description))
	}
	if len(t.Aliases) > 0 {
		old := make([]string, 0, len(t.Aliases))
		for a, to := range t.Aliases {
			old = append(old, fmt.Sprintf("`%s` for `%s`", a, to))
		}
		sort.Strings(old)
		fmt.Fprintf(b, "\nAlso accepted: %s.\n", strings.Join(old, ", "))
	}
	return nil
}

// typeOf is a schema's type in a few words: "string", "number",
// "array of string", "one of: a, b".
func typeOf(p refSchema) string {
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			vals[i] = fmt.Sprintf("`%v`", v)
		}
		return "one of " + strings.Join(vals, ", ")
	}
	if alts := append(p.AnyOf, p.OneOf...); len(alts) > 0 {
		names := make([]string, len(alts))
		for i, a := range alts {
			names[i] = typeOf(a)
		}
		return strings.Join(names, " or ")
	}
	var typ string
	switch v := p.Type.(type) {
	case string:
		typ = v
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		typ = strings.Join(parts, " or ")
	default:
		typ = "any"
	}
	if typ == "array" && p.Items != nil {
		return "array of " + typeOf(*p.Items)
	}
	if typ == "object" && len(p.Properties) > 0 {
		keys := make([]string, 0, len(p.Properties))
		for k := range p.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "object (" + strings.Join(keys, ", ") + ")"
	}
	return typ
}

func oneParagraph(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cell makes s fit one Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneParagraph(s), "|", `\|`)
}
