package driver

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/atomicfile"
)

// versionShim returns a wrapper around Node.js that answers playwright-go's
// start-up check (`node cli.js --version`, ~0.6 s of Node start-up on every
// Run) from the driver's package.json, which it has just read, and runs the
// real node for everything else: in the TMPDIR named by driverTmpEnv when it
// is set, and on Linux with setpriv, killed when the process that started it
// dies (see shimScript). It returns "" where it does not apply (an external
// PLAYWRIGHT_CLI_PATH, Windows, or a package.json of another version — then
// the real check runs and reports the mismatch).
func versionShim(o Options) (string, error) {
	if runtime.GOOS == "windows" || os.Getenv("PLAYWRIGHT_CLI_PATH") != "" || o.NodePath == "" {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(o.Dir, "package", "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Name != "playwright-core" || pkg.Version != PlaywrightVersion {
		return "", nil
	}
	// A driver dir that cannot take a preload still gets the shim. The
	// prelaunch goes first: its browser starts before the bundles load.
	var preloads []string
	if p, err := writePrelaunchJS(o.Dir); err == nil {
		preloads = append(preloads, p)
	}
	if codeCacheOn() {
		if p, err := writeOnce(o.Dir, "codecache-", ".js", 0o644, codeCacheJS); err == nil {
			preloads = append(preloads, p)
		}
	}
	// Last: its step must follow the code cache's (see lean.js).
	if leanAfterStart(o.LeanHeap) {
		if p, err := writeOnce(o.Dir, "lean-", ".js", 0o644, leanJS); err == nil {
			preloads = append(preloads, p)
		}
	}
	return writeOnce(o.Dir, "node-", "", 0o755, shimScript(o.NodePath, pdeathsigWrapper(), preloads...))
}

// writeOnce keeps text in dir under a name made of prefix, its hash and
// suffix, writing it (whole) only when that file does not hold it yet. The
// file is marked used (its mtime), and the others of its kind that no start
// used for unusedFor (another version of this server wrote them) are
// removed.
func writeOnce(dir, prefix, suffix string, perm os.FileMode, text string) (string, error) {
	sum := sha256.Sum256([]byte(text))
	path := filepath.Join(dir, prefix+hex.EncodeToString(sum[:6])+suffix)
	defer sweepUnused(dir, prefix, suffix)
	if cur, err := os.ReadFile(path); err == nil && string(cur) == text {
		now := time.Now()
		_ = os.Chtimes(path, now, now)
		return path, nil
	}
	if err := atomicfile.WriteBytes(path, perm, []byte(text)); err != nil {
		return "", err
	}
	return path, nil
}

// unusedFor is how long writeOnce keeps a file of another version that no
// start used: a server of that version may still start with it (and would
// write it again if it were gone).
const unusedFor = 30 * 24 * time.Hour

// sweepUnused removes writeOnce's files of one kind (prefix, 12 hex digits,
// suffix) in dir that no start used for unusedFor.
func sweepUnused(dir, prefix, suffix string) {
	names, _ := filepath.Glob(filepath.Join(dir, prefix+"*"+suffix))
	for _, n := range names {
		h := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), prefix), suffix)
		if _, err := hex.DecodeString(h); err != nil || len(h) != 12 {
			continue
		}
		if fi, err := os.Stat(n); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > unusedFor {
			_ = os.Remove(n)
		}
	}
}

// CodeCacheEnv set to "off" starts the driver without its code cache
// (codecache.js).
const CodeCacheEnv = "CLOAKBROWSER_MCP_DRIVER_CODE_CACHE"

func codeCacheOn() bool { return os.Getenv(CodeCacheEnv) != "off" }

// codeCacheJS is preloaded into the driver's node (-r): it compiles
// playwright-core's two bundles with a V8 code cache kept beside it.
// Measured (docs/benchmarks.md): the driver starts about 250 ms sooner
// (a quarter to a third of its start), for 8 MiB more of its idle RSS.
//
//go:embed codecache.js
var codeCacheJS string

// leanJS is preloaded last into a driver's node that runs with the default
// flags: 3 s after its start it turns LeanHeapFlag's heap policy on.
//
//go:embed lean.js
var leanJS string

// The environment through which run tells the shim what it cannot know
// itself. Neither reaches node.
const (
	// driverTmpEnv is the driver's private TMPDIR.
	driverTmpEnv = "CLOAKBROWSER_MCP_DRIVER_TMPDIR"
	// driverParentEnv is the PID of the process starting the driver: the
	// parent whose death must kill it.
	driverParentEnv = "CLOAKBROWSER_MCP_DRIVER_PARENT"
	// driverArgsEnv holds the node flags (space-separated, see NodeFlags)
	// the shim puts on node's command line, where NODE_OPTIONS cannot carry
	// most V8 flags.
	driverArgsEnv = "CLOAKBROWSER_MCP_DRIVER_NODE_ARGS"
)

// The driver's malloc tuning (see shimScript): glibc's default fixed
// threshold, 128 KiB.
const (
	mallocMmapEnv       = "MALLOC_MMAP_THRESHOLD_"
	mallocMmapThreshold = 128 << 10
)

// shimScript is the shim's text. With setpriv, node runs under a
// parent-death SIGKILL: a driver outlives a SIGKILLed server otherwise,
// and with it every browser and temporary profile it holds. setpriv arms the
// signal in the shim's own process (playwright-go's child: exec keeps the
// PID and the parent), then an inner sh checks that the parent is still
// driverParentEnv: if it died before the signal was armed, the shim was
// already handed to another parent and no signal would ever come, so it
// exits instead of running an orphan driver.
//
// Linux sends the signal when the parent thread that forked exits; the Go
// runtime keeps its threads for the life of the process (nothing here
// locks one to a goroutine that ends), as os/exec's own Pdeathsig assumes.
func shimScript(node, setpriv string, preloads ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Written by cloakbrowser-mcp: answers the driver version check from package.json (playwright-core %s);\n", PlaywrightVersion)
	fmt.Fprintf(&b, "# runs node otherwise, in $%s when set", driverTmpEnv)
	if setpriv != "" {
		b.WriteString(", killed when the process that started it dies")
	}
	b.WriteString(".\n")
	fmt.Fprintf(&b, "if [ \"$#\" -eq 2 ] && [ \"$2\" = \"--version\" ]; then echo \"Version %s\"; exit 0; fi\n", PlaywrightVersion)
	fmt.Fprintf(&b, "if [ -n \"$%[1]s\" ]; then TMPDIR=$%[1]s; export TMPDIR; fi\nunset %[1]s\n", driverTmpEnv)
	// glibc's malloc raises its mmap threshold to the size of each large
	// block freed (up to 32 MiB), after which such blocks come from its
	// heap and stay in the RSS when freed; node frees many (the code cache
	// read at start, protocol messages, snapshots). A fixed threshold keeps
	// them mmapped, returned when freed: measured, the driver's RSS after a
	// first page 89–94 MiB in ten runs against 99–110 (docs/benchmarks.md).
	// A user's own setting wins.
	fmt.Fprintf(&b, "if [ -z \"${%[1]s+x}\" ]; then %[1]s=%[2]d; export %[1]s; fi\n", mallocMmapEnv, mallocMmapThreshold)
	// The flags are split into words, never globbed (set -f); the shell
	// variable holding them is not exported.
	fmt.Fprintf(&b, "set -f\nnode_flags=$%[1]s\nunset %[1]s\n", driverArgsEnv)
	nodeCmd := shellQuote(node) + " $node_flags"
	for _, p := range preloads {
		nodeCmd += " -r " + shellQuote(p)
	}
	if setpriv == "" {
		fmt.Fprintf(&b, "unset %s\nexec %s \"$@\"\n", driverParentEnv, nodeCmd)
		return b.String()
	}
	check := fmt.Sprintf(`if [ -n "$%[1]s" ] && [ "$PPID" != "$%[1]s" ]; then echo "cloakbrowser-mcp: process $%[1]s exited before its Playwright driver started" >&2; exit 1; fi; unset %[1]s; exec "$@"`, driverParentEnv)
	fmt.Fprintf(&b, "exec %s --pdeathsig KILL -- /bin/sh -c %s sh %s \"$@\"\n", shellQuote(setpriv), shellQuote(check), nodeCmd)
	return b.String()
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
