package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestSweepBinaries: the binary directory of a test process that died
// (SIGKILLed before RemoveBinary) is removed by the next one's sweep, as
// Binary runs it; a live owner's and an unowned directory stay.
func TestSweepBinaries(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, mark func(dir string) error) string {
		d := filepath.Join(tmp, driver.TempPrefix+name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if mark != nil {
			if err := mark(d); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	// The dead process as an owner: this boot and PID namespace, its pid.
	deadOwner, err := driver.SelfOwner()
	if err != nil {
		t.Fatal(err)
	}
	deadOwner.PID = dead.Process.Pid
	gone := mk("bin-1", func(d string) error { return driver.WriteOwner(d, deadOwner) })
	live := mk("bin-2", driver.MarkOwned)
	unowned := mk("bin-3", nil)
	if _, err := session.SweepStale(tmp, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Fatalf("a dead owner's directory stayed: %v", err)
	}
	for _, d := range []string{live, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}
