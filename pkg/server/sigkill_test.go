//go:build linux

package server_test

import (
	"fmt"
	"os"
	"path/filepath"
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
// every process it started dies with it at once, and the temp dirs it could
// not remove (its profile, its driver's TMPDIR) go at the next server's
// start.
func TestSIGKILLLeavesNothingBehind(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	mcptest.Chromium(t)
	srv := pages(t)
	env, tmp := serverEnv(t)
	// The server's processes are found by a variable every one of them
	// inherits, and by parentage (see proctree), not by the code under test.
	tree := fmt.Sprintf("CLOAKBROWSER_MCP_TEST_TREE=%s-%d", t.Name(), time.Now().UnixNano())
	opts := mcptest.Options{Args: []string{"--no-download", "--output-dir", filepath.Join(tmp, "out")}, Env: append(env, tree)}
	c := mcptest.StartBinary(t, mcptest.Binary(t), opts)
	c.MustCall(t, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"})

	started := proctree.Marked(tree)
	var sawDriver, sawBrowser bool
	for _, p := range started {
		cmd := procCmdline(p.PID)
		sawDriver = sawDriver || strings.Contains(cmd, "run-driver")
		sawBrowser = sawBrowser || strings.Contains(cmd, "--user-data-dir=")
	}
	if !sawDriver || !sawBrowser {
		t.Fatalf("want the driver and the browser among the server's processes:%s", describeProcs(started))
	}
	left, err := filepath.Glob(filepath.Join(tmp, driver.TempPrefix+"*"))
	if err != nil || len(left) < 2 {
		t.Fatalf("want a profile and the driver's temp dir in %s, got %v %v", tmp, left, err)
	}

	if err := syscall.Kill(c.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testtier.EventuallyState(t, 10*time.Second, "the server's processes to end after its SIGKILL", func() (bool, string) {
		alive := proctree.Remaining(tree, started) // the killed server reads as gone once a zombie
		return len(alive) == 0, "alive:" + describeProcs(alive)
	})
	for _, dir := range left {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s went with the killed server (%v): nothing left to sweep", dir, err)
		}
	}

	// The next server sweeps at start.
	mcptest.StartBinary(t, mcptest.Binary(t), opts)
	testtier.EventuallyState(t, 10*time.Second, "the next server's start to sweep what the killed one left", func() (bool, string) {
		var stale []string
		for _, dir := range left {
			if _, err := os.Lstat(dir); err == nil {
				stale = append(stale, dir)
			}
		}
		return len(stale) == 0, fmt.Sprintf("%v left (is the sweep called in server.New, and session.WriteOwnerMarker where the profile is made?)", stale)
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
