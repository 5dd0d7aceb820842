//go:build linux

package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// TestSIGKILLLeavesNothingBehind SIGKILLs a server with a browser open:
// every process it started dies with it, and the temp dirs it could not
// remove (its profile, its driver's TMPDIR) go a moment later, removed by
// its reaper, with no other server started. A server whose reaper is killed
// too leaves them to the next server's start, which sweeps them.
func TestSIGKILLLeavesNothingBehind(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	mcptest.Chromium(t)
	srv := pages(t)
	env, tmp := serverEnv(t)
	// start starts a server and opens a page; it returns the server, the
	// processes it started and its temp dirs. They are found by a
	// variable every one of them inherits, and by parentage (see
	// proctree), not by the code under test.
	start := func(t *testing.T, name string) (*mcptest.Client, string, []proctree.Proc, []string) {
		t.Helper()
		tree := fmt.Sprintf("CLOAKBROWSER_MCP_TEST_TREE=%s-%s-%d", t.Name(), name, time.Now().UnixNano())
		opts := mcptest.Options{Args: []string{"--no-download", "--output-dir", filepath.Join(tmp, "out")}, Env: append(env, tree)}
		before, _ := filepath.Glob(filepath.Join(tmp, driver.TempPrefix+"*"))
		c := mcptest.StartBinary(t, mcptest.Binary(t), opts)
		c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"})
		started := proctree.Marked(tree)
		var sawDriver, sawBrowser, sawReaper bool
		for _, p := range started {
			cmd := procCmdline(p.PID)
			sawDriver = sawDriver || strings.Contains(cmd, "run-driver")
			sawBrowser = sawBrowser || strings.Contains(cmd, "--user-data-dir=")
			sawReaper = sawReaper || strings.Contains(cmd, "cloakbrowser-mcp-reaper")
		}
		if !sawDriver || !sawBrowser || !sawReaper {
			t.Fatalf("want the driver, the browser and the reaper among the server's processes:%s", describeProcs(started))
		}
		all, err := filepath.Glob(filepath.Join(tmp, driver.TempPrefix+"*"))
		var dirs []string
		for _, d := range all {
			if !slices.Contains(before, d) {
				dirs = append(dirs, d)
			}
		}
		if err != nil || len(dirs) < 2 {
			t.Fatalf("want a profile and the driver's temp dir in %s, got %v %v", tmp, dirs, err)
		}
		return c, tree, started, dirs
	}
	kill := func(t *testing.T, pid int) {
		t.Helper()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	ended := func(t *testing.T, tree string, started []proctree.Proc) {
		t.Helper()
		testtier.EventuallyState(t, 20*time.Second, "the server's processes to end after its SIGKILL", func() (bool, string) {
			alive := proctree.Remaining(tree, started) // the killed server reads as gone once a zombie
			return len(alive) == 0, "alive:" + describeProcs(alive)
		})
	}
	stale := func(dirs []string) []string {
		var left []string
		for _, dir := range dirs {
			if _, err := os.Lstat(dir); err == nil {
				left = append(left, dir)
			}
		}
		return left
	}

	c, tree, started, dirs := start(t, "first")
	kill(t, c.Pid)
	ended(t, tree, started) // the reaper too, once it is done
	if left := stale(dirs); len(left) > 0 {
		t.Fatalf("%v left after the killed server's processes ended (is startReaper called in driver.MarkOwned?)", left)
	}

	// Without its reaper, the dirs stay until the next server's start.
	c, tree, started, dirs = start(t, "second")
	for _, p := range started {
		if strings.Contains(procCmdline(p.PID), "cloakbrowser-mcp-reaper") {
			kill(t, p.PID)
		}
	}
	kill(t, c.Pid)
	ended(t, tree, started)
	if left := stale(dirs); len(left) != len(dirs) {
		t.Fatalf("only %v of %v left with the reaper killed: nothing left to sweep", left, dirs)
	}
	start(t, "third")
	testtier.EventuallyState(t, 10*time.Second, "the next server's start to sweep what the killed one left", func() (bool, string) {
		left := stale(dirs)
		return len(left) == 0, fmt.Sprintf("%v left (is the sweep called in server.New, and session.WriteOwnerMarker where the profile is made?)", left)
	})
}

func procCmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

func describeProcs(ps []proctree.Proc) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %d %s", p.PID, procCmdline(p.PID))
	}
	return b.String()
}
