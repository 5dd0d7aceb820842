package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Upstream names the reference server this project is measured against.
const (
	UpstreamPackage = "@playwright/mcp"
	UpstreamVersion = "0.0.83"
)

// UpstreamDir is where InstallUpstream puts @playwright/mcp unless
// CLOAKBROWSER_MCP_UPSTREAM_DIR says otherwise.
func UpstreamDir() string {
	if d := os.Getenv("CLOAKBROWSER_MCP_UPSTREAM_DIR"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "cloakbrowser-mcp", "upstream", "playwright-mcp-"+UpstreamVersion)
}

var upstreamMu sync.Mutex

// InstallUpstream installs @playwright/mcp at UpstreamVersion into dir with
// npm (never its browsers) unless it is already there, and returns its cli.js.
// npm is the npm binary; empty means npm on PATH.
func InstallUpstream(ctx context.Context, npm, dir string, log io.Writer) (string, error) {
	upstreamMu.Lock()
	defer upstreamMu.Unlock()
	pkgDir := filepath.Join(dir, "node_modules", "@playwright", "mcp")
	cli := filepath.Join(pkgDir, "cli.js")
	if v, err := packageVersion(filepath.Join(pkgDir, "package.json")); err == nil && v == UpstreamVersion {
		if _, err := os.Stat(cli); err == nil {
			return cli, nil
		}
	}
	if npm == "" {
		var err error
		if npm, err = exec.LookPath("npm"); err != nil {
			return "", fmt.Errorf("npm not found: install Node.js 20 with npm (Debian: apt-get install nodejs npm)")
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pj := filepath.Join(dir, "package.json")
	if _, err := os.Stat(pj); err != nil {
		if err := os.WriteFile(pj, []byte(`{"name":"cloakbrowser-mcp-upstream","private":true}`+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--save-exact", UpstreamPackage+"@"+UpstreamVersion)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm install %s@%s in %s: %w", UpstreamPackage, UpstreamVersion, dir, err)
	}
	if v, err := packageVersion(filepath.Join(pkgDir, "package.json")); err != nil || v != UpstreamVersion {
		return "", fmt.Errorf("npm installed %s %q, want %s (%v)", UpstreamPackage, v, UpstreamVersion, err)
	}
	return cli, nil
}

func packageVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return p.Version, nil
}

// StartUpstream installs (if needed) and starts @playwright/mcp over stdio
// on the given Chromium, headless with an in-memory profile, and returns an
// initialized client. Its working directory and output dir are temporary;
// extra are more upstream flags (e.g. --codegen python).
func StartUpstream(t testing.TB, chromium string, extra ...string) *Client {
	BrowserTier(t)
	t.Helper()
	node, o := upstreamCommand(t, chromium, extra)
	return StartBinary(t, node, o)
}

// StartUpstreamRaw is StartUpstream driven line by line (Raw): for what a
// client library would reshape, such as tools/list as upstream writes it.
func StartUpstreamRaw(t testing.TB, chromium string, extra ...string) *Raw {
	BrowserTier(t)
	t.Helper()
	node, o := upstreamCommand(t, chromium, extra)
	return StartRaw(t, node, o)
}

func upstreamCommand(t testing.TB, chromium string, extra []string) (string, Options) {
	t.Helper()
	log := &SyncBuffer{}
	cli, err := InstallUpstream(context.Background(), "", UpstreamDir(), log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js 20")
	}
	work := t.TempDir()
	args := []string{cli, "--executable-path", chromium, "--headless", "--isolated", "--no-sandbox", "--output-dir", filepath.Join(work, "out")}
	args = append(args, extra...)
	return node, Options{Args: args, Env: []string{"HOME=" + work}, Dir: work}
}
