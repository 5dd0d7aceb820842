package session

import (
	"os"
	"strings"
)

// browserEnv is the environment of the browsers we launch: ours, with our
// own TMPDIR rather than the driver's private one. Chromium puts its
// singleton socket under TMPDIR, and a socket path may not pass ~107 bytes:
// the private directory nested in a long TMPDIR would break every launch.
// The browser is still found by the stale-directory sweep as a descendant
// of the driver.
func browserEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(k, "CLOAKBROWSER_MCP_DRIVER_") {
			continue
		}
		env[k] = v
	}
	env["TMPDIR"] = os.TempDir()
	return env
}
