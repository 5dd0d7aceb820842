package recording

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

func login() []Step {
	return []Step{
		{N: 1, Tool: "browser_navigate", Args: map[string]any{"url": "http://127.0.0.1:9/login"},
			After: State{URL: "http://127.0.0.1:9/login", Title: "Sign in", URLChanged: true, Appeared: []Element{{Role: "button", Label: "Sign in", Count: 1}, {Role: "heading", Label: "Sign in", Count: 1}}}},
		{N: 2, Tool: "browser_type", Args: map[string]any{"text": "${PASSWORD}"},
			Target: &Target{Role: "textbox", Name: "Password", Count: 1, Selector: `internal:role=textbox[name="Password"i]`}, After: State{URL: "http://127.0.0.1:9/login"}},
		{N: 3, Tool: "browser_click", Error: "Ref e99 not found: take a new snapshot"},
		{N: 4, Tool: "browser_click", Target: &Target{Role: "button", Name: "Save", Nth: 1, Count: 2, Selector: `internal:role=button[name="Save"i] >> nth=1`},
			After: State{URL: "http://127.0.0.1:9/home", URLChanged: true, Title: "Home", TitleChanged: true, Appeared: []Element{{Role: "status", Label: "Saved", Text: true, Count: 1}}}},
	}
}

func TestExportRefusals(t *testing.T) {
	unstable := append(login(), Step{N: 5, Tool: "browser_click", Target: &Target{Given: "e7", Selector: "aria-ref=e7"}})
	cases := []struct {
		name  string
		steps []Step
		o     Options
		want  string
		empty bool
	}{
		{"empty session", nil, Options{}, "the session has no recorded actions", true},
		{"only failed", login()[2:3], Options{}, "every selected step failed (step 3 browser_click: Ref e99 not found", true},
		{"kept step failed", login(), Options{Keep: []int{3}}, "every selected step failed (step 3", true},
		{"unstable step", unstable, Options{}, "step 5 (browser_click e7): its element has no role and name", false},
		{"range backwards", login(), Options{From: 4, To: 2}, "from 4 is after to 2", false},
		{"range outside", login(), Options{From: 9}, "selects no step: the session has steps 1–4", false},
		{"unknown kept step", login(), Options{Keep: []int{8}}, "there is no step 8", false},
		{"assertion on a step left out", login(), Options{To: 2, Assertions: []Assertion{{Step: 4, Text: "x"}}}, "step 4 is not among the exported steps (1, 2)", false},
		{"assertion of two kinds", login(), Options{Assertions: []Assertion{{Step: 1, Text: "x", URL: "y"}}}, "give exactly one of", false},
		{"unknown format", login(), Options{Format: "ruby"}, `unknown format "ruby"`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Export(tc.steps, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one with %q", err, tc.want)
			}
			if errors.Is(err, ErrEmpty) != tc.empty {
				t.Errorf("errors.Is(ErrEmpty) = %v", !tc.empty)
			}
			var ue *UnstableError
			if tc.name == "unstable step" && (!errors.As(err, &ue) || ue.Step != 5) {
				t.Errorf("not an UnstableError naming step 5: %#v", err)
			}
		})
	}
}

func TestExportSmoke(t *testing.T) {
	b, err := Export(login(), Options{Name: "login", Assertions: []Assertion{{Step: 2, Role: "textbox", Name: "Password"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"# Left out: step 3 (the call failed).",
		"# Reads from the environment: PASSWORD",
		`env: {"BASE": "http://127.0.0.1:9"}`,
		`args: {"url":"${BASE}/login"}`,
		`args: {"target":{"name":"Password","role":"textbox"},"text":"${PASSWORD}"}`,
		`snapshot_has: [{"name":"Sign in","role":"heading"},{"name":"Sign in","role":"button"}]`,
		`snapshot_has: [{"name":"Password","role":"textbox"}]`,
		`# 2 elements are button "Save": nth 1 is the one the agent used`,
		`args: {"target":{"name":"Save","nth":1,"role":"button"}}`,
		`url: "${BASE}/home"`, `title: "Home"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %s\n%s", want, got)
		}
	}
	if strings.Contains(got, "e99") {
		t.Error("the failed step is in the file")
	}
}

func TestExportCodeReadsSecretsFromTheEnvironment(t *testing.T) {
	for f, want := range map[Format]string{
		TypeScript: "fill(process.env['PASSWORD'])",
		Python:     `fill(os.environ["PASSWORD"])`,
		Java:       `fill(System.getenv("PASSWORD"))`,
		CSharp:     `FillAsync(Environment.GetEnvironmentVariable("PASSWORD"))`,
	} {
		b, err := Export(login(), Options{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) || strings.Contains(string(b), "${") {
			t.Errorf("%s: lacks %s, or holds a ${VAR}:\n%s", f, want, b)
		}
	}
}

func TestTargetInCountsLikeTheSmokeRunner(t *testing.T) {
	tree, err := snapshot.Parse("- region \"A\" [ref=e1]:\n  - button \"Save\" [ref=e2]\n- region \"B\" [ref=e3]:\n  - button \"Save\" [ref=e4]\n  - button \"Save draft\" [ref=e5]\n- listitem [ref=e6]: milk\n")
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]Target{
		"e4": {Role: "button", Name: "Save", Nth: 1, Count: 2, Given: "e4"},
		"e5": {Role: "button", Name: "Save draft", Count: 1, Given: "e5"},
		"e6": {Role: "listitem", Name: "milk", Count: 1, Given: "e6"},
	} {
		if got := TargetIn(tree, ref); got == nil || *got != want {
			t.Errorf("%s: %+v, want %+v", ref, got, want)
		}
	}
	if TargetIn(tree, "e42") != nil {
		t.Error("an unknown ref was found")
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	var b strings.Builder
	if err := WriteJSONL(&b, login()...); err != nil {
		t.Fatal(err)
	}
	steps, err := ReadJSONL("x.jsonl", []byte(b.String()))
	if err != nil || len(steps) != 4 || steps[3].Target.Nth != 1 {
		t.Fatalf("%v %+v", err, steps)
	}
	if _, err := ReadJSONL("session.md", []byte("# Session\n")); err == nil || !strings.Contains(err.Error(), "session.md:1: not a recorded step") {
		t.Errorf("a markdown log: %v", err)
	}
}
