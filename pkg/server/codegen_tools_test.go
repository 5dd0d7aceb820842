package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// codegenToolSteps are the calls, beyond codegenSteps' element actions,
// after which upstream 0.0.83 prints "### Ran Playwright code". refs maps
// an argument to the snapshot line whose ref it takes; "UPLOAD" in a path
// is the test's upload file.
var codegenToolSteps = []struct {
	name, tool string
	args       map[string]any
	refs       map[string]string
}{
	{"evaluate a function", "browser_evaluate", map[string]any{"function": "() => document.title"}, nil},
	{"evaluate an expression", "browser_evaluate", map[string]any{"function": "document.title"}, nil},
	{"evaluate on an element", "browser_evaluate", map[string]any{"function": "(el) => el.value"}, map[string]string{"target": `textbox "Name"`}},
	{"screenshot", "browser_take_screenshot", map[string]any{"filename": "shot.png"}, nil},
	{"screenshot of the full page as jpeg", "browser_take_screenshot", map[string]any{"filename": "full.jpeg", "fullPage": true, "type": "jpeg"}, nil},
	{"screenshot of an element", "browser_take_screenshot", map[string]any{"filename": "element.png", "element": "Name field"}, map[string]string{"target": `textbox "Name"`}},
	{"open the file chooser", "browser_click", nil, map[string]string{"target": `"Attachment"`}},
	{"upload", "browser_file_upload", map[string]any{"paths": []any{"UPLOAD"}}, nil},
	{"wait for text", "browser_wait_for", map[string]any{"text": "Order"}, nil},
	{"wait for text to go", "browser_wait_for", map[string]any{"textGone": "Nowhere to be seen"}, nil},
	{"wait for a time", "browser_wait_for", map[string]any{"time": 0.1}, nil},
	{"mouse move", "browser_mouse_move_xy", map[string]any{"x": 10, "y": 20.5}, nil},
	{"mouse down", "browser_mouse_down", map[string]any{}, nil},
	{"mouse up with a button", "browser_mouse_up", map[string]any{"button": "left"}, nil},
	{"mouse wheel", "browser_mouse_wheel", map[string]any{"deltaX": 0, "deltaY": 100}, nil},
	{"mouse click", "browser_mouse_click_xy", map[string]any{"x": 300, "y": 400}, nil},
	{"mouse click with options", "browser_mouse_click_xy", map[string]any{"x": 300, "y": 400, "button": "middle", "clickCount": 2, "delay": 5}, nil},
	{"mouse drag", "browser_mouse_drag_xy", map[string]any{"startX": 1, "startY": 2, "endX": 30, "endY": 40}, nil},
	{"resize", "browser_resize", map[string]any{"width": 1000, "height": 700}, nil},
	{"emulate media", "browser_emulate_media", map[string]any{"colorScheme": "dark", "reducedMotion": nil}, nil},
	{"go offline", "browser_network_state_set", map[string]any{"state": "offline"}, nil},
	{"go online", "browser_network_state_set", map[string]any{"state": "online"}, nil},
	{"route", "browser_route", map[string]any{"pattern": "**/api/it's", "body": "{}", "contentType": "application/json"}, nil},
	{"set a cookie", "browser_cookie_set", map[string]any{"name": "flavour", "value": "oat 'n' raisin"}, nil},
	{"set a cookie with flags", "browser_cookie_set", map[string]any{"name": "s", "value": "1", "path": "/x", "expires": 4102444800, "httpOnly": true, "secure": false, "sameSite": "Lax"}, nil},
	{"list cookies", "browser_cookie_list", map[string]any{}, nil},
	{"get a cookie", "browser_cookie_get", map[string]any{"name": "flavour"}, nil},
	{"delete a cookie", "browser_cookie_delete", map[string]any{"name": "flavour"}, nil},
	{"clear cookies", "browser_cookie_clear", map[string]any{}, nil},
	{"localStorage set", "browser_localstorage_set", map[string]any{"key": "k", "value": "it's"}, nil},
	{"localStorage list", "browser_localstorage_list", map[string]any{}, nil},
	{"localStorage get", "browser_localstorage_get", map[string]any{"key": "k"}, nil},
	{"localStorage delete", "browser_localstorage_delete", map[string]any{"key": "k"}, nil},
	{"localStorage clear", "browser_localstorage_clear", map[string]any{}, nil},
	{"sessionStorage set", "browser_sessionstorage_set", map[string]any{"key": "k", "value": "v"}, nil},
	{"sessionStorage list", "browser_sessionstorage_list", map[string]any{}, nil},
	{"sessionStorage get", "browser_sessionstorage_get", map[string]any{"key": "k"}, nil},
	{"sessionStorage delete", "browser_sessionstorage_delete", map[string]any{"key": "k"}, nil},
	{"sessionStorage clear", "browser_sessionstorage_clear", map[string]any{}, nil},
	{"save storage state", "browser_storage_state", map[string]any{"filename": "state.json"}, nil},
	{"restore storage state", "browser_set_storage_state", map[string]any{"filename": "state.json"}, nil},
	{"save as pdf", "browser_pdf_save", map[string]any{"filename": "page.pdf"}, nil},
	{"verify an element", "browser_verify_element_visible", map[string]any{"role": "heading", "accessibleName": "Order"}, nil},
	{"verify a text", "browser_verify_text_visible", map[string]any{"text": "Drop here"}, nil},
	{"verify a list", "browser_verify_list_visible", map[string]any{"element": "Fruits", "items": []any{"Apple", "Pear"}}, map[string]string{"target": `list "Fruits"`}},
	{"verify a value", "browser_verify_value", map[string]any{"type": "textbox", "element": "Name"}, map[string]string{"target": `textbox "Name"`}},
	{"verify a checkbox", "browser_verify_value", map[string]any{"type": "checkbox", "element": "Accept", "value": "true"}, map[string]string{"target": `checkbox "Accept terms"`}},
	{"drop data", "browser_drop", map[string]any{"element": "Drop zone", "data": map[string]any{"text/plain": "hello", "text/uri-list": "https://example.com/"}}, map[string]string{"target": `region "Drop zone"`}},
	{"drop a file", "browser_drop", map[string]any{"element": "Drop zone", "paths": []any{"UPLOAD"}}, map[string]string{"target": `region "Drop zone"`}},
	{"new tab with a url", "browser_tabs", map[string]any{"action": "new", "url": "PAGE"}, nil},
	{"close", "browser_close", map[string]any{}, nil},
}

// TestCodegenToolsMatchUpstream is TestCodegenMatchesUpstream for every
// other tool upstream prints code for (codegenToolSteps): the same calls
// through us and, as recorded under testdata/upstream/codegen/tools-*.txt,
// through @playwright/mcp 0.0.83, in every --codegen language; the code
// sections compare line for line once ports, the upload file's directory
// and the directories of written files are taken out (where files go is
// each server's own policy). browser_run_code_unsafe, for which upstream
// prints the snippet, is refused here (TestEveryCoreTool).
func TestCodegenToolsMatchUpstream(t *testing.T) {
	srv := toolPages(t)
	page := srv.URL + "/codegen-tools.html"
	upload := filepath.Join(t.TempDir(), "upload.txt")
	if err := os.WriteFile(upload, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--caps", "storage,network,pdf,vision,testing", "--allow-unrestricted-file-access", "--viewport-size", "1280x720"}
	written := regexp.MustCompile(`[^\s'"\[\]]*/(shot\.png|full\.jpeg|element\.png|state\.json|page\.pdf)`)
	for _, lang := range []string{"typescript", "python", "java", "csharp"} {
		t.Run(lang, func(t *testing.T) {
			run := func(c *mcptest.Client) string {
				var b strings.Builder
				block := func(name, text string) {
					fence, code := codeOf(text)
					code = strings.ReplaceAll(code, filepath.Dir(upload), "DIR")
					code = written.ReplaceAllString(code, "$1")
					fmt.Fprintf(&b, "=== %s (%s)\n%s\n", name, fence, mcptest.NoPorts(code))
				}
				block("navigate", c.MustCall(t, "browser_navigate", map[string]any{"url": page}))
				snap := snapshotBody(t, c.MustCall(t, "browser_snapshot", map[string]any{}))
				for _, s := range codegenToolSteps {
					args := map[string]any{}
					for k, v := range s.args {
						switch v {
						case "PAGE":
							v = page
						}
						if l, ok := v.([]any); ok && len(l) == 1 && l[0] == "UPLOAD" {
							v = []any{upload}
						}
						args[k] = v
					}
					for k, line := range s.refs {
						args[k] = refFor(t, snap, line)
					}
					if s.tool == "browser_verify_value" && args["value"] == nil {
						args["value"] = "Ann"
					}
					block(s.name, c.MustCall(t, s.tool, args))
				}
				return b.String()
			}
			want := mcptest.Recorded(t, "codegen/tools-"+lang+".txt", func() string {
				return run(mcptest.StartUpstream(t, mcptest.Chromium(t), append([]string{"--codegen", lang}, flags...)...))
			})
			ours, _ := inProcess(t, append([]string{"--codegen", lang}, flags...)...)
			got := run(ours)
			if got != want {
				t.Errorf("code sections differ from upstream's:\n--- ours\n%s\n--- upstream\n%s", got, want)
			}
		})
	}
}
