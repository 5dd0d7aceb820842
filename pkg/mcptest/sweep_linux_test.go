package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweepBinaries: the binary directory of a test process that died
// (SIGKILLed before RemoveBinary) is removed by the next one; a live
// owner's and an unowned directory stay.
func TestSweepBinaries(t *testing.T) {
	old := buildTemp
	buildTemp = t.TempDir()
	t.Cleanup(func() { buildTemp = old })

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		d := filepath.Join(buildTemp, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(d, "owner"), []byte(owner), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	gone := mk("cloakbrowser-mcp-bin-1", strconv.Itoa(dead.Process.Pid))
	live := mk("cloakbrowser-mcp-bin-2", strconv.Itoa(os.Getppid()))
	unowned := mk("cloakbrowser-mcp-bin-3", "")
	sweepBinaries()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("a dead owner's directory stayed: %v", err)
	}
	for _, d := range []string{live, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}
