package codegen_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// selectors are what Playwright resolves elements to (generateSelectorSimple)
// and what agents pass as targets.
var selectors = []string{
	`internal:role=button[name="Save"i]`,
	`internal:role=button[name="Save"s]`,
	`internal:role=heading[level=1][name="It's \"here\""i]`,
	`internal:role=checkbox[checked=true][name="Accept"i]`,
	`internal:role=checkbox[checked=mixed]`,
	`internal:role=textbox[name="Name"i]`,
	`internal:role=link[name=/^Home$/i]`,
	`internal:role=menuitem[description="More"i]`,
	`internal:role=button[include-hidden=true][name="X"i]`,
	`internal:role=checkbox`,
	`internal:testid=[data-testid="save-btn"s]`,
	`internal:testid=[data-testid=/save/]`,
	`internal:label="Email"i`,
	`internal:label="Email"s`,
	`internal:text="Hello"s`,
	`internal:text="Hello"i`,
	`internal:text=/hel+o/i`,
	`internal:attr=[placeholder="Search"i]`,
	`internal:attr=[alt="Logo"s]`,
	`internal:attr=[title="Tip"i]`,
	`internal:attr=[data-x="y"i]`,
	`#main >> internal:role=link[name="Home"i] >> nth=1`,
	`iframe >> internal:control=enter-frame >> css=button`,
	`iframe[name="a"] >> internal:control=enter-frame >> internal:role=button[name="Frame button"i]`,
	`internal:role=listitem >> internal:has-text="Apple"i`,
	`div >> internal:has-text="Apple"i`,
	`div >> internal:has-not-text="Pear"i`,
	`div >> internal:has-text="Exact"s`,
	`internal:role=row >> nth=0`,
	`internal:role=row >> nth=-1`,
	`li >> visible=true`,
	`li >> visible=false`,
	`li >> internal:has="internal:role=button[name=\"Go\"i]"`,
	`li >> internal:has-not="span"`,
	`button >> internal:and="internal:text=\"Ok\"i"`,
	`button >> internal:or="a"`,
	`div >> internal:chain="span"`,
	`#save`,
	`button.primary:nth-child(2)`,
	`xpath=//div[@id="x"]`,
	`//div`,
	`text=Sign in`,
	`internal:role=button[name="a\\b\nc"i]`,
	`internal:role=button[name="say 'hi' \"there\""i]`,
	`internal:control=any-frame >> button`,
	`internal:role=button[name="Save"i] >> internal:describe="Save button"`,
}

var langs = []codegen.Language{codegen.TypeScript, codegen.Python, codegen.Java, codegen.CSharp}

func TestAsLocatorKnown(t *testing.T) {
	cases := []struct {
		lang      codegen.Language
		sel, want string
	}{
		{codegen.TypeScript, `internal:role=button[name="Save"i]`, `getByRole('button', { name: 'Save' })`},
		{codegen.Python, `internal:role=button[name="Save"i]`, `get_by_role("button", name="Save")`},
		{codegen.Java, `internal:role=button[name="Save"i]`, `getByRole(AriaRole.BUTTON, new Page.GetByRoleOptions().setName("Save"))`},
		{codegen.CSharp, `internal:role=button[name="Save"i]`, `GetByRole(AriaRole.Button, new() { Name = "Save" })`},
		{codegen.TypeScript, `iframe >> internal:control=enter-frame >> css=button`, `locator('iframe').contentFrame().locator('button')`},
		{codegen.Python, `internal:label="Email"s`, `get_by_label("Email", exact=True)`},
	}
	for _, c := range cases {
		if got := codegen.AsLocator(c.lang, c.sel); got != c.want {
			t.Errorf("AsLocator(%s, %s)\n got %s\nwant %s", c.lang, c.sel, got, c.want)
		}
	}
}

// TestAsLocatorMatchesPlaywright compares every selector in every language
// with Playwright's own asLocator (from @playwright/mcp 0.0.83's
// playwright-core, run by node), as recorded in
// testdata/upstream/aslocator.json (re-recorded by the upstream task).
func TestAsLocatorMatchesPlaywright(t *testing.T) {
	type recording struct {
		Selectors []string            `json:"selectors"`
		Locators  map[string][]string `json:"locators"` // language → one per selector
	}
	raw := mcptest.Recorded(t, "aslocator.json", func() string {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Fatal("node not found: install Node.js 20 (Debian: apt-get install nodejs npm)")
		}
		log := &mcptest.SyncBuffer{}
		cli, err := mcptest.InstallUpstream(context.Background(), "", mcptest.UpstreamDir(), log)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		bundle := filepath.Join(filepath.Dir(cli), "..", "..", "playwright-core", "lib", "coreBundle.js")
		in, _ := json.Marshal(selectors)
		script := `const iso = require(process.argv[1]).iso; const sels = JSON.parse(process.argv[2]); const out = {};
for (const l of ["javascript", "python", "java", "csharp"]) out[l] = sels.map(s => iso.asLocator(l, s));
process.stdout.write(JSON.stringify(out));`
		b, err := exec.Command(node, "-e", script, bundle, string(in)).Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		rec := recording{Selectors: selectors}
		if err := json.Unmarshal(b, &rec.Locators); err != nil {
			t.Fatal(err)
		}
		out, _ := json.MarshalIndent(rec, "", "  ")
		return string(out) + "\n"
	})
	var rec recording
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		t.Fatalf("testdata/upstream/aslocator.json: %v", err)
	}
	if !slices.Equal(rec.Selectors, selectors) {
		t.Fatal("the selectors changed since upstream's output was recorded: go tool -modfile=tools.mod task upstream")
	}
	for _, l := range langs {
		key := string(l)
		if l == codegen.TypeScript {
			key = "javascript"
		}
		for i, sel := range selectors {
			if got := codegen.AsLocator(l, sel); got != rec.Locators[key][i] {
				t.Errorf("%s %s\n got %s\nwant %s", l, strings.ReplaceAll(sel, "\n", `\n`), got, rec.Locators[key][i])
			}
		}
	}
}
