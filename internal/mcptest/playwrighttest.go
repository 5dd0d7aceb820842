package mcptest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// PlaywrightTestVersion is the @playwright/test the exported TypeScript
// tests run under (the version of the Playwright driver we pin).
const PlaywrightTestVersion = "1.64.1"

var playwrightTestMu sync.Mutex

// PlaywrightTestDir is where InstallPlaywrightTest keeps @playwright/test:
// under the user cache dir, so the install is made once across test runs.
func PlaywrightTestDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "cloakbrowser-mcp", "playwright-test-"+PlaywrightTestVersion)
}

// InstallPlaywrightTest installs @playwright/test at PlaywrightTestVersion
// from the npm registry (never its browsers) into PlaywrightTestDir unless
// it is there, and returns the directory whose node_modules holds it.
func InstallPlaywrightTest(ctx context.Context, log io.Writer) (string, error) {
	playwrightTestMu.Lock()
	defer playwrightTestMu.Unlock()
	dir := PlaywrightTestDir()
	pj := filepath.Join(dir, "node_modules", "@playwright", "test", "package.json")
	if v, err := packageVersion(pj); err == nil && v == PlaywrightTestVersion {
		return dir, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm not found: install Node.js 20 with npm (Debian: apt-get install nodejs npm)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"cloakbrowser-mcp-playwright-test","private":true}`+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--save-exact", "@playwright/test@"+PlaywrightTestVersion)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install @playwright/test@%s in %s: %w", PlaywrightTestVersion, dir, err)
	}
	if v, err := packageVersion(pj); err != nil || v != PlaywrightTestVersion {
		return "", fmt.Errorf("npm installed @playwright/test %q, want %s (%v)", v, PlaywrightTestVersion, err)
	}
	return dir, nil
}
