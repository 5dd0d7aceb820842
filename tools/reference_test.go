package tools

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update", false, "rewrite docs/tools-reference.md from the registered schemas")

const referencePath = "../docs/tools-reference.md"

// TestReferenceIsCurrent fails when docs/tools-reference.md is not what the
// registered schemas render: a tool or argument was added, renamed or
// described anew without regenerating it (-update).
func TestReferenceIsCurrent(t *testing.T) {
	var b strings.Builder
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	if *updateReference {
		if err := os.WriteFile(referencePath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v: generate it with go test ./tools -run TestReferenceIsCurrent -update", err)
	}
	if string(got) != b.String() {
		t.Fatalf("%s is stale: regenerate it with go test ./tools -run TestReferenceIsCurrent -update", referencePath)
	}
	for _, tool := range All() {
		if !strings.Contains(b.String(), "### `"+tool.Def.Name+"`") {
			t.Errorf("the reference lacks %s", tool.Def.Name)
		}
	}
}
