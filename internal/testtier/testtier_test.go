package testtier

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// TestTripwireRecordsAndFails: a stand-in fails the program that started
// it and leaves a line Main reports.
func TestTripwireRecordsAndFails(t *testing.T) {
	tw, err := NewTripwire(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	err = exec.Command(filepath.Join(tw.Dir, "node"), "cli.js", "run-driver").Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 97 {
		t.Fatalf("the node stand-in: %v, want exit status 97", err)
	}
	if got := tw.Reached(); !slices.Equal(got, []string{"node cli.js run-driver"}) {
		t.Fatalf("Reached() = %q", got)
	}
	tw.Reset()
	if got := tw.Reached(); got != nil {
		t.Fatalf("after Reset, Reached() = %q", got)
	}
}

// TestUnitTierFindsTheTripwire: in -short, node, npm and Chromium found on
// PATH or named by the environment are the stand-ins, so a test that
// reaches for them fails the binary.
func TestUnitTierFindsTheTripwire(t *testing.T) {
	tw := ActiveTripwire()
	if !testing.Short() {
		if tw != nil {
			t.Fatal("a tripwire is installed outside the unit tier")
		}
		t.Skip("unit tier only")
	}
	if tw == nil {
		t.Fatal("no tripwire installed in the unit tier")
	}
	for _, name := range tripwireNames {
		if p, err := exec.LookPath(name); err != nil || filepath.Dir(p) != tw.Dir {
			t.Errorf("LookPath(%q) = %q, %v; want the stand-in in %s", name, p, err, tw.Dir)
		}
	}
	for k, name := range tripwireEnv {
		if got := os.Getenv(k); got != filepath.Join(tw.Dir, name) {
			t.Errorf("$%s = %q, want the %s stand-in", k, got, name)
		}
	}
}
