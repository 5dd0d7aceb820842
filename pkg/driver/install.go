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
	// LeanHeap runs the driver's node with LeanHeapFlag as well: for a
	// driver serving many sessions, where its memory counts more than the
	// speed of each call. NodeFlagsEnv, when set, replaces both.
	LeanHeap bool
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
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, nodePath, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%w: run %s --version: %w", ErrNoNode, nodePath, err)
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
		return info, fmt.Errorf("%w in %s (%w): run `cloakbrowser-mcp install`", ErrNotInstalled, o.Dir, err)
	}
	// Loading playwright-core takes node a second on a quiet machine and
	// many more on a busy one (a CI runner with browsers at work).
	const versionTimeout = time.Minute
	vctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(vctx, o.NodePath, info.CLIPath, "--version").Output()
	if err != nil {
		if vctx.Err() == context.DeadlineExceeded {
			return info, fmt.Errorf("run %s %s --version: no answer within %v (is the machine overloaded?)", o.NodePath, info.CLIPath, versionTimeout)
		}
		return info, fmt.Errorf("run %s %s --version: %w", o.NodePath, info.CLIPath, err)
	}
	info.Version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Version "))
	if info.Version != PlaywrightVersion {
		return info, fmt.Errorf("driver in %s is %s, need %s: remove it and run `cloakbrowser-mcp install`", o.Dir, info.Version, PlaywrightVersion)
	}
	info.Installed = true
	return info, nil
}

// processEnv serializes the calls into playwright-go, which takes the node
// to run (PLAYWRIGHT_NODEJS_PATH, also what spares it a Node.js download from
// nodejs.org) and the npm registry (PLAYWRIGHT_GO_NPM_REGISTRY) from the
// process environment only, and starts the driver with that environment:
// neither its RunOptions nor its exec.Cmd take an Env. So the variables are
// set only around one call (withEnv) and put back after it, under this lock;
// the process environment is what it was between calls.
var processEnv sync.Mutex

// playwrightEnv is what playwright-go must read for o: the node (never
// empty here: Install and run check it first) and the registry, if any.
func (o Options) playwrightEnv() map[string]string {
	env := map[string]string{"PLAYWRIGHT_NODEJS_PATH": o.NodePath}
	if o.Registry != "" {
		env["PLAYWRIGHT_GO_NPM_REGISTRY"] = o.Registry
	}
	return env
}

// withEnv runs fn, a call into playwright-go, with vars set in the process
// environment (an empty value unsets), and puts the previous values back
// when it returns.
func withEnv[T any](vars map[string]string, fn func() (T, error)) (T, error) {
	processEnv.Lock()
	defer processEnv.Unlock()
	restore := setenv(vars)
	defer restore()
	return fn()
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
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Info{}, fmt.Errorf("create driver dir: %w", err)
	}
	// playwright.Install cannot be cancelled: on ctx's end it finishes (or
	// fails) in the background, its result dropped, and the environment is
	// put back when it does.
	errc := make(chan error, 1)
	go func() {
		_, err := withEnv(o.playwrightEnv(), func() (struct{}, error) {
			return struct{}{}, playwright.Install(o.runOptions())
		})
		errc <- err
	}()
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
		return Info{Dir: o.Dir}, fmt.Errorf("install playwright-core %s into %s: %w", PlaywrightVersion, o.Dir, ctx.Err())
	}
	return Check(ctx, o)
}
