package smoke_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

var update = flag.Bool("update", false, "rewrite the exported-test goldens under testdata/export")

// secretValue is the fixture's password: it must never reach a file.
const secretValue = "hunter2-Zq9-s3cret"

// exportApp is the fixture the session drives: a login form (POST /login
// checks the password and sets a cookie), a list app and a page with two
// buttons "Save". broken swaps the two buttons' actions.
func exportApp(t *testing.T, broken *atomic.Bool) *httptest.Server {
	files := http.FileServer(http.Dir("testdata/exportapp"))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("password") != secretValue {
			http.Error(w, "wrong password", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "user", Value: r.FormValue("user"), Path: "/"})
		http.Redirect(w, r, "/list.html", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /buttons.html", func(w http.ResponseWriter, r *http.Request) {
		name := "buttons.html"
		if broken.Load() {
			name = "buttons-broken.html"
		}
		http.ServeFile(w, r, filepath.Join("testdata/exportapp", name))
	})
	mux.Handle("GET /", files)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// refOf finds the ref of the nth element line matching what (`button "Save"`)
// in a response's snapshot.
func refOf(t *testing.T, text, what string, nth int) string {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(what) + `(?: \[[^\]]*\])*? \[ref=((?:f\d+)?e\d+)\]`)
	m := re.FindAllStringSubmatch(text, -1)
	if len(m) <= nth {
		t.Fatalf("no %d. %s in:\n%s", nth+1, what, text)
	}
	return m[nth][1]
}

// TestExportedSessionReplays drives the fixture app through an MCP client
// (11 calls, one of which fails), exports the session in every format,
// replays the scenario on a fresh server (passing, then failing on a broken
// fixture at the step that clicked the second "Save", with a JUnit
// failure), runs the TypeScript spec under @playwright/test, compares the
// Python, Java and C# files with goldens, and checks that the secret never
// reached a file.
func TestExportedSessionReplays(t *testing.T) {
	var broken atomic.Bool
	app := exportApp(t, &broken)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	secrets := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(secrets, []byte("PASSWORD="+secretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := mcptest.StartInProcess(t, mcptest.Options{Args: []string{"--no-download", "--caps", "export", "--secrets", secrets, "--save-session", "--output-dir", out}})

	// Nothing recorded yet: a clear refusal.
	if res := c.Call(t, "browser_export_test", map[string]any{}); !res.IsError || !strings.Contains(mcptest.Text(res), "nothing to export: the session has no recorded actions") {
		t.Fatalf("export of an empty session: %s", mcptest.Text(res))
	}

	snap := c.MustCall(t, "browser_navigate", map[string]any{"url": app.URL + "/login.html"})                                                   // 1
	c.MustCall(t, "browser_type", map[string]any{"target": refOf(t, snap, `textbox "Username"`, 0), "element": "Username", "text": "alice"})    // 2
	c.MustCall(t, "browser_type", map[string]any{"target": refOf(t, snap, `textbox "Password"`, 0), "element": "Password", "text": "PASSWORD"}) // 3: the secret's name
	c.MustCall(t, "browser_click", map[string]any{"target": refOf(t, snap, `button "Sign in"`, 0), "element": "Sign in"})                       // 4
	snap = c.MustCall(t, "browser_snapshot", map[string]any{})                                                                                  // not recorded
	c.MustCall(t, "browser_type", map[string]any{"target": refOf(t, snap, `textbox "New item"`, 0), "text": "milk", "submit": true})            // 5
	c.MustCall(t, "browser_type", map[string]any{"target": refOf(t, snap, `textbox "New item"`, 0), "text": "bread"})                           // 6
	c.MustCall(t, "browser_click", map[string]any{"target": refOf(t, snap, `button "Add"`, 0)})                                                 // 7
	if res := c.Call(t, "browser_click", map[string]any{"target": "e9999", "element": "gone"}); !res.IsError {                                  // 8: fails
		t.Fatalf("a click on an unknown ref succeeded: %s", mcptest.Text(res))
	}
	c.MustCall(t, "browser_click", map[string]any{"target": refOf(t, snap, `link "Drafts"`, 0)}) // 9
	snap = c.MustCall(t, "browser_snapshot", map[string]any{})
	c.MustCall(t, "browser_click", map[string]any{"target": refOf(t, snap, `button "Save"`, 1)}) // 10: the second of two
	c.MustCall(t, "browser_press_key", map[string]any{"key": "Tab"})                             // 11

	export := func(args map[string]any) string {
		t.Helper()
		res := c.Call(t, "browser_export_test", args)
		text := mcptest.Text(res)
		if res.IsError {
			t.Fatalf("browser_export_test %v: %s", args, text)
		}
		m := regexp.MustCompile(`\]\(([^)]+)\)`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no file link in %s", text)
		}
		b, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatal(err)
		}
		var uri string
		for _, part := range res.Content {
			if l, ok := part.(mcp.ResourceLink); ok && strings.HasPrefix(l.URI, "cloakbrowser-mcp://files/") {
				uri = l.URI
			}
		}
		if uri == "" {
			t.Fatalf("the file is not linked as a resource: %+v", res.Content)
		}
		// The resource reads back as text, the file's bytes.
		rr, err := c.ReadResource(t.Context(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil || len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || tc.Text != string(b) {
			t.Errorf("resources/read %s: %T, not the file's text", uri, rr.Contents[0])
		}
		return string(b)
	}
	assertions := []any{map[string]any{"step": 10, "text": "Saved the second draft"}}
	scenario := export(map[string]any{"name": "drafts are saved", "filename": "drafts.yaml", "assertions": assertions})
	golden(t, "testdata/export/drafts.smoke.golden", strings.ReplaceAll(scenario, app.URL, "http://127.0.0.1:PORT"))
	for _, want := range []string{"Left out: step 8", "Reads from the environment: PASSWORD", `"text":"${PASSWORD}"`,
		`{"name":"Save","nth":1,"role":"button"}`, "# 2 elements are button \"Save\": nth 1", `url: "${BASE}/list.html"`, `text: ["Saved the second draft"]`} {
		if !strings.Contains(scenario, want) {
			t.Errorf("scenario lacks %s", want)
		}
	}
	if regexp.MustCompile(`"(f\d+)?e\d+"`).MatchString(scenario) {
		t.Error("the scenario holds a snapshot ref")
	}

	// Bad input names what to change.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"steps": []any{8}}, "every selected step failed (step 8 browser_click"},
		{map[string]any{"from": 5, "to": 2}, "from 5 is after to 2"},
		{map[string]any{"steps": []any{42}}, "there is no step 42"},
		{map[string]any{"assertions": []any{map[string]any{"step": 3}}}, "give exactly one of role"},
	} {
		if res := c.Call(t, "browser_export_test", tc.args); !res.IsError || !strings.Contains(mcptest.Text(res), tc.want) {
			t.Errorf("export %v: %s, want an error with %q", tc.args, mcptest.Text(res), tc.want)
		}
	}

	// The scenario replays on a fresh server; the secret comes from the
	// environment.
	path := filepath.Join(dir, "drafts.yaml")
	if err := os.WriteFile(path, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	replay := func(path string, update bool) (*smoke.Result, string) {
		t.Helper()
		sc, err := smoke.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var progress bytes.Buffer
		res, err := smoke.Run(t.Context(), sc, smoke.Options{
			Start: func(ctx context.Context, sc *smoke.Scenario) (*embed.Client, error) {
				return embed.Start(ctx, embed.Options{Args: append([]string{"--no-download", "--output-dir", t.TempDir()}, sc.Server.Args...), Driver: mcptest.SharedDriver(t), Browser: mcptest.SharedBrowser(t)})
			},
			LookupEnv: func(k string) (string, bool) {
				if k == "PASSWORD" {
					return secretValue, true
				}
				return "", false
			},
			Progress:      &progress,
			ExpectTimeout: 3 * time.Second,
			Update:        update,
		})
		if err != nil {
			t.Fatalf("replay: %v", err)
		}
		if update {
			var diff bytes.Buffer
			if _, err := smoke.Update(sc, res, &diff); err != nil {
				t.Fatal(err)
			}
			return res, diff.String()
		}
		var junit bytes.Buffer
		if err := smoke.WriteJUnit(&junit, []*smoke.Result{res}); err != nil {
			t.Fatal(err)
		}
		t.Logf("replay:\n%s", progress.String())
		return res, junit.String()
	}
	if res, _ := replay(path, false); !res.Passed() || len(res.Steps) != 10 {
		t.Fatalf("the replay did not pass: %s (%d steps)", res.Status, len(res.Steps))
	}
	broken.Store(true)
	res, junitXML := replay(path, false)
	if res.Passed() {
		t.Fatal("the replay passed on the broken fixture")
	}
	var j junit
	if err := xml.Unmarshal([]byte(junitXML), &j); err != nil {
		t.Fatal(err)
	}
	cases := j.Suites[0].Cases
	for i, cs := range cases {
		if (cs.Failure != nil) != (i == 8) {
			t.Errorf("JUnit case %d (%s): failure %v, want one on case 9 only", i+1, cs.Name, cs.Failure != nil)
		}
	}
	if f := cases[8].Failure; f == nil || !strings.Contains(cases[8].Name, `click button "Save" (2nd of 2)`) || !strings.Contains(f.Text, "Saved the first draft") {
		t.Errorf("the failure is not at the second Save: %+v", cases[8])
	}

	// An intended change: --update re-records the expectations (here
	// without the agent's text assertion, which it cannot re-derive), and
	// the updated scenario passes on the changed app.
	plain := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(plain, []byte(export(map[string]any{"name": "drafts are saved"})), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, diff := replay(plain, true); !res.Passed() || !strings.Contains(diff, `-      snapshot_has: [{"name":"Saved the second draft","role":"status"}]`) ||
		!strings.Contains(diff, `+      snapshot_has: [{"name":"Saved the first draft","role":"status"}]`) || strings.Count(diff, "@@ line") != 1 {
		t.Errorf("--update: %s, diff:\n%s", res.Status, diff)
	}
	if res, _ := replay(plain, false); !res.Passed() {
		t.Errorf("the updated scenario fails on the changed app")
	}
	broken.Store(false)

	// --save-session's steps log gives the same scenario through smoke record.
	logs, _ := filepath.Glob(filepath.Join(out, "session-*.steps.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("steps logs: %v", logs)
	}
	var stdout, stderr bytes.Buffer
	if code := smoke.Main(t.Context(), "", []string{"record", "--name", "drafts are saved", logs[0]}, &stdout, &stderr); code != 0 {
		t.Fatalf("smoke record: exit %d: %s", code, stderr.String())
	}
	recorded := regexp.MustCompile(`(?m)^# Exported by .*\n`).ReplaceAllString(stdout.String(), "")
	fromTool := regexp.MustCompile(`(?m)^# Exported by .*\n`).ReplaceAllString(export(map[string]any{"name": "drafts are saved"}), "")
	if recorded != fromTool {
		t.Errorf("smoke record wrote another scenario than browser_export_test:\n%s\nwant:\n%s", recorded, fromTool)
	}

	// The code formats: TypeScript runs, the others match their goldens.
	files := map[string]string{}
	for _, f := range []string{"typescript", "python", "java", "csharp"} {
		files[f] = export(map[string]any{"format": f, "name": "drafts are saved", "assertions": assertions})
		golden(t, "testdata/export/drafts."+f+".golden", strings.ReplaceAll(files[f], app.URL, "http://127.0.0.1:PORT"))
	}
	runSpec(t, files["typescript"], app.URL)

	// No file holds the secret's value.
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secretValue)) {
				t.Errorf("%s holds the secret's value", p)
			}
		}
		return nil
	})
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/smoke -run TestExportedSessionReplays -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (review, then -update):\ngot:\n%s", path, got)
	}
}

// runSpec runs an exported TypeScript test under @playwright/test with
// Debian's Chromium against the fixture.
func runSpec(t *testing.T, spec, base string) {
	t.Helper()
	log := &mcptest.SyncBuffer{}
	pw, err := mcptest.InstallPlaywrightTest(t.Context(), log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(pw, "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	config := `module.exports = { testDir: '.', workers: 1, reporter: 'line', timeout: 60000,
  use: { headless: true, launchOptions: { executablePath: ` + "`" + mcptest.Chromium(t) + "`" + `, args: ['--no-sandbox'] } } };
`
	for name, body := range map[string]string{"playwright.config.js": config, "drafts.spec.ts": spec} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(work, "node_modules", "@playwright", "test", "cli.js"), "test", "--config", filepath.Join(work, "playwright.config.js"))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "BASE="+base, "PASSWORD="+secretValue, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "CI=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the exported spec failed under @playwright/test %s: %v\n%s", mcptest.PlaywrightTestVersion, err, b)
	}
	if !strings.Contains(string(b), "1 passed") {
		t.Errorf("@playwright/test output:\n%s", b)
	}
}
