package driver

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/mxschmitt/playwright-go"
)

// nodeFromEnv is PLAYWRIGHT_NODEJS_PATH as the test process got it.
var nodeFromEnv = os.Getenv("PLAYWRIGHT_NODEJS_PATH")

func fakeNode(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckNode(t *testing.T) {
	cases := []struct {
		name, path, want string
	}{
		{"none", "", "install Node.js 20"},
		{"missing", "/no/such/node", "run /no/such/node --version"},
		{"too old", fakeNode(t, "v18.19.0"), "is v18.19.0"},
		{"garbage", fakeNode(t, "hello"), `printed "hello"`},
		{"ok", fakeNode(t, "v20.20.2"), ""},
		{"newer ok", fakeNode(t, "v24.1.0"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckNode(t.Context(), tc.path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrNoNode) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrNoNode with %q", err, tc.want)
			}
		})
	}
}

func TestCheckReportsMissingDriver(t *testing.T) {
	dir := t.TempDir()
	_, err := Check(t.Context(), Options{Dir: dir, NodePath: fakeNode(t, "v20.0.0")})
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "cloakbrowser-mcp install") {
		t.Fatalf("err %v", err)
	}
}

func TestStartWithoutDriverFailsClearly(t *testing.T) {
	d := Start(Options{Dir: t.TempDir(), NodePath: fakeNode(t, "v20.0.0")}, false)
	_, err := d.Get(t.Context())
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInstallFromUnreachableRegistry shows the error an offline machine gets.
func TestInstallFromUnreachableRegistry(t *testing.T) {
	t.Setenv("PLAYWRIGHT_GO_NPM_REGISTRY", "")
	nodeBefore := os.Getenv("PLAYWRIGHT_NODEJS_PATH")
	_, err := Install(t.Context(), Options{Dir: t.TempDir(), NodePath: fakeNode(t, "v20.0.0"), Registry: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1") || !strings.Contains(err.Error(), "PLAYWRIGHT_GO_NPM_REGISTRY") {
		t.Fatalf("err %v", err)
	}
	// The node and registry reached playwright-go for that call only.
	if got := os.Getenv("PLAYWRIGHT_NODEJS_PATH"); got != nodeBefore {
		t.Errorf("PLAYWRIGHT_NODEJS_PATH after Install = %q, want the process's own %q", got, nodeBefore)
	}
	if v, set := os.LookupEnv("PLAYWRIGHT_GO_NPM_REGISTRY"); v != "" {
		t.Errorf("PLAYWRIGHT_GO_NPM_REGISTRY after Install = %q (set %v), want it as before", v, set)
	}
}

// TestRestartAfterDeath kills the running driver: Exited fires, and the next
// Get starts one new driver shared by concurrent callers. Without a death,
// Get never starts another.
func TestRestartAfterDeath(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", nodeFromEnv)
	d := Start(Options{}, true)
	defer d.Close()
	pw1, err := d.Get(t.Context())
	if err != nil {
		t.Fatalf("the real driver is needed (`cloakbrowser-mcp install`): %v", err)
	}
	if again, _ := d.Get(t.Context()); again != pw1 || d.Restarts() != 0 {
		t.Fatal("Get started a second driver while the first runs")
	}
	exited := d.Exited(pw1)
	pid := d.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("driver death not noticed")
	}
	var wg sync.WaitGroup
	got := make([]*playwright.Playwright, 4)
	for i := range got {
		wg.Go(func() {
			pw, err := d.Get(t.Context())
			if err != nil {
				t.Error(err)
			}
			got[i] = pw
		})
	}
	wg.Wait()
	for _, pw := range got {
		if pw == nil || pw == pw1 || pw != got[0] {
			t.Fatalf("after the death: %p (first %p, dead %p); want one new driver for all", pw, got[0], pw1)
		}
	}
	if d.Restarts() != 1 || d.Pid() == pid || d.Pid() == 0 {
		t.Fatalf("restarts %d, pid %d (dead %d)", d.Restarts(), d.Pid(), pid)
	}
	select {
	case <-d.Exited(got[0]):
		t.Fatal("the new driver reads as exited")
	default:
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Exited(got[0]):
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not stop the driver")
	}
	if _, err := d.Get(t.Context()); !errors.Is(err, ErrStopped) {
		t.Fatalf("Get after Close: %v, want ErrStopped", err)
	}
}

func TestVersionShim(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "package"), 0o755)
	node := fakeNode(t, "v20.0.0")
	o := Options{Dir: dir, NodePath: node}
	if p, _ := versionShim(o); p != "" {
		t.Fatal("shim written without a package.json")
	}
	fakePackage(t, dir, "1.52.0")
	if p, _ := versionShim(o); p != "" {
		t.Fatal("shim written for another version")
	}
	fakePackage(t, dir, PlaywrightVersion)
	p, err := versionShim(o)
	if err != nil || p == "" {
		t.Fatalf("shim: %q %v", p, err)
	}
	out, err := exec.Command(p, "cli.js", "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "Version "+PlaywrightVersion {
		t.Fatalf("version answer %q %v", out, err)
	}
	// Anything else reaches the real node (the fake prints its version).
	out, err = exec.Command(p, "cli.js", "run-driver").Output()
	if err != nil || strings.TrimSpace(string(out)) != "v20.0.0" {
		t.Fatalf("passthrough %q %v", out, err)
	}
}

// TestShimIsPerRun starts the real driver twice: the environment names the
// real node between runs, so the second run does not wrap the first's shim.
func TestShimIsPerRun(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "") // node on PATH
	o := Options{}.Resolved()
	if _, err := os.Stat(o.CLIPath()); err != nil {
		t.Fatalf("driver not installed (run `go run ./cmd/cloakbrowser-mcp install --driver-only`): %v", err)
	}
	for i := 0; i < 2; i++ {
		d := Start(Options{}, false)
		if _, err := d.Get(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := os.Getenv("PLAYWRIGHT_NODEJS_PATH"); strings.HasPrefix(got, o.Dir) {
			t.Fatalf("PLAYWRIGHT_NODEJS_PATH left pointing at a shim: %s", got)
		}
		d.Close()
	}
	shim, err := versionShim(o)
	if err != nil || shim == "" {
		t.Fatalf("shim: %q %v", shim, err)
	}
	b, _ := os.ReadFile(shim)
	if strings.Contains(string(b), "'"+filepath.Join(o.Dir, "node-")) {
		t.Fatalf("shim %s wraps another shim:\n%s", shim, b)
	}
}
