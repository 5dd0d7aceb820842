package mcptest

import (
	"os"
	"sync"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// BrowserTier skips t in the unit tier (-short); see internal/testtier.
func BrowserTier(t testing.TB) {
	t.Helper()
	testtier.BrowserTier(t)
}

var (
	sharedMu  sync.Mutex
	sharedDrv *driver.Driver
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
		if cur := os.Getenv("TMPDIR"); cur != buildTemp {
			_ = os.Setenv("TMPDIR", buildTemp)
			defer os.Setenv("TMPDIR", cur)
		}
		sharedDrv = driver.Start(driver.Options{Log: driverLog{}}, true)
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
