package mcptest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// RecordUpstreamEnv, set to 1, makes Recorded run the real upstream
// (@playwright/mcp 0.0.83, Playwright's own asLocator) and write what it
// said under testdata/upstream/ instead of reading the recording. The
// upstream task runs the comparison tests so and fails when git then shows
// a difference in testdata/upstream/.
const RecordUpstreamEnv = "CLOAKBROWSER_MCP_RECORD_UPSTREAM"

// Recording says whether this run records upstream (RecordUpstreamEnv).
func Recording() bool { return os.Getenv(RecordUpstreamEnv) == "1" }

// UpstreamTier skips t unless this run records upstream: t runs upstream
// itself (npm install, a second server) and belongs to the upstream task.
func UpstreamTier(t testing.TB) {
	t.Helper()
	BrowserTier(t)
	if !Recording() {
		t.Skip("upstream task only (go tool -modfile=tools.mod task upstream): runs @playwright/mcp itself")
	}
}

// Recorded returns upstream's output for name (a path under
// testdata/upstream/): recorded by running record when Recording, else read
// from the recording. Comparison tests hold ours against it, so the suite
// needs neither npm nor a second server to check that we say what upstream
// says.
func Recorded(t testing.TB, name string, record func() string) string {
	t.Helper()
	path := filepath.Join(ModuleRoot(t), "testdata", "upstream", filepath.FromSlash(name))
	if Recording() {
		BrowserTier(t)
		got := record()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return got
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no recording of upstream's output: %v (record it: go tool -modfile=tools.mod task upstream)", err)
	}
	return string(b)
}

var loopbackPort = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)

// NoPorts replaces the ports of loopback URLs (each test run serves its
// pages on new ones) with PORT, so that recordings compare.
func NoPorts(s string) string { return loopbackPort.ReplaceAllString(s, "${1}:PORT") }

// ModuleRoot is the directory of this module's go.mod, found from the
// test's working directory upwards.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
