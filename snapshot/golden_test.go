package snapshot

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/snapshot")

// testdataDir holds the fixtures and goldens of this package.
var testdataDir = filepath.Join("..", "testdata", "snapshot")

// readFixture returns a file of testdataDir.
func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdataDir, name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return string(b)
}

// golden compares got with the golden file name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir, name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("update golden: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./snapshot -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// axFixture decodes a JSON list of AX nodes as Accessibility.getFullAXTree
// returns them.
func axFixture(t testing.TB, name string) []*accessibility.Node {
	t.Helper()
	var nodes []*accessibility.Node
	if err := jsonv2.Unmarshal([]byte(readFixture(t, name)), &nodes); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return nodes
}

// mustParse parses text or fails the test.
func mustParse(t testing.TB, text string) *Tree {
	t.Helper()
	tr, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}
