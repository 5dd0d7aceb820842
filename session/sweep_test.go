package session_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

func TestWriteOwnerMarker(t *testing.T) {
	dir := t.TempDir()
	if err := session.WriteOwnerMarker(dir); err != nil {
		t.Fatal(err)
	}
	o, err := driver.ReadOwner(dir)
	if err != nil || o.PID != os.Getpid() || !o.Alive() {
		t.Fatalf("owner %+v, %v; want this live process", o, err)
	}
	if err := session.WriteOwnerMarker(dir); err == nil {
		t.Fatal("marked twice")
	}
}

type sweepCase struct {
	name    string
	dir     string
	removed bool
	procs   []*exec.Cmd // processes using dir
}

// TestSweepStale lays out what servers leave in a temp dir and sweeps it:
// only our directories whose owner is gone go, with what still uses them.
func TestSweepStale(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owners are told apart through /proc")
	}
	noGoroutineLeaks(t)
	me, err := driver.SelfOwner()
	if err != nil {
		t.Fatal(err)
	}
	dead := me
	dead.PID = 1 << 23 // above PID_MAX_LIMIT
	reused := me
	reused.Start--
	tmp := t.TempDir()
	mk := func(name string, owner *driver.Owner) string {
		t.Helper()
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, "Default"), 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != nil {
			if err := driver.WriteOwner(dir, *owner); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	// running starts a process using dir, as a browser left behind would.
	running := func(dir string, how string) *exec.Cmd {
		t.Helper()
		var cmd *exec.Cmd
		switch how {
		case "profile":
			cmd = exec.Command("/bin/sh", "-c", "while :; do sleep 1; done", "sh", "--user-data-dir="+dir)
		case "tmpdir":
			cmd = exec.Command("sleep", "60")
			cmd.Env = append(os.Environ(), "TMPDIR="+dir)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}

	cases := []sweepCase{
		{name: "owner gone", dir: mk("cloakbrowser-mcp-profile-1", &dead), removed: true},
		{name: "owner's PID reused", dir: mk("cloakbrowser-mcp-4242-1", &reused), removed: true},
		{name: "owner alive", dir: mk("cloakbrowser-mcp-profile-2", &me)},
		{name: "no marker", dir: mk("cloakbrowser-mcp-profile-3", nil)},
		{name: "not our name", dir: mk("chromium-profile-1", &dead)},
		{name: "not a directory", dir: func() string {
			p := filepath.Join(tmp, "cloakbrowser-mcp-file")
			os.WriteFile(p, nil, 0o600)
			return p
		}()},
	}
	// A symlink of our name to a stale directory elsewhere: neither goes.
	elsewhere := filepath.Join(t.TempDir(), "cloakbrowser-mcp-elsewhere")
	os.MkdirAll(elsewhere, 0o700)
	driver.WriteOwner(elsewhere, dead)
	link := filepath.Join(tmp, "cloakbrowser-mcp-link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	cases = append(cases,
		sweepCase{name: "symlink", dir: link},
		sweepCase{name: "symlink target", dir: elsewhere})
	// Stale directories still in use: a browser on the profile, a driver
	// with the directory as its TMPDIR.
	for _, how := range []string{"profile", "tmpdir"} {
		dir := mk("cloakbrowser-mcp-busy-"+how, &dead)
		cases = append(cases, sweepCase{name: "owner gone, in use as " + how, dir: dir, removed: true, procs: []*exec.Cmd{running(dir, how)}})
	}
	// A live owner's directory in use: its processes are left alone.
	busyLive := mk("cloakbrowser-mcp-busy-live", &me)
	cases = append(cases, sweepCase{name: "owner alive, in use", dir: busyLive, procs: []*exec.Cmd{running(busyLive, "profile")}})

	removed, err := session.SweepStale(tmp, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, statErr := os.Lstat(tc.dir)
			gone := errors.Is(statErr, os.ErrNotExist)
			if gone != tc.removed || slices.Contains(removed, tc.dir) != tc.removed {
				t.Fatalf("removed %v (reported %v), want %v", gone, removed, tc.removed)
			}
			for _, cmd := range tc.procs {
				if !tc.removed {
					if !slices.Contains(driver.PIDsUsing(tc.dir), cmd.Process.Pid) {
						t.Fatal("a live owner's process was killed")
					}
					continue
				}
				err := cmd.Wait()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("process using the stale dir: %v, want killed", err)
				}
			}
		})
	}
	if again, err := session.SweepStale(tmp, zerolog.Nop()); err != nil || len(again) != 0 {
		t.Fatalf("second sweep removed %v, %v", again, err)
	}
}
