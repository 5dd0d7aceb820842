package mcptest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// BrowserTier skips t in the unit tier (-short); see internal/testtier.
func BrowserTier(t testing.TB) {
	t.Helper()
	testtier.BrowserTier(t)
}

var (
	sharedMu      sync.Mutex
	sharedDrv     *driver.Driver
	sharedBrowser *session.SharedBrowser
)

// SharedDriver returns the test binary's Playwright driver, starting it on
// first use (installing it if it is missing, as the server does); it is
// stopped when the tests end (testtier.Main). It skips t in the unit tier.
func SharedDriver(t testing.TB) *driver.Driver {
	t.Helper()
	BrowserTier(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedDrv == nil {
		// The driver makes its private temp dir now, under TMPDIR: under the
		// process's own, not under a dir the first test made (t.Setenv) and
		// removes when it ends.
		inProcessTemp(func() { sharedDrv = driver.Start(driver.Options{Log: driverLog{}}, true) })
		testtier.AtEnd(func() {
			sharedMu.Lock()
			defer sharedMu.Unlock()
			_ = sharedDrv.Close()
			sharedDrv = nil
		})
	}
	return sharedDrv
}

// driverLog drops the shared driver's log: each server logs its own calls,
// and a driver line belongs to no one test.
type driverLog struct{}

func (driverLog) Write(p []byte) (int, error) { return len(p), nil }

// SharedBrowser returns the test binary's browser, on the shared driver: a
// server started by StartInProcess opens a fresh context in it (its own
// cookies, storage, pages and downloads) instead of launching a browser,
// whenever its launch settings are those of a default server (no profile,
// no CDP endpoint, the same binary and arguments; session.SharedBrowser.Fits).
// The browser is launched on first use and closed when the tests end
// (testtier.Main); it skips t in the unit tier.
func SharedBrowser(t testing.TB) *session.SharedBrowser {
	t.Helper()
	drv := SharedDriver(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedBrowser == nil {
		cfg, _, err := config.Load([]string{"--no-download"}, os.Getenv, nil)
		if err != nil {
			t.Fatalf("the shared browser's configuration: %v", err)
		}
		// A cache of its own, empty: a test server's is too (serverEnv), so
		// both resolve the same system Chromium.
		cache, err := os.MkdirTemp(buildTemp, driver.TempPrefix+"cache-")
		if err != nil {
			t.Fatal(err)
		}
		_ = driver.MarkOwned(cache)
		co := server.CloakOptions(cfg)
		co.CacheDir = cache
		var (
			once sync.Once
			bin  cloakbrowser.BinaryInfo
			berr error
		)
		sc := server.LaunchConfig(cfg, cloakbrowser.BinaryInfo{})
		sc.ResolveBinary = func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
			once.Do(func() { bin, berr = cloakbrowser.Resolve(ctx, co) })
			return bin, berr
		}
		// The browser takes its environment now: TMPDIR the process's own,
		// not a dir the first test made (t.Setenv) and removes when it ends.
		var b *session.SharedBrowser
		inProcessTemp(func() { b = session.NewSharedBrowser(drv, sc) })
		sharedBrowser = b
		testtier.AtEnd(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = b.Close(ctx)
			_ = os.RemoveAll(cache)
			sharedMu.Lock()
			sharedBrowser = nil
			sharedMu.Unlock()
		})
	}
	return sharedBrowser
}

// inProcessTemp runs fn with TMPDIR set to the process's own temp dir (as
// it was when the package loaded), for what outlives the test that made it.
// Callers hold sharedMu.
func inProcessTemp(fn func()) {
	if cur := os.Getenv("TMPDIR"); cur != buildTemp {
		_ = os.Setenv("TMPDIR", buildTemp)
		defer os.Setenv("TMPDIR", cur)
	}
	fn()
}
