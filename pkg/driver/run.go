package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/flight"
)

// ErrStopped means the driver was closed; no new browser can be launched.
var ErrStopped = errors.New("playwright driver stopped")

// Driver is the Playwright driver of a process: one running driver shared by
// every session. It is started once; only if its process dies (a crash, a
// kill) does the next Get start a replacement, one start shared by every
// concurrent caller. Start it early; Get waits for it.
//
// On Linux the driver runs with a private TMPDIR, made by Start and
// removed by Close, and dies with this process (see the package doc).
//
// A Driver is safe for concurrent use.
type Driver struct {
	opts        Options
	autoInstall bool
	// tmp is the driver's private TMPDIR, marked as this process's and
	// removed by Close; "" where it has none (see privateTempDir).
	tmp string

	starts flight.Flight[*instance]

	mu       sync.Mutex
	cur      *instance // the last start that finished; nil before the first
	restarts int
	closed   bool
	ffmpeg   string // linked into the registry for video (ffmpeg.go)
	// prelaunch is the launch the first start overlaps (prelaunch.go).
	prelaunch *prelaunchPlan
	// early is the browser the server started for it, if any (until
	// Close).
	early *earlyBrowser

	closeOnce sync.Once
	closeErr  error
}

// instance is one finished start of the driver process.
type instance struct {
	restart bool // a replacement for a driver that died
	pw      *playwright.Playwright
	err     error
	exited  chan struct{} // closed when the started process has exited
}

// ended reports whether inst can no longer serve: its process exited, or it
// was a replacement that failed to start. A failed first start is final (the
// driver is missing or broken: retrying would not help, and installing again
// on every call would be slow).
func (inst *instance) ended() bool {
	if inst.err != nil {
		return inst.restart
	}
	select {
	case <-inst.exited:
		return true
	default:
		return false
	}
}

// Start launches the driver in the background, installing it first when
// autoInstall is set and it is missing.
func Start(o Options, autoInstall bool) *Driver {
	d := New(o, autoInstall)
	d.Begin()
	return d
}

// New prepares a driver without starting it: the first Get or Begin does.
func New(o Options, autoInstall bool) *Driver {
	d := &Driver{opts: o.Resolved(), autoInstall: autoInstall}
	tmp, err := privateTempDir()
	if err != nil {
		// Not fatal: the driver then shares the process's TMPDIR.
		fmt.Fprintf(d.opts.Log, "cloakbrowser-mcp: %v\n", err)
	}
	d.tmp = tmp
	if tmp != "" && pdeathsigWrapper() == "" {
		fmt.Fprintln(d.opts.Log, "cloakbrowser-mcp: setpriv with --pdeathsig not found (util-linux 2.33 or newer): the Playwright driver may outlive this process if it is killed")
	}
	return d
}

// Begin starts the driver in the background if it is not running or
// starting, without waiting for it; Get and Close join the start.
func (d *Driver) Begin() {
	if inst, err := d.usable(); err != nil || inst != nil {
		return
	}
	d.starts.Start(d.start)
}

// start is the work of one start, shared by the callers of the flight.
func (d *Driver) start() (*instance, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, ErrStopped
	}
	if d.cur != nil && !d.cur.ended() {
		// A start that finished before this one began already replaced
		// the dead driver.
		cur := d.cur
		d.mu.Unlock()
		return cur, nil
	}
	restart := d.cur != nil
	if restart {
		d.restarts++
	}
	d.mu.Unlock()

	if restart {
		d.clearTemp()
	}
	inst := &instance{restart: restart, exited: make(chan struct{})}
	inst.pw, inst.err = d.run(d.autoInstall && !restart)
	if inst.err != nil {
		close(inst.exited)
	} else {
		// Ends with the process: Close stops it and waits for exited.
		go watchExit(inst.pw.Pid(), inst.exited)
	}
	d.mu.Lock()
	d.cur = inst
	d.mu.Unlock()
	return inst, nil
}

func (d *Driver) run(autoInstall bool) (*playwright.Playwright, error) {
	o := d.opts
	if o.NodePath == "" {
		return nil, fmt.Errorf("%w: install Node.js %d or newer or set PLAYWRIGHT_NODEJS_PATH", ErrNoNode, MinNodeMajor)
	}
	if _, err := os.Stat(o.CLIPath()); err != nil {
		if !autoInstall {
			return nil, fmt.Errorf("%w in %s (%w): run `cloakbrowser-mcp install`", ErrNotInstalled, o.Dir, err)
		}
		if _, err := Install(context.Background(), o); err != nil {
			return nil, err
		}
	}
	flags, err := NodeFlags(o.LeanHeap)
	if err != nil {
		return nil, err
	}
	if err := d.linkFFmpeg(); err != nil {
		// Not fatal: video recording then answers that ffmpeg is missing.
		fmt.Fprintf(o.Log, "cloakbrowser-mcp: %v\n", err)
	}
	// Only for this Run (see withEnv): between runs the environment is the
	// process's own again, so a later Run never wraps a shim in a shim.
	env := o.playwrightEnv()
	if reg := d.registryDir(); reg != "" {
		// Playwright's registry is ours: it finds the ffmpeg we link there
		// (ffmpeg.go) and nothing of a user's own Playwright installs.
		env["PLAYWRIGHT_BROWSERS_PATH"] = reg
	}
	plan := d.takePrelaunch() // only the first start has one
	if shim, serr := versionShim(o); serr == nil && shim != "" {
		env["PLAYWRIGHT_NODEJS_PATH"] = shim
		env[driverTmpEnv] = d.tmp
		env[driverParentEnv] = strconv.Itoa(os.Getpid())
		env[driverArgsEnv] = strings.Join(flags, " ")
		early := startEarly(d.tmp, plan)
		if early != nil {
			plan.Adopt = early.adopt()
		}
		if file := d.writePlan(plan); file != "" {
			env[driverPrelaunchEnv] = file
			// Removed by prelaunch.js once read; here if node never got
			// that far.
			defer os.Remove(file)
			if early != nil {
				d.mu.Lock()
				d.early = early
				d.mu.Unlock()
				// Node opened its ends before it answers playwright-go
				// (the preload runs first), or never will.
				defer early.release()
			}
		} else if early != nil {
			early.stop() // no plan reaches node: nobody adopts it
		}
	} else if _, set := os.LookupEnv("NODE_OPTIONS"); !set {
		// No shim to put the flags on node's command line: NODE_OPTIONS
		// carries those node accepts there. A user's own NODE_OPTIONS wins.
		env["NODE_OPTIONS"] = strings.Join(nodeOptionsFlags(flags), " ")
	}
	pw, err := withEnv(env, func() (*playwright.Playwright, error) { return playwright.Run(o.runOptions()) })
	if err != nil {
		return nil, fmt.Errorf("start playwright driver in %s with %s: %w", o.Dir, o.NodePath, err)
	}
	return pw, nil
}

// clearTemp empties the private TMPDIR of what a driver that died left
// (Playwright's temporary profiles and artifacts), killing what of it still
// runs, and keeps the directory and its owner marker.
func (d *Driver) clearTemp() {
	if d.tmp == "" {
		return
	}
	if left := KillUsing(d.tmp, stopWait); len(left) > 0 {
		fmt.Fprintf(d.opts.Log, "cloakbrowser-mcp: processes %v of the dead driver still use %s\n", left, d.tmp)
		return
	}
	entries, err := os.ReadDir(d.tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() != OwnerFile {
			_ = os.RemoveAll(filepath.Join(d.tmp, e.Name()))
		}
	}
}

// setenv sets vars in the process environment (an empty value unsets) and
// returns what puts the previous values back.
func setenv(vars map[string]string) (restore func()) {
	type prev struct {
		v  string
		ok bool
	}
	old := make(map[string]prev, len(vars))
	for k, v := range vars {
		pv, ok := os.LookupEnv(k)
		old[k] = prev{pv, ok}
		if v == "" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, v)
		}
	}
	return func() {
		for k, p := range old {
			if p.ok {
				os.Setenv(k, p.v)
			} else {
				os.Unsetenv(k)
			}
		}
	}
}

// usable returns the current instance if it can serve (or holds the final
// error of the first start), nil if a start is needed.
func (d *Driver) usable() (*instance, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrStopped
	}
	if d.cur != nil && !d.cur.ended() {
		return d.cur, nil
	}
	return nil, nil
}

// Get waits until the driver runs and returns it. If the driver process has
// died since, Get starts a new one first (see [Driver]); browsers of the
// dead driver are gone with it (see Exited).
func (d *Driver) Get(ctx context.Context) (*playwright.Playwright, error) {
	inst, err := d.usable()
	if err != nil {
		return nil, err
	}
	if inst == nil {
		// Joins the start in flight (the first one, begun by Start) or
		// begins a replacement.
		inst, err = d.starts.Do(ctx, d.start)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return nil, fmt.Errorf("waiting for the playwright driver: %w", err)
			}
			return nil, err
		}
	}
	return inst.pw, inst.err
}

// closedCh is returned by Exited for a driver that is not running.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Exited returns a channel closed when the driver process running pw has
// exited (crashed, killed or stopped by Close). Every browser launched
// through pw is out of reach from then on. For a pw this Driver did not
// return from its current start, the channel is already closed.
func (d *Driver) Exited(pw *playwright.Playwright) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if pw != nil && d.cur != nil && d.cur.pw == pw {
		return d.cur.exited
	}
	return closedCh
}

// Restarts counts the replacements started after the driver process died.
func (d *Driver) Restarts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restarts
}

// TempDir is the driver's TMPDIR: its private one, or the process's where it
// has none. Playwright writes its browsers' downloads under it while they
// run (playwright-artifacts-*/<guid>.crdownload).
func (d *Driver) TempDir() string {
	if d.tmp != "" {
		return d.tmp
	}
	return os.TempDir()
}

// Pid is the current driver's process id, or 0.
func (d *Driver) Pid() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur != nil && d.cur.err == nil {
		return d.cur.pw.Pid()
	}
	return 0
}

// stopWait bounds how long Close waits for the driver to exit after its
// stdin closed, and then for what still uses its temp dir to die.
const stopWait = 10 * time.Second

// Close stops the driver process and waits for it, then removes the
// driver's private temp dir, killing what still uses it. Get fails with
// ErrStopped afterwards.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		d.mu.Unlock()
		// A start in flight finishes; none begins after closed is set.
		_ = d.starts.Wait(context.Background())
		d.mu.Lock()
		inst := d.cur
		d.mu.Unlock()
		var errs []error
		if inst != nil && inst.pw != nil {
			errs = append(errs, stop(inst))
		}
		d.mu.Lock()
		early := d.early
		d.mu.Unlock()
		if early != nil {
			early.stop()
		}
		if d.tmp != "" {
			if left := KillUsing(d.tmp, stopWait); len(left) > 0 {
				errs = append(errs, fmt.Errorf("processes %v still use %s", left, d.tmp))
			}
			if err := os.RemoveAll(d.tmp); err != nil {
				errs = append(errs, fmt.Errorf("remove the driver's temp dir: %w", err))
			}
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// stop ends inst's process: closing its stdin makes the driver close its
// browsers and exit; one that does not within stopWait is killed.
func stop(inst *instance) error {
	select {
	case <-inst.exited:
		return nil // died on its own; playwright-go has already reaped it
	default:
	}
	pid := inst.pw.Pid()
	stopped := make(chan error, 1)
	go func() { stopped <- inst.pw.Stop() }()
	var err error
	select {
	case err = <-stopped:
	case <-time.After(stopWait):
		if p, ferr := os.FindProcess(pid); ferr == nil {
			_ = p.Kill()
		}
		err = <-stopped
	}
	<-inst.exited
	if err != nil {
		return fmt.Errorf("stop the playwright driver (pid %d): %w", pid, err)
	}
	return nil
}
