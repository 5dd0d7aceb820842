package session_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// drv is the package's Playwright driver, shared by its tests as a server
// shares one per process.
var drv *driver.Driver

// TestMain stops the driver after the tests, then fails the package when a
// goroutine outlives them (a session's browser watcher, a CDP proxy, the
// driver's own).
func TestMain(m *testing.M) {
	drv = driver.Start(driver.Options{}, true)
	goleak.VerifyTestMain(runThen{m, func() { _ = drv.Close() }})
}

// runThen runs the tests, then after (before goleak looks).
type runThen struct {
	m     *testing.M
	after func()
}

func (r runThen) Run() int {
	code := r.m.Run()
	r.after()
	return code
}
