package smoke

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRejectsBadInput(t *testing.T) {
	env := map[string]bool{"HOME_URL": true}
	defined := func(n string) bool { return env[n] }
	cases := []struct {
		name, yaml string
		want       []string // substrings of the error, the first being file:line
	}{
		{"unknown top-level key", "name: x\nstepz: []\n", []string{"t.yaml:2:", "unknown field \"stepz\""}},
		{"unknown expect key", "steps:\n  - tool: browser_snapshot\n    expect: {containz: [a]}\n", []string{"t.yaml:3:", "containz"}},
		{"wrong type", "steps:\n  - tool: browser_snapshot\n    expect: {max_ms: soon}\n", []string{"t.yaml:3:", "max_ms"}},
		{"contains not a list", "steps:\n  - tool: browser_snapshot\n    expect: {contains: {a: b}}\n", []string{"t.yaml:3:"}},
		{"no steps", "name: empty\n", []string{"no steps"}},
		{"missing tool", "steps:\n  - args: {url: x}\n", []string{"t.yaml:2:", "step 1: tool is missing"}},
		{"bad tool name", "steps:\n  - tool: \"browser navigate\"\n", []string{"t.yaml:2:", "step 1: tool"}},
		{"invalid regexp", "steps:\n  - tool: browser_snapshot\n  - tool: browser_snapshot\n    expect:\n      matches: [\"Items (\\\\d+\"]\n", []string{"t.yaml:5:", "step 2: expect.matches[0]: invalid regular expression", "missing closing )"}},
		{"invalid save regexp", "steps:\n  - tool: browser_snapshot\n    save: {N: \"[a\"}\n", []string{"t.yaml:3:", "step 1: save.N: invalid regular expression"}},
		{"bad save name", "steps:\n  - tool: browser_snapshot\n    save: {\"a-b\": x}\n", []string{"t.yaml:3:", "not a variable name"}},
		{"target without role", "steps:\n  - tool: browser_click\n    args: {target: {name: Save}}\n", []string{"t.yaml:3:", "step 1: args.target: role is missing"}},
		{"target unknown key", "steps:\n  - tool: browser_click\n    args: {target: {role: button, label: Save}}\n", []string{"t.yaml:3:", "unknown key \"label\""}},
		{"target wrong type", "steps:\n  - tool: browser_click\n    args: {target: 12}\n", []string{"t.yaml:3:", "args.target: must be a ref"}},
		{"snapshot_has without role", "steps:\n  - tool: browser_snapshot\n    expect: {snapshot_has: [{name: x}]}\n", []string{"t.yaml:3:", "snapshot_has[0]: role is missing"}},
		{"undefined variable", "steps:\n  - tool: browser_snapshot\n  - tool: browser_navigate\n    args: {url: \"${NOPE}/x\"}\n", []string{"t.yaml:4:", "step 2: args.url: ${NOPE} has no value"}},
		{"variable saved later", "steps:\n  - tool: browser_navigate\n    args: {url: \"${N}\"}\n  - tool: browser_snapshot\n    save: {N: x}\n", []string{"t.yaml:3:", "step 1: args.url: ${N} has no value"}},
		{"syntax error", "steps:\n  - tool: [\n", []string{"t.yaml:"}},
		{"field target without role", "steps:\n  - tool: browser_fill_form\n    args: {fields: [{target: {name: User}, type: textbox, value: a}]}\n", []string{"t.yaml:3:", "step 1: args.fields[0].target: role is missing"}},
		{"end target wrong type", "steps:\n  - tool: browser_drag\n    args: {startTarget: \"#a\", endTarget: 3}\n", []string{"t.yaml:3:", "step 1: args.endTarget: must be a ref"}},
		{"undefined variable in url", "steps:\n  - tool: browser_navigate\n    args: {url: x}\n    expect: {url: \"${NOPE}/x\"}\n", []string{"t.yaml:4:", "step 1: expect.url: ${NOPE} has no value"}},
		{"title not a string", "steps:\n  - tool: browser_snapshot\n    expect: {title: [a]}\n", []string{"t.yaml:3:"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("t.yaml", []byte(tc.yaml))
			if err == nil {
				err = sc.CheckVars(defined)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseAcceptsTheDocumentedFormat(t *testing.T) {
	src := `
name: todo
env: {BASE: "http://127.0.0.1:8080"}
server: {args: ["--caps", "storage"]}
steps:
  - tool: browser_navigate
    args: {url: "${BASE}/todo"}
    expect: {contains: ["Todo"]}
  - tool: browser_type
    args: {target: {role: textbox, name: "New item", nth: 1}, text: "milk", submit: true}
  - tool: browser_snapshot
    expect:
      contains: ["milk"]
      not_contains: ["Error"]
      matches: ["Items \\d+"]
      snapshot_has: [{role: listitem, name: "milk"}]
      is_error: false
      max_ms: 5000
    save: {COUNT: "Items (\\d+)"}
  - tool: browser_evaluate
    args: {function: "() => ${COUNT}"}
`
	sc, err := Parse("todo.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.CheckVars(func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if sc.Name != "todo" || len(sc.Steps) != 4 || sc.Server.Args[1] != "storage" {
		t.Fatalf("parsed %+v", sc)
	}
	if l := sc.Steps[1].Line; l != 9 {
		t.Errorf("step 2 line = %d, want 9", l)
	}
	want, err := targetArg(sc.Steps[1].Args["target"])
	if err != nil || *want != (RoleName{Role: "textbox", Name: "New item", Nth: 1}) {
		t.Errorf("target = %+v, %v", want, err)
	}
	if got := sc.Steps[2].Expect; got.MaxMS != 5000 || got.SnapshotHas[0].Name != "milk" || got.Matches[0] != `Items \d+` {
		t.Errorf("expect = %+v", got)
	}

	// JSON is accepted too.
	js, err := Parse("t.json", []byte(`{"name":"j","steps":[{"tool":"browser_snapshot","expect":{"contains":["a"]}}]}`))
	if err != nil || js.Steps[0].Expect.Contains[0] != "a" {
		t.Fatalf("json: %+v, %v", js, err)
	}
}

func TestFindResolvesRoleAndName(t *testing.T) {
	resp := "### Page\n- Page URL: x\n### Snapshot\n```yaml\n" + `- generic [ref=e1]:
  - heading "Todo" [level=1] [ref=e2]
  - textbox "New item" [ref=e3]
  - button "Add" [ref=e4]
  - list "Items" [ref=e5]:
    - listitem [ref=e6]: milk
    - listitem [ref=e7]: milk shake
` + "```\n"
	els := elements(resp)
	cases := []struct {
		want RoleName
		ref  string
	}{
		{RoleName{Role: "textbox", Name: "New item"}, "e3"},
		{RoleName{Role: "TextBox", Name: "new"}, "e3"},           // any case, substring when nothing is equal
		{RoleName{Role: "listitem", Name: "milk"}, "e6"},         // equal wins over substring
		{RoleName{Role: "listitem", Name: "MILK", Nth: 1}, "e7"}, // substring matches, nth
		{RoleName{Role: "listitem"}, "e6"},                       // no name: the first of the role
		{RoleName{Role: "button", Name: "Remove"}, ""},           // none
		{RoleName{Role: "listitem", Name: "milk", Nth: 1}, ""},   // only one equal
		{RoleName{Role: "heading", Name: "Todo", Nth: 0}, "e2"},  // named element
	}
	for _, tc := range cases {
		e, ok := find(els, tc.want)
		if got := map[bool]string{true: e.ref}[ok]; got != tc.ref {
			t.Errorf("find(%s) = %q, want %q", tc.want, got, tc.ref)
		}
	}
	msg := closest(els, RoleName{Role: "button", Name: "Ad"}, 3)
	if !strings.HasPrefix(msg, `closest: button "Add"`) {
		t.Errorf("closest = %q", msg)
	}

	diff := "### Snapshot\n- Changes (+ added, - removed; full page: browser_snapshot):\n```diff\n" +
		"  - list \"Items\" [ref=e5]:\n-   - listitem [ref=e6]: milk\n+   - listitem [ref=e8] [new]: eggs\n```\n"
	if _, ok := find(elements(diff), RoleName{Role: "listitem", Name: "eggs"}); !ok {
		t.Error("an added line of a diff is not found")
	}
	if _, ok := find(elements(diff), RoleName{Role: "listitem", Name: "milk"}); ok {
		t.Error("a removed line of a diff is found")
	}
	compact := "### Snapshot\n- Changes:\n```diff\nin main > list \"Items\" [ref=e5]:\n- listitem: milk\n" +
		"+ listitem [ref=e8] [new]: checkbox \"eggs\" [ref=e9]\n+ button \"Clear\" [ref=e10] [new]\n```\n"
	for _, want := range []RoleName{{Role: "listitem"}, {Role: "checkbox", Name: "eggs"}, {Role: "button", Name: "Clear"}} {
		if e, ok := find(elements(compact), want); !ok || e.ref == "" {
			t.Errorf("%s of a compact diff is not found: %v", want, elements(compact))
		}
	}
	if _, ok := find(elements(compact), RoleName{Role: "list"}); ok {
		t.Error("a compact diff's path line is found as an element")
	}
}
