package smoke

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpdateRewritesExpectationLines(t *testing.T) {
	src := `name: x
steps:
  - tool: browser_navigate # a comment stays
    args: {url: "${BASE}/a"}
    expect:
      url: "${BASE}/a"
      title: "Old"
      snapshot_has: [{"name":"Old","role":"heading"}]
  - tool: browser_click
    args: {target: "#go"}
    expect: {url: "${BASE}/b"}
`
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{Status: Passed, vars: map[string]string{"BASE": "http://h:1"}, Steps: []StepResult{
		{Observed: &Observed{URL: "http://h:1/a2", Title: "New", Has: []RoleName{{Role: "heading", Name: "New"}}}},
		{Observed: &Observed{URL: "http://h:1/c"}},
	}}
	var diff strings.Builder
	n, err := Update(sc, res, &diff)
	if err != nil || n != 3 {
		t.Fatalf("Update: %d, %v\n%s", n, err, diff.String())
	}
	for _, want := range []string{
		"@@ line 6 @@\n-      url: \"${BASE}/a\"\n+      url: \"${BASE}/a2\"",
		"+      title: \"New\"",
		`+      snapshot_has: [{"name":"New","role":"heading"}]`,
		`s.yaml:11: step 2: expect.url is not on one "url: value" line; update it by hand`,
	} {
		if !strings.Contains(diff.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, diff.String())
		}
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "# a comment stays") || !strings.Contains(string(b), `url: "${BASE}/a2"`) || !strings.Contains(string(b), `expect: {url: "${BASE}/b"}`) {
		t.Errorf("file after the update:\n%s", b)
	}
	if _, err := Parse(path, b); err != nil {
		t.Errorf("the updated file does not parse: %v", err)
	}
}
