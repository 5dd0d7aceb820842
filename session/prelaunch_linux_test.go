package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestFirstLaunchIsPrelaunched runs a session's first launch three times,
// each on a driver of its own not started yet (one driver dir, its package
// the installed one), on a browser binary that logs each start:
//  1. no user agent kept for the binary: its probe runs, and the driver
//     starts without a browser (2 starts: the probe's and the launch's);
//  2. the user agent known, no record yet: the launch is kept (1 start);
//  3. the driver starts the browser from the record, and Playwright's
//     launch takes it (1 start, the record not written again), with the
//     session's context options (the page has the headed user agent).
//
// Nothing started is left running.
func TestFirstLaunchIsPrelaunched(t *testing.T) {
	testtier.BrowserTier(t)
	inst := driver.Options{}.Resolved()
	if _, err := os.Stat(inst.CLIPath()); err != nil {
		t.Fatalf("driver not installed (run `go run ./cmd/cloakbrowser-mcp install --driver-only`): %v", err)
	}
	drvDir := t.TempDir()
	if err := os.Symlink(filepath.Join(inst.Dir, "package"), filepath.Join(drvDir, "package")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	wrapper := filepath.Join(dir, "chromium-wrapper")
	body := "#!/bin/sh\necho $$ >> '" + starts + "'\nexec " + chromium(t) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := cloakbrowser.BinaryInfo{BinaryPath: wrapper, Engine: cloakbrowser.EngineChromium, Source: cloakbrowser.SourceSystem, CacheRoot: dir}
	pids := func() []string {
		b, _ := os.ReadFile(starts)
		return strings.Fields(string(b))
	}
	var record os.FileInfo
	for run, want := range []struct {
		log    string
		starts int
	}{
		{"", 2},
		{"its launch is kept", 1},
		{"from the last launch of these options", 1},
	} {
		var log mcptest.SyncBuffer
		cfg := session.Config{
			ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil },
			Headless:      true,
			NoSandbox:     true,
			Log:           zerolog.New(&log).Level(zerolog.DebugLevel),
		}
		before := len(pids())
		drv := driver.New(driver.Options{Dir: drvDir}, false)
		s := session.New(t.Name(), drv, cfg)
		if ua := pageUserAgent(t, s); !headed(ua) {
			t.Errorf("run %d: page's user agent %q: want the headed one", run+1, ua)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := drv.Close(); err != nil {
			t.Fatal(err)
		}
		text := log.String()
		prelaunched := strings.Contains(text, "the driver starts")
		if want.log == "" && prelaunched || want.log != "" && !strings.Contains(text, want.log) {
			t.Errorf("run %d: want %q in the log, got:\n%s", run+1, want.log, text)
		}
		if n := len(pids()) - before; n != want.starts {
			t.Errorf("run %d: the browser started %d times, want %d", run+1, n, want.starts)
		}
		files, _ := filepath.Glob(filepath.Join(drvDir, "prelaunch", "*.json"))
		switch {
		case run == 0 && len(files) != 0:
			t.Fatalf("run 1 kept a record: %v", files)
		case run > 0 && len(files) != 1:
			t.Fatalf("run %d: records %v, want one", run+1, files)
		case run == 1:
			record, _ = os.Stat(files[0])
		case run == 2:
			if now, err := os.Stat(files[0]); err != nil || !os.SameFile(record, now) {
				t.Errorf("run 3 wrote the record again (%v): its prediction was not taken", err)
			}
		}
	}
	for _, p := range pids() {
		pid, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("start log: %q", p)
		}
		testtier.Eventually(t, 10*time.Second, "browser "+p+" to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
	}
}
