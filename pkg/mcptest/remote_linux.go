package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// RemoteChromium starts a Chromium that listens for DevTools on a loopback
// port — a browser someone else started — and returns its
// http://127.0.0.1:port endpoint. The browser dies with the test process and
// is killed, its profile removed, when the test ends.
func RemoteChromium(t testing.TB) string {
	t.Helper()
	profile := t.TempDir()
	args := append([]string{"--headless", "--no-sandbox", "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + profile}, cloakbrowser.NetworkQuietArgs...)
	cmd := exec.Command(Chromium(t), append(args, "about:blank")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			if port, _, ok := strings.Cut(string(b), "\n"); ok && port != "" {
				return "http://127.0.0.1:" + port
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("Chromium did not write DevToolsActivePort")
	return ""
}
