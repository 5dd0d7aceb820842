package smoke

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/recording"
)

func TestRecordCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var log bytes.Buffer
	if err := recording.WriteJSONL(&log,
		recording.Step{N: 1, Tool: "browser_navigate", Args: map[string]any{"url": "http://h:1/a"}, After: recording.State{URL: "http://h:1/a", Title: "A"}},
		recording.Step{N: 2, Tool: "browser_click", Target: &recording.Target{Role: "button", Name: "Go", Count: 1}, After: recording.State{URL: "http://h:1/b", URLChanged: true}},
	); err != nil {
		t.Fatal(err)
	}
	steps := write("s.steps.jsonl", log.String())
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"scenario to stdout", []string{steps}, ExitPassed, `args: {"target":{"name":"Go","role":"button"}}`},
		{"typescript, one step", []string{"--format", "typescript", "--steps", "1", steps}, ExitPassed, "await page.goto(BASE + '/a');"},
		{"markdown log", []string{write("s.md", "# Session x\n")}, ExitInvalid, "s.md:1: not a recorded step"},
		{"empty log", []string{write("e.steps.jsonl", "")}, ExitInvalid, "nothing to export"},
		{"bad format", []string{"--format", "ruby", steps}, ExitInvalid, `unknown format "ruby"`},
		{"bad steps", []string{"--steps", "one", steps}, ExitInvalid, "want step numbers like 1,2,5"},
		{"no file", nil, ExitInvalid, "pass one steps log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(t.Context(), "", append([]string{"record"}, tc.args...), &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Errorf("exit %d (want %d), output lacks %q:\n%s%s", code, tc.code, tc.want, stdout.String(), stderr.String())
			}
		})
	}
	out := filepath.Join(dir, "out.yaml")
	var stderr bytes.Buffer
	if code := Main(t.Context(), "", []string{"record", "-o", out, steps}, &bytes.Buffer{}, &stderr); code != ExitPassed {
		t.Fatalf("-o: exit %d: %s", code, stderr.String())
	}
	if _, err := LoadFile(out); err != nil {
		t.Errorf("the recorded scenario does not load: %v", err)
	}
}
