package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// RemoteChromium starts a Chromium that listens for DevTools on a loopback
// port — a browser someone else started — and returns its
// http://127.0.0.1:port endpoint. The browser dies with the test process and
// is killed, its profile removed, when the test ends.
func RemoteChromium(t testing.TB) string {
	t.Helper()
	return StartRemoteChromium(t).Endpoint
}

// Remote is a Chromium started by StartRemoteChromium.
type Remote struct {
	// Endpoint is the browser's CDP endpoint, http://127.0.0.1:port.
	Endpoint string
	// Pid is the browser's main process (the leader of its process group).
	Pid int

	once sync.Once
	cmd  *exec.Cmd
}

// Kill SIGKILLs the browser's whole process group (as a crashed pool
// member dies) and waits for it. It is safe to call more than once; the
// test's cleanup calls it too.
func (r *Remote) Kill() {
	r.once.Do(func() {
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		_ = r.cmd.Wait()
	})
}

// StartRemoteChromium is RemoteChromium for tests that also kill the
// browser while a server is attached to it.
func StartRemoteChromium(t testing.TB) *Remote {
	t.Helper()
	profile := t.TempDir()
	args := append([]string{"--headless", "--no-sandbox", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + profile}, cloakbrowser.NetworkQuietArgs()...)
	cmd := exec.Command(Chromium(t), append(args, "about:blank")...)
	proctree.Own(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Remote{Pid: cmd.Process.Pid, cmd: cmd}
	t.Cleanup(r.Kill)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			if port, _, ok := strings.Cut(string(b), "\n"); ok && port != "" {
				r.Endpoint = "http://127.0.0.1:" + port
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("Chromium did not write DevToolsActivePort")
	return nil
}
