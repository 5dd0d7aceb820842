// Package testtier holds the rules of this module's two test tiers, for every
// package's TestMain.
//
//   - The unit tier, `go test -short ./...`, starts no browser, no driver,
//     no npm install and no service (redis-server): a test that needs them
//     calls BrowserTier (the helpers in internal/mcptest do), which skips
//     it; Main puts a tripwire in front of node, npm, Chromium and
//     redis-server that fails the test binary if anything reaches them
//     anyway.
//   - The browser tier (no -short) runs everything; helpers that share one
//     Playwright driver per test binary register its stop with AtEnd.
//
// Both tiers' tests wait for a condition with Eventually (or
// EventuallyState), not with loops of their own.
package testtier

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// BrowserTier skips t in the unit tier (-short): t needs a browser, the
// Playwright driver or an npm install.
func BrowserTier(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tier: needs Chromium, the Playwright driver, npm or redis-server (run without -short)")
	}
}

var (
	endMu sync.Mutex
	atEnd []func()
)

// AtEnd registers fn to run once the test binary's tests have ended, before
// the goroutine-leak check (a shared driver's stop, a built binary's
// removal).
func AtEnd(fn func()) {
	endMu.Lock()
	defer endMu.Unlock()
	atEnd = append(atEnd, fn)
}

func runAtEnd() {
	endMu.Lock()
	fns := atEnd
	atEnd = nil
	endMu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// tripwireNames are the programs the unit tier must never start.
var tripwireNames = []string{"node", "npm", "npx", "chromium", "chromium-browser", "google-chrome", "chrome", "redis-server"}

// tripwireEnv are variables that name a browser or node directly; the unit
// tier points them at the tripwire too.
var tripwireEnv = map[string]string{
	"PLAYWRIGHT_NODEJS_PATH":         "node",
	"CLOAKBROWSER_BINARY_PATH":       "chromium",
	"CLOAKBROWSER_MCP_TEST_CHROMIUM": "chromium",
}

// Tripwire is a directory of stand-ins for node, npm and Chromium that
// record each start in a log and fail.
type Tripwire struct {
	Dir string
	log string
}

// NewTripwire writes the stand-ins into dir.
func NewTripwire(dir string) (*Tripwire, error) {
	tw := &Tripwire{Dir: dir, log: filepath.Join(dir, "reached.log")}
	for _, name := range tripwireNames {
		script := fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >> %q\necho 'unit tier (-short): %s must not be started; move the test to the browser tier (testtier.BrowserTier)' >&2\nexit 97\n", name, tw.log, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			return nil, err
		}
	}
	return tw, nil
}

// Install points PATH and the variables that name node or a browser at the
// stand-ins, for this process and the processes it starts.
func (tw *Tripwire) Install() {
	_ = os.Setenv("PATH", tw.Dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, name := range tripwireEnv {
		_ = os.Setenv(k, filepath.Join(tw.Dir, name))
	}
}

// Reached returns what was started through the tripwire, one line each
// (program and arguments).
func (tw *Tripwire) Reached() []string {
	b, err := os.ReadFile(tw.log)
	if err != nil {
		return nil
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		return strings.Split(s, "\n")
	}
	return nil
}

// Reset forgets what was reached (for the tripwire's own test).
func (tw *Tripwire) Reset() { _ = os.Remove(tw.log) }

// active is the tripwire Main installed, nil in the browser tier.
var active *Tripwire

// ActiveTripwire is the tripwire Main installed for the unit tier, or nil.
func ActiveTripwire() *Tripwire { return active }

// Main runs a test binary's tests with the tiers' rules: in the unit tier
// the tripwire fails the binary if a test started node, npm or Chromium;
// in both, the AtEnd functions run after the tests, and goroutines that
// outlive them fail the binary (goleak).
func Main(m *testing.M, opts ...goleak.Option) {
	flag.Parse()
	if testing.Short() {
		dir, err := os.MkdirTemp("", "cbm-tripwire-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "tripwire:", err)
			os.Exit(2)
		}
		tw, err := NewTripwire(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tripwire:", err)
			os.Exit(2)
		}
		tw.Install()
		active = tw
	}
	opts = append(opts, goleak.Cleanup(func(code int) {
		if active != nil {
			if reached := active.Reached(); len(reached) > 0 {
				fmt.Fprintf(os.Stderr, "FAIL: the unit tier (-short) started what only the browser tier may:\n  %s\n",
					strings.Join(reached, "\n  "))
				code = 1
			}
			_ = os.RemoveAll(active.Dir)
		}
		os.Exit(code)
	}))
	goleak.VerifyTestMain(runThen{m, runAtEnd}, opts...)
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
