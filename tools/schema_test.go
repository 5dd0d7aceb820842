package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// TestUpstreamSchemasOnTheWire checks that every tool with an upstream
// counterpart lists exactly upstream's name, description and input schema.
func TestUpstreamSchemasOnTheWire(t *testing.T) {
	for _, tool := range All() {
		u, ok := upstream[tool.Def.Name]
		if !ok {
			continue
		}
		b, err := json.Marshal(tool.Def)
		if err != nil {
			t.Fatal(err)
		}
		var wire struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(b, &wire); err != nil {
			t.Fatal(err)
		}
		if wire.Description != u.Description {
			t.Errorf("%s description differs", tool.Def.Name)
		}
		if extended[tool.Def.Name] {
			// Upstream's properties, required list and strictness stay as
			// they are; this server only adds properties.
			var got, want map[string]any
			json.Unmarshal(wire.InputSchema, &got)
			json.Unmarshal(withoutDialect(u.InputSchema), &want)
			gp, wp := got["properties"].(map[string]any), want["properties"].(map[string]any)
			for k, v := range wp {
				if canonV(t, gp[k]) != canonV(t, v) {
					t.Errorf("%s: upstream property %s changed", tool.Def.Name, k)
				}
			}
			if canonV(t, got["required"]) != canonV(t, want["required"]) || got["additionalProperties"] != want["additionalProperties"] {
				t.Errorf("%s: required or additionalProperties changed", tool.Def.Name)
			}
			continue
		}
		if canon(t, wire.InputSchema) != canon(t, withoutDialect(u.InputSchema)) {
			t.Errorf("%s schema on the wire differs:\n got %s\nwant %s", tool.Def.Name, wire.InputSchema, u.InputSchema)
		}
	}
}

// TestDefaultToolList checks the default surface: upstream's 25 core tools
// plus the two local ones, and a tools/list no larger than upstream's.
func TestDefaultToolList(t *testing.T) {
	var defs, up []any
	names := map[string]bool{}
	for _, tool := range Enabled(nil) {
		defs = append(defs, tool.Def)
		names[tool.Def.Name] = true
	}
	for _, u := range upstream {
		if !names[u.Name] {
			t.Errorf("upstream tool %s missing from the default list", u.Name)
		}
		up = append(up, u)
	}
	if len(defs) != len(upstream)+2 {
		t.Errorf("default list has %d tools, want %d", len(defs), len(upstream)+2)
	}
	ours, _ := json.Marshal(map[string]any{"tools": defs})
	theirs, _ := json.Marshal(map[string]any{"tools": up})
	t.Logf("tools/list: ours %d chars, upstream %d", len(ours), len(theirs))
	if len(ours) > len(theirs) {
		t.Errorf("default tools/list is %d chars, upstream's %d", len(ours), len(theirs))
	}
}

// extended lists the upstream tools this server adds properties to.
var extended = map[string]bool{"browser_snapshot": true, "browser_navigate": true}

func canonV(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func canon(t *testing.T, b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestValidateArgs(t *testing.T) {
	click := mustSchema(t, "browser_click")
	fill := mustSchema(t, "browser_fill_form")
	media := mustSchema(t, "browser_emulate_media")
	netreq := mustSchema(t, "browser_network_request")
	cases := []struct {
		name    string
		s       *schema
		args    map[string]any
		aliases map[string]string
		want    string // "" means valid
	}{
		{"ok", click, map[string]any{"target": "e1"}, nil, ""},
		{"alias satisfies required", click, map[string]any{"ref": "e1"}, refAlias, ""},
		{"alias without aliases", click, map[string]any{"ref": "e1"}, nil, `unknown argument "ref"`},
		{"missing required", click, map[string]any{}, nil, `missing required argument "target"`},
		{"wrong type", click, map[string]any{"target": true}, nil, `"target" must be string, got boolean`},
		{"bad enum", click, map[string]any{"target": "e1", "button": "x"}, nil, "must be one of left, right, middle"},
		{"bad array item", click, map[string]any{"target": "e1", "modifiers": []any{"Hyper"}}, nil, `"modifiers[0]" must be one of`},
		{"array not array", click, map[string]any{"target": "e1", "modifiers": "Shift"}, nil, "must be array"},
		{"unknown", click, map[string]any{"target": "e1", "x": 1}, nil, `unknown argument "x"`},
		{"nested object missing field", fill, map[string]any{"fields": []any{map[string]any{"target": "e1"}}}, nil, "is missing"},
		{"anyOf null ok", media, map[string]any{"colorScheme": nil}, nil, ""},
		{"anyOf bad", media, map[string]any{"colorScheme": "purple"}, nil, "must be one of"},
		{"integer", netreq, map[string]any{"index": 1.5}, nil, "must be integer"},
		{"minimum", netreq, map[string]any{"index": 0.0}, nil, "at least 1"},
		{"no arguments", mustSchema(t, "browser_close"), map[string]any{"foo": 1}, nil, `unknown argument "foo": this tool takes no arguments; call it with {}`},
		{"long unknown key", click, map[string]any{"target": "e1", strings.Repeat("k", 5000): 1}, nil, `unknown argument "` + strings.Repeat("k", 100) + `…" (5000 chars); accepted: `},
		{"long enum value", click, map[string]any{"target": "e1", "button": strings.Repeat("x", 1<<20)}, nil, `must be one of left, right, middle, got "` + strings.Repeat("x", 100) + `…" (1048576 chars)`},
		{"screenshot without scale", mustSchema(t, "browser_take_screenshot"), map[string]any{"type": "png"}, nil, ""},
		{"console without level", mustSchema(t, "browser_console_messages"), map[string]any{}, nil, ""},
		{"network without static", mustSchema(t, "browser_network_requests"), map[string]any{}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := validateArgs(tc.s, tc.args, tc.aliases)
			if err != nil && len(err.Error()) > 1000 {
				t.Fatalf("error of %d characters: %.300s", len(err.Error()), err)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func mustSchema(t *testing.T, name string) *schema {
	t.Helper()
	s, err := parseSchema(upstream[name].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckURL(t *testing.T) {
	cases := []struct {
		in, want, err string
		allowFile     bool
	}{
		{in: "example.com", want: "https://example.com"},
		{in: "localhost:8080/x", want: "http://localhost:8080/x"},
		{in: "http://127.0.0.1:1/", want: "http://127.0.0.1:1/"},
		{in: "about:blank", want: "about:blank"},
		{in: "  javascript:alert(1)", err: "javascript:"},
		{in: "JAVASCRIPT:alert(1)", err: "javascript:"},
		{in: "file:///etc/passwd", err: "file: URLs are blocked"},
		{in: "file:///tmp/x.html", want: "file:///tmp/x.html", allowFile: true},
		{in: "ftp://x.org", err: `"ftp": URLs are not allowed ("ftp://x.org"); this server navigates to http:, https:, about: and data:`},
		{in: "view-source:https://example.com", err: `"view-source": URLs are not allowed`},
		{in: "view-source:file:///etc/passwd", err: `"view-source": URLs are not allowed`},
		{in: "chrome://version", err: `"chrome": URLs are not allowed`},
		{in: "devtools://devtools/bundled/inspector.html", err: `"devtools": URLs are not allowed`},
		{in: "mailto:a@example.com", err: `"mailto": URLs are not allowed`},
		{in: "example.com:8443/x", want: "https://example.com:8443/x"},
		{in: "[::1]:9/", want: "http://[::1]:9/"},
		{in: "http://bücher.example/", want: "http://b%C3%BCcher.example/"},
		{in: "data:text/html,<p>hi</p>", want: "data:text/html,<p>hi</p>"},
		{in: strings.Repeat("A", 1<<20), err: `the host is 1048576 characters long; a hostname has at most 253`},
		{in: "https://" + strings.Repeat("a", 64) + ".com/", err: "a label of 64 characters"},
		{in: "https://exa$mple.com/", err: `contains '$'`},
		{in: "https://example.com/" + strings.Repeat("p", 3<<20), err: "the browser takes at most 2097152"},
		{in: "", err: "empty"},
		{in: "http://", err: "no host"},
	}
	for _, tc := range cases {
		t.Run(clip.Short(tc.in), func(t *testing.T) {
			got, err := checkURL(tc.in, tc.allowFile)
			if err != nil && len(err.Error()) > 400 {
				t.Fatalf("error of %d characters: %.300s", len(err.Error()), err)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
