package smoke_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

var examples = []string{"../../examples/smoke/todo.yaml", "../../examples/smoke/navigation.yaml"}

// runSmoke runs `cloakbrowser-mcp smoke args...` and returns its exit code
// and stderr.
func runSmoke(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcptest.Binary(t), append([]string{"smoke"}, args...)...)
	cmd.Env = smokeEnv(t)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("smoke: %v", err)
	}
	t.Logf("smoke %s:\n%s", strings.Join(args, " "), stderr.String())
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func smokeEnv(t *testing.T) []string {
	tmp, err := os.MkdirTemp("", "cbm") // short: Chromium's socket path limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	return append(os.Environ(), "TMPDIR="+tmp, "CLOAKBROWSER_CACHE_DIR="+filepath.Join(tmp, "cache"),
		"CLOAK_PLAYWRIGHT_MCP_NO_DOWNLOAD=1", "CLOAKBROWSER_BINARY_PATH="+mcptest.Chromium(t))
}

type junit struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Error *struct {
			Message string `xml:"message,attr"`
		} `xml:"error"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Line    int    `xml:"line,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Skipped   *struct{} `xml:"skipped"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junit {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j junit
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("JUnit XML: %v\n%s", err, b)
	}
	return j
}

func TestExamplesPassAgainstOurServer(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"--parallel", "2", "--junit", filepath.Join(dir, "junit.xml"), "--report-json", filepath.Join(dir, "report.json")}, examples...)
	code, out := runSmoke(t, args...)
	if code != smoke.ExitPassed {
		t.Fatalf("exit %d, want 0", code)
	}
	j := readJUnit(t, filepath.Join(dir, "junit.xml"))
	if len(j.Suites) != 2 || j.Tests != 9 || j.Failures != 0 || j.Errors != 0 || j.Skipped != 0 {
		t.Errorf("JUnit: %d suites, %d tests, %d failures, %d errors, %d skipped; want 2, 9, 0, 0, 0", len(j.Suites), j.Tests, j.Failures, j.Errors, j.Skipped)
	}
	var rep struct {
		Passed    bool            `json:"passed"`
		Scenarios []*smoke.Result `json:"scenarios"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil || !rep.Passed || len(rep.Scenarios) != 2 {
		t.Errorf("report.json: %v %s", err, b)
	}
	for _, want := range []string{"› 2 browser_type (", "SCENARIO", "todo list adds an item"} {
		if !strings.Contains(out, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour on a pipe")
	}
}

// TestExamplesPassAgainstUpstream runs the examples against @playwright/mcp
// 0.0.83 itself, so runs only where upstream runs: in the upstream task
// (with the recordings), not in the README's test command.
func TestExamplesPassAgainstUpstream(t *testing.T) {
	mcptest.UpstreamTier(t)
	log := &mcptest.SyncBuffer{}
	cli, err := mcptest.InstallUpstream(t.Context(), "", mcptest.UpstreamDir(), log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	work := t.TempDir()
	cmd := "node " + cli + " --headless --isolated --no-sandbox --executable-path " + mcptest.Chromium(t) + " --output-dir " + filepath.Join(work, "out")
	junitPath := filepath.Join(work, "junit.xml")
	code, _ := runSmoke(t, append([]string{"--server-cmd", cmd, "--junit", junitPath}, examples...)...)
	if code != smoke.ExitPassed {
		t.Fatalf("exit %d against %s@%s, want 0", code, mcptest.UpstreamPackage, mcptest.UpstreamVersion)
	}
	if j := readJUnit(t, junitPath); j.Tests != 9 || j.Failures != 0 {
		t.Errorf("JUnit: %d tests, %d failures", j.Tests, j.Failures)
	}
}

func TestFailingScenarioReportsAndLeavesArtifacts(t *testing.T) {
	dir := t.TempDir()
	junitPath, arts := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "artifacts")
	code, out := runSmoke(t, "--junit", junitPath, "--artifacts", arts, "--trace", "testdata/failing.yaml")
	if code != smoke.ExitFailed {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(out, `expect.snapshot_has[0]: no listitem "bread" in the page's snapshot`) || !strings.Contains(out, `closest: listitem "milk"`) {
		t.Errorf("stderr does not name the expectation and the closest element")
	}
	j := readJUnit(t, junitPath)
	if len(j.Suites) != 1 || len(j.Suites[0].Cases) != 4 {
		t.Fatalf("JUnit: %+v", j)
	}
	cases := j.Suites[0].Cases
	f := cases[2].Failure
	if f == nil || cases[0].Failure != nil || cases[1].Failure != nil {
		t.Fatalf("want a failure on step 3 only: %+v", cases)
	}
	for _, want := range []string{"step 3 (browser_snapshot) expect.snapshot_has[0]", "Response excerpt:", `listitem [ref=`, "milk"} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("failure text lacks %q:\n%s", want, f.Text)
		}
	}
	if cases[2].Line != 9 {
		t.Errorf("failing step line = %d, want 9", cases[2].Line)
	}
	if cases[3].Skipped == nil || j.Skipped != 1 {
		t.Error("the step after the failure is not skipped")
	}
	stepDir := filepath.Join(arts, "01-failing")
	png, err := os.ReadFile(filepath.Join(stepDir, "step-03-screenshot.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot: %v (%d bytes)", err, len(png))
	}
	snap, err := os.ReadFile(filepath.Join(stepDir, "step-03-snapshot.md"))
	if err != nil || !strings.Contains(string(snap), `textbox "New item"`) || !strings.Contains(string(snap), "milk") {
		t.Errorf("snapshot: %v\n%s", err, snap)
	}
	if _, err := os.Stat(filepath.Join(stepDir, "step-03-console.txt")); err != nil {
		t.Errorf("console messages: %v", err)
	}
	zip, err := os.ReadFile(filepath.Join(stepDir, "trace.zip"))
	if err != nil || !bytes.HasPrefix(zip, []byte("PK")) {
		t.Errorf("trace: %v", err)
	}
	if !strings.Contains(cases[2].SystemOut, "[[ATTACHMENT|") {
		t.Errorf("no attachments in system-out: %q", cases[2].SystemOut)
	}
}

func TestBadInputExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unknown key", []string{write("a.yaml", "steps:\n  - tool: browser_snapshot\n    expct: {}\n")}, 2, []string{"a.yaml:3:", `unknown field "expct"`}},
		{"wrong type", []string{write("b.yaml", "steps:\n  - tool: browser_snapshot\n    expect: {max_ms: soon}\n")}, 2, []string{"b.yaml:3:", `step 1: expect.max_ms: "soon" is a string, want a number`}},
		{"undefined variable", []string{write("c.yaml", "steps:\n  - tool: browser_navigate\n    args: {url: \"${SMOKE_TEST_UNSET}/x\"}\n")}, 2, []string{"c.yaml:3:", "step 1: args.url: ${SMOKE_TEST_UNSET} has no value"}},
		{"missing file", []string{filepath.Join(dir, "nope.yaml")}, 2, []string{"nope.yaml: cannot read"}},
		{"no files", nil, 2, []string{"no scenario files"}},
		{"bad flag", []string{"--parallel", "0", examples[0]}, 2, []string{"--parallel 0: must be at least 1"}},
		{"header without url", []string{"--header", "Authorization: Bearer secret-token", examples[0]}, 2, []string{"--header is for --server-url"}},
		{"server does not start", []string{"--server-cmd", "echo cannot-start-here >&2; exit 3", examples[0]}, 1, []string{"server did not start", "cannot-start-here"}},
		{"unknown tool", []string{"testdata/unknown-tool.yaml"}, 2, []string{"unknown-tool.yaml:4:", `step 2: tool: the server has no tool "browser_navigat" (did you mean browser_navigate?)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runSmoke(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			if strings.Contains(out, "secret-token") {
				t.Error("a header value reached the output")
			}
		})
	}
}

func TestInterruptWritesPartialReport(t *testing.T) {
	dir := t.TempDir()
	junitPath := filepath.Join(dir, "junit.xml")
	cmd := exec.Command(mcptest.Binary(t), "smoke", "--junit", junitPath, "--timeout", "2m", "testdata/slow.yaml", examples[0])
	cmd.Env = smokeEnv(t)
	stderr := &mcptest.SyncBuffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	testtier.EventuallyState(t, 2*time.Minute, "the first step to finish", func() (bool, string) {
		out := stderr.String()
		return strings.Contains(out, "› 1 browser_navigate"), "stderr:\n" + out
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("smoke did not stop after SIGINT:\n%s", stderr)
	}
	t.Logf("%s", stderr)
	if code := cmd.ProcessState.ExitCode(); code != smoke.ExitFailed {
		t.Errorf("exit %d, want 1", code)
	}
	j := readJUnit(t, junitPath)
	if len(j.Suites) != 2 {
		t.Fatalf("JUnit has %d suites, want 2", len(j.Suites))
	}
	first := j.Suites[0].Cases
	if first[0].Failure != nil || first[1].Failure == nil || !strings.Contains(first[1].Failure.Text, "interrupted") {
		t.Errorf("want step 1 passed and step 2 interrupted: %+v", first)
	}
	if e := j.Suites[1].Error; e == nil || !strings.Contains(e.Message, "interrupted before it started") {
		t.Errorf("second scenario: %+v", j.Suites[1])
	}
	// The servers and browsers are gone with it: nothing is left in the group.
	if err := syscall.Kill(-cmd.Process.Pid, 0); err == nil {
		t.Error("processes of the smoke run outlived it")
	}
}

func TestServerURLWithBearerToken(t *testing.T) {
	const token = "smoke-test-token-0123456789abcdef"
	h := mcptest.StartHTTPBinary(t, mcptest.Binary(t), mcptest.HTTPOptions{
		Args: []string{"--no-download", "--http-isolation", "context"},
		Env:  append(smokeEnv(t), "CLOAK_PLAYWRIGHT_MCP_HTTP_AUTH_TOKEN="+token),
	})
	// Without the token the server refuses the session: the scenario fails
	// to start (exit 1), and the token never shows in the output.
	code, out := runSmoke(t, "--server-url", h.URL, examples[0])
	if code != smoke.ExitFailed || !strings.Contains(out, "server did not start") {
		t.Errorf("without a token: exit %d", code)
	}
	code, out = runSmoke(t, "--parallel", "2", "--server-url", h.URL, "--header", "Authorization: Bearer "+token, examples[0], examples[1])
	if code != smoke.ExitPassed {
		t.Errorf("with the token: exit %d, want 0", code)
	}
	if strings.Contains(out, token) {
		t.Error("the token reached the output")
	}
}
