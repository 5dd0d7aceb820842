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
}

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

// Driver is the one running Playwright driver of a process. Start it early;
// Get waits for it.
type Driver struct {
	opts    Options
	started time.Time
	done    chan struct{}
	pw      *playwright.Playwright
	err     error
	elapsed time.Duration

	closeOnce sync.Once
}

// Start launches the driver in the background, installing it first when
// autoInstall is set and it is missing.
func Start(o Options, autoInstall bool) *Driver {
	o = o.Resolved()
	d := &Driver{opts: o, started: time.Now(), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.pw, d.err = d.run(autoInstall)
		d.elapsed = time.Since(d.started)
	}()
	return d
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
	pw, err := playwright.Run(o.runOptions())
	if err != nil {
		return nil, fmt.Errorf("start playwright driver in %s with %s: %w", o.Dir, o.NodePath, err)
	}
	return pw, nil
}

// Get waits until the driver runs and returns it.
func (d *Driver) Get(ctx context.Context) (*playwright.Playwright, error) {
	select {
	case <-d.done:
		return d.pw, d.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the playwright driver: %w", ctx.Err())
	}
}

// Ready reports whether the driver finished starting, and its error if any.
func (d *Driver) Ready() (bool, error) {
	select {
	case <-d.done:
		return true, d.err
	default:
		return false, nil
	}
}

// StartupTime is how long the driver took to start (zero until it has).
func (d *Driver) StartupTime() time.Duration {
	if ok, _ := d.Ready(); !ok {
		return 0
	}
	return d.elapsed
}

// Pid is the driver's process id, or 0.
func (d *Driver) Pid() int {
	if ok, err := d.Ready(); !ok || err != nil {
		return 0
	}
	return d.pw.Pid()
}

// Close stops the driver process and waits for it.
func (d *Driver) Close() error {
	var err error
	d.closeOnce.Do(func() {
		<-d.done
		if d.pw != nil {
			err = d.pw.Stop()
		}
	})
	return err
}
