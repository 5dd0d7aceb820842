package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
)

// smoke writes the plan as a pkg/smoke scenario. Values are JSON (which is
// YAML), one expectation a line, so `smoke --update` can rewrite a line.
func (p *plan) smoke() []byte {
	var b bytes.Buffer
	p.header(&b, "#")
	fmt.Fprintf(&b, "# Replay: cloakbrowser-mcp smoke --junit junit.xml FILE (BASE=… to run against another origin)\n")
	fmt.Fprintf(&b, "name: %s\n", Flow(p.o.Name))
	if p.base != "" {
		fmt.Fprintf(&b, "env: {\"BASE\": %s}\n", Flow(p.base))
	}
	b.WriteString("steps:\n")
	for _, s := range p.steps {
		fmt.Fprintf(&b, "  - name: %s # step %d of the session\n", Flow(p.baseVars(stepName(s))), s.N)
		for _, t := range append([]*Target{s.Target, s.EndTarget}, s.Fields...) {
			if t != nil && t.Count > 1 && t.Role != "" {
				fmt.Fprintf(&b, "    # %d elements are %s %q: nth %d is the one the agent used\n", t.Count, t.Role, t.Name, t.Nth)
			}
		}
		fmt.Fprintf(&b, "    tool: %s\n", s.Tool)
		if args := p.smokeArgs(s); len(args) > 0 {
			fmt.Fprintf(&b, "    args: %s\n", Flow(args))
		}
		e := p.expect(s)
		var lines []string
		if e.url != "" {
			lines = append(lines, "url: "+Flow(p.varURL(e.url)))
		}
		if e.title != "" {
			lines = append(lines, "title: "+Flow(e.title))
		}
		if len(e.texts) > 0 {
			lines = append(lines, "text: "+Flow(e.texts))
		}
		if len(e.has) > 0 {
			var has []map[string]any
			for _, h := range e.has {
				has = append(has, map[string]any{"role": h.Role, "name": h.Label})
			}
			lines = append(lines, "snapshot_has: "+Flow(has))
		}
		if len(lines) > 0 {
			b.WriteString("    expect:\n")
			for _, l := range lines {
				b.WriteString("      " + l + "\n")
			}
		}
	}
	return b.Bytes()
}

// header writes the file's first comment lines.
func (p *plan) header(b *bytes.Buffer, c string) {
	src := p.o.Source
	if src == "" {
		src = "a recorded session"
	}
	fmt.Fprintf(b, "%s Exported by cloakbrowser-mcp from %s: %d of %d recorded steps.\n", c, src, len(p.steps), p.total)
	if len(p.skipped) > 0 {
		var ns []string
		for _, n := range p.skipped {
			ns = append(ns, fmt.Sprint(n))
		}
		fmt.Fprintf(b, "%s Left out: step %s (the call failed).\n", c, strings.Join(ns, ", "))
	}
	if names := p.secretsUsed(); len(names) > 0 {
		fmt.Fprintf(b, "%s Reads from the environment: %s (secrets: their values are never written here).\n", c, strings.Join(names, ", "))
	}
}

// secretsUsed are the ${NAME}s of the exported steps other than BASE.
func (p *plan) secretsUsed() []string {
	seen := map[string]bool{}
	for _, s := range p.steps {
		b, _ := json.Marshal(s.Args)
		for _, m := range varRef.FindAllStringSubmatch(string(b), -1) {
			if m[1] != "BASE" {
				seen[m[1]] = true
			}
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// smokeArgs are the step's arguments with its targets as the smoke runner
// resolves them: {role, name[, nth]} when the element had a name, else the
// selector.
func (p *plan) smokeArgs(s Step) map[string]any {
	args := map[string]any{}
	for k, v := range s.Args {
		args[k] = MapStrings(v, p.varURL)
	}
	if s.Target != nil {
		key := "target"
		if s.Tool == "browser_drag" {
			key = "startTarget"
		}
		args[key] = smokeTarget(s.Target)
	}
	if s.EndTarget != nil {
		args["endTarget"] = smokeTarget(s.EndTarget)
	}
	if fs, ok := args["fields"].([]any); ok {
		for i, f := range fs {
			m, ok := f.(map[string]any)
			if ok && i < len(s.Fields) && s.Fields[i] != nil {
				m = maps.Clone(m)
				m["target"] = smokeTarget(s.Fields[i])
				fs[i] = m
			}
		}
	}
	return args
}

func smokeTarget(t *Target) any {
	if t.Role != "" && (t.Name != "" || !t.selectorOK()) {
		m := map[string]any{"role": t.Role}
		if t.Name != "" {
			m["name"] = t.Name
		}
		if t.Nth > 0 {
			m["nth"] = t.Nth
		}
		return m
	}
	return t.Selector
}

// baseVars writes every URL under the base in s as ${BASE}….
func (p *plan) baseVars(s string) string {
	if p.base == "" {
		return s
	}
	return strings.ReplaceAll(s, p.base, "${BASE}")
}

// varURL writes a URL under the base as ${BASE}….
func (p *plan) varURL(u string) string {
	if rest, ok := p.baseURL(u); ok {
		return "${BASE}" + rest
	}
	return u
}

// MapStrings returns v (a JSON value: strings, maps, slices) with f
// applied to every string in it; maps and slices are copies.
func MapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = MapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = MapStrings(e, f)
		}
		return out
	}
	return v
}

// Flow is v as JSON without HTML escaping: a one-line YAML flow value, as
// scenarios are written (and smoke --update rewrites them).
func Flow(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
