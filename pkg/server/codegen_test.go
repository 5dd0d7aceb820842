package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

var codeRE = regexp.MustCompile("(?s)### Ran Playwright code\n```(\\w+)\n(.*?)\n```")

// codeOf is the fence language and body of a response's "### Ran
// Playwright code" section ("" when there is none).
func codeOf(text string) (lang, code string) {
	m := codeRE.FindStringSubmatch(text)
	if m == nil {
		return "", ""
	}
	return m[1], m[2]
}

// nthRef is the ref of the n-th (from 0) snapshot line containing what.
func nthRef(t *testing.T, snap, what string, n int) string {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		if strings.Contains(line, what) {
			if m := refRE.FindStringSubmatch(line); m != nil {
				if n == 0 {
					return m[2]
				}
				n--
			}
		}
	}
	t.Fatalf("no ref for %q in snapshot:\n%s", what, snap)
	return ""
}

// codegenSteps are the actions compared with upstream, each naming its
// element by a snapshot line.
var codegenSteps = []struct {
	name, tool, line string
	nth              int
	args             map[string]any
}{
	{"click a button", "browser_click", `button "Save"`, 0, nil},
	{"type", "browser_type", `textbox "Name"`, 0, map[string]any{"text": "Ann"}},
	{"type slowly", "browser_type", `textbox "Name"`, 0, map[string]any{"text": "Bo", "slowly": true}},
	{"type and submit", "browser_type", `textbox "Search"`, 0, map[string]any{"text": "pears", "submit": true}},
	{"select", "browser_select_option", `combobox "Color"`, 0, map[string]any{"values": []any{"Green"}}},
	{"check a checkbox", "browser_click", `checkbox "Accept terms"`, 0, nil},
	{"hover a link with quotes", "browser_hover", `link "It's \"help\""`, 0, nil},
	{"click by test id", "browser_click", `button "Export"`, 0, nil},
	{"right click with a modifier on a duplicate", "browser_click", `button "Buy"`, 1, map[string]any{"button": "right", "modifiers": []any{"Shift"}}},
	{"press a key", "browser_press_key", "", 0, map[string]any{"key": "Tab"}},
}

// TestCodegenMatchesUpstream runs the same actions on the same page through
// us and, as recorded under testdata/upstream/codegen/ (re-recorded by the
// upstream task), through @playwright/mcp 0.0.83, in every --codegen
// language, and compares the "### Ran Playwright code" sections line for
// line.
func TestCodegenMatchesUpstream(t *testing.T) {
	srv := toolPages(t)
	page := srv.URL + "/codegen.html"
	for _, lang := range []string{"typescript", "python", "java", "csharp"} {
		t.Run(lang, func(t *testing.T) {
			// run performs navigate then every step, and returns each code
			// section (fence language and code) as a recording block.
			run := func(c *mcptest.Client) string {
				var b strings.Builder
				block := func(name, text string) {
					fence, code := codeOf(text)
					fmt.Fprintf(&b, "=== %s (%s)\n%s\n", name, fence, mcptest.NoPorts(code))
				}
				block("navigate", c.MustCall(t, "browser_navigate", map[string]any{"url": page}))
				snap := snapshotBody(t, c.MustCall(t, "browser_snapshot", map[string]any{}))
				for _, s := range codegenSteps {
					args := map[string]any{}
					for k, v := range s.args {
						args[k] = v
					}
					if s.line != "" {
						args["target"] = nthRef(t, snap, s.line, s.nth)
					}
					block(s.name, c.MustCall(t, s.tool, args))
				}
				return b.String()
			}
			want := mcptest.Recorded(t, "codegen/"+lang+".txt", func() string {
				return run(mcptest.StartUpstream(t, mcptest.Chromium(t), "--codegen", lang, "--viewport-size", "1280x720"))
			})
			// Both at upstream's default viewport (ours is a desktop window).
			ours, _ := inProcess(t, "--codegen", lang, "--viewport-size", "1280x720")
			got := run(ours)
			if got != want {
				t.Errorf("code sections differ from upstream's:\n--- ours\n%s\n--- upstream\n%s", got, want)
			}
			for _, blk := range strings.Split(got, "=== ")[1:] {
				if name, code, _ := strings.Cut(blk, "\n"); strings.TrimSpace(code) == "" {
					t.Errorf("%s: no code section", name)
				}
			}
		})
	}
}

func TestCodegenLanguages(t *testing.T) {
	srv := toolPages(t)
	page := srv.URL + "/codegen.html"
	cases := []struct {
		lang, fence, want string
	}{
		{"", "js", "await page.getByRole('button', { name: 'Save' }).click();"},
		{"python", "python", `page.get_by_role("button", name="Save").click()`},
		{"none", "", ""},
	}
	for _, tc := range cases {
		name := tc.lang
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			var extra []string
			if tc.lang != "" {
				extra = []string{"--codegen", tc.lang}
			}
			c, _ := inProcess(t, extra...)
			c.MustCall(t, "browser_navigate", map[string]any{"url": page})
			snap := snapshotBody(t, c.MustCall(t, "browser_snapshot", nil))
			out := c.MustCall(t, "browser_click", map[string]any{"target": refFor(t, snap, `button "Save"`)})
			fence, code := codeOf(out)
			if fence != tc.fence || code != tc.want {
				t.Fatalf("code section: fence %q, code %q; want %q, %q:\n%s", fence, code, tc.fence, tc.want, out)
			}
			if tc.lang == "none" && strings.Contains(out, "Ran Playwright code") {
				t.Fatalf("--codegen none still shows code:\n%s", out)
			}
			if !strings.Contains(out, "### Snapshot") {
				t.Fatalf("the code section replaced the rest of the answer:\n%s", out)
			}
		})
	}
}

// TestSecrets types a secret by its name and checks that its value reaches
// the page but never a response or a log line.
func TestSecrets(t *testing.T) {
	const value = "hunter2-s3cr3t-Value"
	dir := t.TempDir()
	env := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(env, []byte("# test secrets\nPASSWORD="+value+"\nOTHER='unused'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := toolPages(t)
	c, _ := inProcess(t, "--secrets", env, "--log-level", "debug", "--codegen", "python", "--caps", "config")
	var all []string
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res := c.Call(t, tool, args)
		text := mcptest.Text(res)
		all = append(all, text)
		if res.IsError {
			t.Fatalf("%s: %s", tool, text)
		}
		return text
	}
	call("browser_navigate", map[string]any{"url": srv.URL + "/codegen.html"})
	snap := snapshotBody(t, call("browser_snapshot", nil))
	name := refFor(t, snap, `textbox "Name"`)
	out := call("browser_type", map[string]any{"target": name, "text": "PASSWORD"})
	if _, code := codeOf(out); code != `page.get_by_role("textbox", name="Name").fill(os.environ["PASSWORD"])` {
		t.Errorf("code of a secret:\n%s", out)
	}
	// The page got the value: the snapshot shows the field, redacted.
	out = call("browser_snapshot", nil)
	if !regexp.MustCompile(`textbox "Name" .*\[ref=` + name + `\]: <secret>PASSWORD</secret>`).MatchString(out) {
		t.Errorf("snapshot does not show the redacted value:\n%s", out)
	}
	out = call("browser_evaluate", map[string]any{"function": "() => document.getElementById('name').value"})
	if !strings.Contains(out, "<secret>PASSWORD</secret>") {
		t.Errorf("evaluate result not redacted:\n%s", out)
	}
	out = call("browser_evaluate", map[string]any{"function": "() => document.getElementById('name').value === '" + value + "'"})
	if !strings.Contains(out, "true") {
		t.Errorf("the page did not get the secret's value:\n%s", out)
	}
	// fill_form types secrets too; a name that is no secret is typed as is.
	call("browser_fill_form", map[string]any{"fields": []any{
		map[string]any{"name": "Password", "type": "textbox", "target": refFor(t, snap, `textbox "Password"`), "value": "PASSWORD"},
		map[string]any{"name": "Name", "type": "textbox", "target": name, "value": "NOT_A_SECRET"},
	}})
	out = call("browser_evaluate", map[string]any{"function": "() => [document.getElementById('pw').value === '" + value + "', document.getElementById('name').value]"})
	if !strings.Contains(out, "true") || !strings.Contains(out, "NOT_A_SECRET") {
		t.Errorf("fill_form with a secret:\n%s", out)
	}
	// An error that quotes the value is redacted too.
	res := c.Call(t, "browser_evaluate", map[string]any{"function": "() => { throw new Error('bad ' + document.getElementById('pw').value) }"})
	all = append(all, mcptest.Text(res))
	if !res.IsError || !strings.Contains(mcptest.Text(res), "<secret>PASSWORD</secret>") {
		t.Errorf("error text: %s", mcptest.Text(res))
	}
	// browser_get_config shows the configuration, secrets redacted.
	out = call("browser_get_config", nil)
	if !strings.Contains(out, `"PASSWORD": "<secret>PASSWORD</secret>"`) || !strings.Contains(out, `"Codegen": "python"`) {
		t.Errorf("browser_get_config:\n%s", out)
	}
	for _, text := range all {
		if strings.Contains(text, value) {
			t.Fatalf("a response shows the secret's value:\n%s", text)
		}
	}
	logs := c.Stderr.String()
	if !strings.Contains(logs, "browser_evaluate") {
		t.Fatalf("no debug logs captured, the log check would prove nothing:\n%s", logs)
	}
	if strings.Contains(logs, value) {
		t.Fatalf("the logs show the secret's value")
	}
}

func TestImageResponses(t *testing.T) {
	srv := toolPages(t)
	count := func(res *mcp.CallToolResult) (text, images int) {
		for _, c := range res.Content {
			switch c.(type) {
			case mcp.TextContent:
				text++
			case mcp.ImageContent:
				images++
			}
		}
		return
	}
	for _, tc := range []struct {
		mode               string
		wantText, wantImgs int
	}{
		{"allow", 1, 1},
		{"omit", 1, 0},
		{"only", 0, 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c, _ := inProcess(t, "--image-responses", tc.mode)
			c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/codegen.html"})
			res := c.Call(t, "browser_take_screenshot", map[string]any{})
			if res.IsError {
				t.Fatalf("screenshot: %s", mcptest.Text(res))
			}
			if text, imgs := count(res); text != tc.wantText || imgs != tc.wantImgs {
				t.Fatalf("--image-responses %s: %d text and %d image parts, want %d and %d", tc.mode, text, imgs, tc.wantText, tc.wantImgs)
			}
			// Answers without images keep their text.
			if out := c.MustCall(t, "browser_snapshot", nil); !strings.Contains(out, "Order") {
				t.Fatalf("snapshot under --image-responses %s:\n%s", tc.mode, out)
			}
		})
	}
}
