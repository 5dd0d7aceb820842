// Package driver makes the Playwright driver (playwright-core's cli.js run by
// a Node.js binary) available without any CDN, and runs it once per process.
//
// The server starts the driver in the background as soon as it starts, so the
// first browser call does not pay for it; every session shares the one
// connection it returns.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// PlaywrightVersion is the playwright-core version the pinned playwright-go
// module speaks. The driver directory must hold exactly this version.
const PlaywrightVersion = "1.64.1"

// MinNodeMajor is the oldest Node.js major version playwright-core supports.
const MinNodeMajor = 20

var (
	// ErrNoNode means no usable Node.js binary was found.
	ErrNoNode = errors.New("no Node.js >= 20 found")
	// ErrNotInstalled means the driver directory holds no playwright-core.
	ErrNotInstalled = errors.New("playwright driver not installed")
)

// Options says where the driver lives and which Node.js runs it.
type Options struct {
	// Dir is the driver directory (<Dir>/package/cli.js). If empty:
	// $PLAYWRIGHT_DRIVER_PATH, else <user cache dir>/cloakbrowser-mcp/playwright-<PlaywrightVersion>.
	Dir string
	// NodePath is the Node.js binary. If empty: $PLAYWRIGHT_NODEJS_PATH, else
	// `node` on PATH.
	NodePath string
	// Registry is the npm registry base URL used by Install. If empty:
	// $PLAYWRIGHT_GO_NPM_REGISTRY, else playwright-go's default (the public npm registry).
	Registry string
	// Log receives the driver's stdout and stderr and playwright-go's own
	// messages. If nil, os.Stderr. It must never be the MCP stdout.
	Log io.Writer
}

// Resolved fills the zero values of o from the environment.
func (o Options) Resolved() Options {
	if o.Dir == "" {
		o.Dir = os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	}
	if o.Dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		o.Dir = filepath.Join(base, "cloakbrowser-mcp", "playwright-"+PlaywrightVersion)
	}
	if o.NodePath == "" {
		o.NodePath = os.Getenv("PLAYWRIGHT_NODEJS_PATH")
	}
	if o.NodePath == "" {
		if p, err := exec.LookPath("node"); err == nil {
			o.NodePath = p
		}
	}
	if o.Registry == "" {
		o.Registry = os.Getenv("PLAYWRIGHT_GO_NPM_REGISTRY")
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	return o
}

// CLIPath is where the driver's cli.js is expected.
func (o Options) CLIPath() string {
	if p := os.Getenv("PLAYWRIGHT_CLI_PATH"); p != "" {
		return p
	}
	return filepath.Join(o.Dir, "package", "cli.js")
}

// Info describes the driver as found on disk.
type Info struct {
	Dir         string `json:"dir"`
	CLIPath     string `json:"cliPath"`
	Installed   bool   `json:"installed"`
	Version     string `json:"version"`
	NodePath    string `json:"nodePath"`
	NodeVersion string `json:"nodeVersion"`
}

var nodeVersionRE = regexp.MustCompile(`^v(\d+)\.`)

// CheckNode runs `node --version` and requires at least MinNodeMajor.
func CheckNode(ctx context.Context, nodePath string) (string, error) {
	if nodePath == "" {
		return "", fmt.Errorf("%w: install Node.js %d or newer (Debian: apt-get install nodejs) or set PLAYWRIGHT_NODEJS_PATH", ErrNoNode, MinNodeMajor)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, nodePath, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%w: run %s --version: %v", ErrNoNode, nodePath, err)
	}
	v := strings.TrimSpace(string(out))
	m := nodeVersionRE.FindStringSubmatch(v)
	if m == nil {
		return v, fmt.Errorf("%w: %s printed %q", ErrNoNode, nodePath, v)
	}
	if major, _ := strconv.Atoi(m[1]); major < MinNodeMajor {
		return v, fmt.Errorf("%w: %s is %s; install Node.js %d or newer or set PLAYWRIGHT_NODEJS_PATH", ErrNoNode, nodePath, v, MinNodeMajor)
	}
	return v, nil
}

// Check reports what is installed without changing anything.
func Check(ctx context.Context, o Options) (Info, error) {
	o = o.Resolved()
	info := Info{Dir: o.Dir, CLIPath: o.CLIPath(), NodePath: o.NodePath}
	nv, err := CheckNode(ctx, o.NodePath)
	info.NodeVersion = nv
	if err != nil {
		return info, err
	}
	if _, err := os.Stat(info.CLIPath); err != nil {
		return info, fmt.Errorf("%w in %s: run `cloakbrowser-mcp install`", ErrNotInstalled, o.Dir)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, o.NodePath, info.CLIPath, "--version").Output()
	if err != nil {
		return info, fmt.Errorf("run %s --version: %w", info.CLIPath, err)
	}
	info.Version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Version "))
	if info.Version != PlaywrightVersion {
		return info, fmt.Errorf("driver in %s is %s, need %s: remove it and run `cloakbrowser-mcp install`", o.Dir, info.Version, PlaywrightVersion)
	}
	info.Installed = true
	return info, nil
}

// processEnv is guarded because playwright-go reads its settings from the
// process environment, which this package writes once per process.
var processEnv sync.Mutex

func (o Options) exportEnv() {
	processEnv.Lock()
	defer processEnv.Unlock()
	// playwright-go only skips its Node.js download (nodejs.org, unreachable on
	// closed networks) when this is set.
	os.Setenv("PLAYWRIGHT_NODEJS_PATH", o.NodePath)
	if o.Registry != "" {
		os.Setenv("PLAYWRIGHT_GO_NPM_REGISTRY", o.Registry)
	}
	// The driver moves small protocol messages; V8's default young
	// generation (16 MiB semi-spaces) mostly holds garbage between
	// collections. A user's own NODE_OPTIONS wins.
	if _, ok := os.LookupEnv("NODE_OPTIONS"); !ok {
		os.Setenv("NODE_OPTIONS", DriverNodeOptions)
	}
}

// DriverNodeOptions are the V8 flags the driver runs with unless
// NODE_OPTIONS is set.
const DriverNodeOptions = "--max-semi-space-size=1"

func (o Options) runOptions() *playwright.RunOptions {
	return &playwright.RunOptions{
		DriverDirectory:     o.Dir,
		SkipInstallBrowsers: true, // never fetch Playwright's own browsers
		Verbose:             false,
		Stdout:              o.Log,
		Stderr:              o.Log,
	}
}

// Install makes sure the driver is in o.Dir: playwright-core at
// PlaywrightVersion from the npm registry, run by a Node.js found on the
// machine. It never downloads Node.js or browsers.
func Install(ctx context.Context, o Options) (Info, error) {
	o = o.Resolved()
	if _, err := CheckNode(ctx, o.NodePath); err != nil {
		return Info{Dir: o.Dir, NodePath: o.NodePath}, err
	}
	o.exportEnv()
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Info{}, fmt.Errorf("create driver dir: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- playwright.Install(o.runOptions()) }()
	select {
	case err := <-errc:
		if err != nil {
			reg := o.Registry
			if reg == "" {
				reg = "the npm registry"
			}
			return Info{Dir: o.Dir}, fmt.Errorf("install playwright-core %s into %s from %s (is it reachable? set PLAYWRIGHT_GO_NPM_REGISTRY for a mirror): %w", PlaywrightVersion, o.Dir, reg, err)
		}
	case <-ctx.Done():
		return Info{Dir: o.Dir}, ctx.Err()
	}
	return Check(ctx, o)
}

// ErrStopped means the driver was closed; no new browser can be launched.
var ErrStopped = errors.New("playwright driver stopped")

// Driver is the Playwright driver of a process: one running driver shared by
// every session. It is started once; only if its process dies (a crash, a
// kill) does the next Get start a replacement, one start shared by every
// concurrent caller. Start it early; Get waits for it.
//
// A Driver is safe for concurrent use.
type Driver struct {
	opts        Options
	autoInstall bool

	mu       sync.Mutex
	cur      *instance
	restarts int
	closed   bool

	closeOnce sync.Once
	closeErr  error
}

// instance is one start of the driver process.
type instance struct {
	restart bool          // a replacement for a driver that died
	done    chan struct{} // closed when the start has finished
	pw      *playwright.Playwright
	err     error
	exited  chan struct{} // closed when the started process has exited
}

// Start launches the driver in the background, installing it first when
// autoInstall is set and it is missing.
func Start(o Options, autoInstall bool) *Driver {
	d := &Driver{opts: o.Resolved(), autoInstall: autoInstall}
	d.cur = d.start(false)
	return d
}

// start begins one start of the driver process in the background.
func (d *Driver) start(restart bool) *instance {
	inst := &instance{restart: restart, done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		pw, err := d.run(d.autoInstall && !restart)
		inst.pw, inst.err = pw, err
		if err != nil {
			close(inst.exited)
		} else {
			go watchExit(pw.Pid(), inst.exited)
		}
		close(inst.done)
	}()
	return inst
}

// ended reports whether inst can no longer serve: its process exited, or it
// was a replacement that failed to start. A failed first start is final (the
// driver is missing or broken: retrying would not help, and installing again
// on every call would be slow).
func (inst *instance) ended() bool {
	select {
	case <-inst.done:
	default:
		return false
	}
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

func (d *Driver) run(autoInstall bool) (*playwright.Playwright, error) {
	o := d.opts
	if o.NodePath == "" {
		return nil, fmt.Errorf("%w: install Node.js %d or newer or set PLAYWRIGHT_NODEJS_PATH", ErrNoNode, MinNodeMajor)
	}
	if _, err := os.Stat(o.CLIPath()); err != nil {
		if !autoInstall {
			return nil, fmt.Errorf("%w in %s: run `cloakbrowser-mcp install`", ErrNotInstalled, o.Dir)
		}
		if _, err := Install(context.Background(), o); err != nil {
			return nil, err
		}
	}
	o.exportEnv()
	var pw *playwright.Playwright
	var err error
	if shim, serr := versionShim(o); serr == nil && shim != "" {
		// Only for this Run: the environment names the real node again
		// afterwards, so a later Run never wraps a shim in a shim.
		processEnv.Lock()
		os.Setenv("PLAYWRIGHT_NODEJS_PATH", shim)
		pw, err = playwright.Run(o.runOptions())
		os.Setenv("PLAYWRIGHT_NODEJS_PATH", o.NodePath)
		processEnv.Unlock()
	} else {
		pw, err = playwright.Run(o.runOptions())
	}
	if err != nil {
		return nil, fmt.Errorf("start playwright driver in %s with %s: %w", o.Dir, o.NodePath, err)
	}
	return pw, nil
}

// current returns the instance to use, starting a replacement first when
// the current one has ended.
func (d *Driver) current() (*instance, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrStopped
	}
	if d.cur.ended() {
		d.restarts++
		d.cur = d.start(true)
	}
	return d.cur, nil
}

// Get waits until the driver runs and returns it. If the driver process has
// died since, Get starts a new one first (see [Driver]); browsers of the
// dead driver are gone with it (see Exited).
func (d *Driver) Get(ctx context.Context) (*playwright.Playwright, error) {
	inst, err := d.current()
	if err != nil {
		return nil, err
	}
	select {
	case <-inst.done:
		return inst.pw, inst.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the playwright driver: %w", ctx.Err())
	}
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
	select {
	case <-d.cur.done:
		if pw != nil && d.cur.pw == pw {
			return d.cur.exited
		}
	default:
	}
	return closedCh
}

// Restarts counts the replacements started after the driver process died.
func (d *Driver) Restarts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restarts
}

// Pid is the current driver's process id, or 0.
func (d *Driver) Pid() int {
	d.mu.Lock()
	inst := d.cur
	d.mu.Unlock()
	select {
	case <-inst.done:
		if inst.err == nil {
			return inst.pw.Pid()
		}
	default:
	}
	return 0
}

// Close stops the driver process and waits for it. Get fails with
// ErrStopped afterwards.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() {
		d.mu.Lock()
		d.closed = true
		inst := d.cur
		d.mu.Unlock()
		<-inst.done
		if inst.pw != nil {
			select {
			case <-inst.exited:
				// Died on its own; playwright-go has already reaped it.
			default:
				d.closeErr = inst.pw.Stop()
			}
		}
	})
	return d.closeErr
}
