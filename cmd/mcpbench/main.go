// Command mcpbench measures cloakbrowser-mcp side by side with the Node
// @playwright/mcp 0.0.83 it replaces: same machine, same Chromium, same
// scripted agent session on local fixture pages, every figure reported as a
// ratio ours/upstream against the goals of issue 8.
//
//	go tool task bench                     # or: go run ./cmd/mcpbench [flags]
//	go run ./cmd/mcpbench --rounds 5 --json bench.json
//	go run ./cmd/mcpbench --servers ours --pages form,spa --dump /tmp/d --ours-args "--log-level debug"
//
// It installs @playwright/mcp with npm into a cache directory (once),
// builds our binary, serves testdata/bench over httptest, runs each
// server's sessions in fresh processes (alternating which server goes
// first), prints a table and writes the same as JSON (by default to a new
// file in the temp directory, whose path it prints). Every process it
// starts, browsers included, is killed before it exits, and each server
// runs with its own TMPDIR, removed afterwards.
//
// Rows: spawn → initialize and the first navigate (right after initialize,
// and after 2 s idle) are medians over --rounds fresh processes; the
// scripted session (navigate and snapshot every fixture page, click and
// type on the form, act-and-observe on the form and the SPA, memory and
// CPU of the process tree) runs once per server in the first round's
// process. The agent tasks (tasks.go) run last, on a fresh process of
// each server, and count every character a scripted agent reads to finish
// a targeted or an exploratory task. Act-and-observe counts the characters an agent must read to see
// a click's effect: the response, the snapshot file it links to, and a
// follow-up snapshot if the effect is still not visible.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// options are the command-line flags.
type options struct {
	cache        string
	chromium     string
	node         string
	npm          string
	oursBinary   string
	fixtures     string
	jsonOut      string
	servers      string
	pages        string
	oursArgs     string
	dump         string
	rounds       int
	reps         int
	snapshotReps int
	callTimeout  time.Duration
	deadline     time.Duration
	warmup       bool
	verbose      bool
	agentTasks   bool
	// only, if set, runs just these parts (onlyParts), and prints just
	// their rows.
	only    map[string]bool
	apps    string
	hostile bool
	// hostileTimeout bounds each call on a hostile page (hostile.go).
	hostileTimeout time.Duration
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "cloakbrowser-mcp", "bench", "playwright-mcp-"+upstreamVersion)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("mcpbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cache, "cache", defaultCache(), "directory @playwright/mcp@"+upstreamVersion+" is installed into (reused when present)")
	fs.StringVar(&o.chromium, "chromium", "/usr/bin/chromium", "browser both servers launch")
	fs.StringVar(&o.node, "node", "node", "node that runs @playwright/mcp")
	fs.StringVar(&o.npm, "npm", "npm", "npm used to install @playwright/mcp")
	fs.StringVar(&o.oursBinary, "ours-binary", "", "use this cloakbrowser-mcp binary instead of building ./cmd/cloakbrowser-mcp")
	fs.StringVar(&o.fixtures, "fixtures", "", "fixture pages (default: testdata/bench in the module root)")
	fs.StringVar(&o.jsonOut, "json", "", "write results as JSON here (default: a new file in the temp dir, printed at the end)")
	fs.StringVar(&o.servers, "servers", "ours,upstream", "servers to run: ours, upstream or both")
	fs.StringVar(&o.pages, "pages", "article,table,frames,form,spa", "fixture pages to navigate and snapshot in the scripted session")
	fs.StringVar(&o.oursArgs, "ours-args", "", "extra flags for our server, space-separated (e.g. \"--log-level debug\")")
	fs.StringVar(&o.dump, "dump", "", "save every call's arguments and response, and each server's stderr, under this directory")
	fs.IntVar(&o.rounds, "rounds", 3, "fresh-process rounds for spawn → initialize and first navigate (cold and after 2 s)")
	fs.IntVar(&o.reps, "reps", 7, "repetitions of click and type (median)")
	fs.IntVar(&o.snapshotReps, "snapshot-reps", 3, "repetitions of each page's snapshot (median)")
	fs.DurationVar(&o.callTimeout, "call-timeout", 45*time.Second, "bound on every MCP call")
	fs.DurationVar(&o.deadline, "deadline", 12*time.Minute, "bound on the whole run")
	fs.BoolVar(&o.warmup, "warmup", true, "start each server once, unmeasured, before measuring")
	fs.BoolVar(&o.verbose, "v", false, "print server stderr when something fails")
	fs.BoolVar(&o.hostile, "hostile", true, "measure the hostile pages (frames whose server never answers, a busy main thread) at the end of the scripted session")
	fs.DurationVar(&o.hostileTimeout, "hostile-timeout", 40*time.Second, "bound on each call on a hostile page (upstream waits its own timeouts out)")
	fs.BoolVar(&o.agentTasks, "agent-tasks", true, "run the agent-task token benchmark (issue 18) on a fresh process of each server")
	only := fs.String("only", "", "run only these parts, comma-separated: "+strings.Join(onlyParts, ", ")+" (rounds: startup, first navigate and the scripted session with act-and-observe and the hostile pages; tasks: the agent tasks; flow: the app flow; find: find and click; stealth: the detector page); the table shows only their rows")
	fs.StringVar(&o.apps, "apps", "", "fixture apps of the app flow (default: testdata/apps in the module root)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *only != "" {
		o.only = map[string]bool{}
		for _, part := range serverList(*only) {
			if !slices.Contains(onlyParts, part) {
				return o, fmt.Errorf("--only %q: want some of %s", part, strings.Join(onlyParts, ", "))
			}
			o.only[part] = true
		}
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case o.rounds < 1:
		return o, fmt.Errorf("--rounds %d: need at least 1", o.rounds)
	case o.reps < 1:
		return o, fmt.Errorf("--reps %d: need at least 1", o.reps)
	case o.snapshotReps < 1:
		return o, fmt.Errorf("--snapshot-reps %d: need at least 1", o.snapshotReps)
	case o.callTimeout <= 0:
		return o, fmt.Errorf("--call-timeout %s: must be positive", o.callTimeout)
	}
	for _, s := range serverList(o.servers) {
		if s != serverOurs && s != serverUpstream {
			return o, fmt.Errorf("--servers %q: want ours, upstream or both", o.servers)
		}
	}
	return o, nil
}

// onlyParts are the parts --only selects.
var onlyParts = []string{"rounds", "tasks", "flow", "find", "stealth"}

// runs reports whether the run includes part.
func (o options) runs(part string) bool { return o.only == nil || o.only[part] }

func serverList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// moduleRoot finds the directory of this module's go.mod from the working
// directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/cloakmcp/cloakbrowser-mcp") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the cloakbrowser-mcp module: run from the repository (or pass --ours-binary and --fixtures)")
		}
		dir = parent
	}
}

// report is the JSON output.
type report struct {
	Started    time.Time                  `json:"started"`
	DurationS  float64                    `json:"duration_s"`
	Machine    map[string]any             `json:"machine"`
	Upstream   string                     `json:"upstream"`
	Chromium   string                     `json:"chromium"`
	Options    map[string]any             `json:"options"`
	Rows       []row                      `json:"rows"`
	Memory     map[string]memSplit        `json:"memory,omitempty"`
	Leftovers  map[string][]proctree.Proc `json:"leftover_processes,omitempty"`
	TempLeft   map[string][]string        `json:"temp_left_behind,omitempty"`
	LoadAvg    [2]string                  `json:"loadavg_start_end"`
	FrameHangs int                        `json:"frame_hang_requests"`
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpbench: %v\n", err)
		return 2
	}
	if err := bench1(o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "mcpbench: %v\n", err)
		return 1
	}
	return 0
}

func bench1(o options, stdout, stderr io.Writer) error {
	started := time.Now()
	loadStart := loadAvg()
	ctx, cancel := context.WithTimeout(context.Background(), o.deadline)
	defer cancel()
	ctx, stopSignals := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	names := serverList(o.servers)
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	root := ""
	if o.fixtures == "" || o.apps == "" || (want[serverOurs] && o.oursBinary == "") {
		r, err := moduleRoot()
		if err != nil {
			return err
		}
		root = r
	}
	if o.fixtures == "" {
		o.fixtures = filepath.Join(root, "testdata", "bench")
	}
	if o.apps == "" {
		o.apps = filepath.Join(root, "testdata", "apps")
	}
	if _, err := os.Stat(o.chromium); err != nil {
		return fmt.Errorf("--chromium %s: %w (Debian: apt-get install -y chromium)", o.chromium, err)
	}
	if o.dump != "" {
		if err := os.MkdirAll(o.dump, 0o755); err != nil {
			return fmt.Errorf("--dump: %w", err)
		}
	}
	// Short names: Chromium refuses a SingletonSocket path over 107 bytes,
	// and each server's profile lives under base/<server>/tmp/….
	base, err := os.MkdirTemp("", "mb")
	if err != nil {
		return err
	}
	defer os.RemoveAll(base)

	specs := map[string]serverSpec{}
	if want[serverOurs] {
		bin := o.oursBinary
		if bin == "" {
			fmt.Fprintln(stderr, "mcpbench: building ./cmd/cloakbrowser-mcp")
			if bin, err = buildOurs(ctx, root, base, stderr); err != nil {
				return err
			}
		}
		flags := []string{"--no-download", "--binary-path", o.chromium}
		if err := installDriver(ctx, bin, flags, stderr); err != nil {
			return err
		}
		specs[serverOurs] = serverSpec{Name: serverOurs, Command: bin, Args: func(out string) []string {
			return append(append(append([]string{}, flags...), "--headless", "--output-dir", out), strings.Fields(o.oursArgs)...)
		}}
	}
	if want[serverUpstream] {
		node, err := exec.LookPath(o.node)
		if err != nil {
			return fmt.Errorf("--node %s: %w (install Node.js >= 20, or pass --servers ours)", o.node, err)
		}
		npm, err := exec.LookPath(o.npm)
		if err != nil {
			return fmt.Errorf("--npm %s: %w (install npm, e.g. apt-get install -y npm, or pass --servers ours)", o.npm, err)
		}
		cli, err := mcptest.InstallUpstream(ctx, npm, o.cache, stderr)
		if err != nil {
			return err
		}
		specs[serverUpstream] = serverSpec{Name: serverUpstream, Command: node, Args: func(out string) []string {
			return []string{cli, "--executable-path", o.chromium, "--headless", "--isolated", "--no-sandbox", "--output-dir", out}
		}}
	}

	fx, err := startFixtures(o.fixtures)
	if err != nil {
		return err
	}
	defer fx.Close()
	apps := httptest.NewServer(mcptest.AppsHandler(o.apps))
	defer apps.Close()
	var hostile *mcptest.Hostile
	if o.hostile && o.runs("rounds") {
		if hostile, err = mcptest.StartHostile(); err != nil {
			return err
		}
		defer hostile.Close()
	}

	id := make([]byte, 6)
	_, _ = rand.Read(id)
	b := &bench{
		cfg: o, specs: specs, fx: fx, appsURL: apps.URL, hostile: hostile, base: base, runID: hex.EncodeToString(id), log: stderr,
		res:    map[string]*results{serverOurs: newResults(), serverUpstream: newResults()},
		active: map[*proc]bool{}, mem: map[string]memSplit{}, stray: map[string][]proctree.Proc{}, tmpLeft: map[string][]string{},
		browserDirs: browserDirs(o.chromium),
	}
	defer b.stopAll()

	if o.warmup && o.runs("rounds") {
		b.logf("warm-up: one unmeasured start of each server")
		b.warmup(ctx, names)
	}
	for round := range o.rounds {
		if !o.runs("rounds") {
			break
		}
		order := append([]string{}, names...)
		if round%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, n := range order {
			if ctx.Err() != nil {
				break
			}
			b.logf("round %d/%d: %s, cold process%s", round+1, o.rounds, n, map[bool]string{true: " + scripted session", false: ""}[round == 0])
			b.coldRun(ctx, n, round == 0)
		}
		for _, n := range order {
			if ctx.Err() != nil {
				break
			}
			b.logf("round %d/%d: %s, first navigate after 2 s idle", round+1, o.rounds, n)
			b.warmRun(ctx, n)
		}
	}
	if o.agentTasks && o.runs("tasks") {
		b.agentRun(ctx, names)
	}
	if o.runs("flow") || o.runs("find") {
		b.flowRun(ctx, names, o.runs("flow"), o.runs("find"))
	}
	if o.runs("stealth") {
		b.stealthRun(ctx, names)
	}
	b.stopAll()
	if ctx.Err() != nil {
		b.logf("stopped early: %v (the table holds what was measured)", context.Cause(ctx))
	}

	loadEnd := loadAvg()
	rows := buildRows(rowSpecs(), b.res[serverOurs], b.res[serverUpstream])
	if o.only != nil {
		rows = measuredRows(rows)
	}
	fmt.Fprintf(stdout, "cloakbrowser-mcp vs %s@%s — %s, %d CPUs, %s\n", upstreamPackage, upstreamVersion, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), chromiumVersion(o.chromium))
	fmt.Fprintf(stdout, "load average at start %s, at end %s", loadStart, loadEnd)
	if busy(loadStart) || busy(loadEnd) {
		fmt.Fprintf(stdout, " — the machine was busy with other work: timings are noisy")
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "medians: %d fresh-process rounds; snapshots ×%d; click/type ×%d; ratio = ours/upstream\n\n", o.rounds, o.snapshotReps, o.reps)
	if err := printTable(stdout, rows); err != nil {
		return err
	}
	_, hangs := fx.hangStats()
	rep := report{
		Started: started, DurationS: time.Since(started).Seconds(),
		Machine:  map[string]any{"goos": runtime.GOOS, "goarch": runtime.GOARCH, "cpus": runtime.NumCPU(), "go": runtime.Version()},
		Upstream: upstreamPackage + "@" + upstreamVersion, Chromium: chromiumVersion(o.chromium),
		Options: map[string]any{"rounds": o.rounds, "reps": o.reps, "snapshot_reps": o.snapshotReps, "call_timeout": o.callTimeout.String(),
			"servers": names, "warmup": o.warmup, "only": o.only},
		Rows: rows, Memory: b.mem, Leftovers: b.stray, TempLeft: b.tmpLeft, FrameHangs: hangs,
		LoadAvg: [2]string{loadStart, loadEnd},
	}
	for _, name := range names {
		if left := b.stray[name]; len(left) > 0 {
			fmt.Fprintf(stdout, "warning: %d %s processes outlived their server and were killed\n", len(left), name)
		}
		if t := b.tmpLeft[name]; len(t) > 0 {
			fmt.Fprintf(stdout, "note: %s left %d entries in its TMPDIR after exit (removed): %s\n", name, len(t), oneLine(strings.Join(t, " "), 160))
		}
	}
	out := o.jsonOut
	if out == "" {
		f, err := os.CreateTemp("", "mcpbench-*.json")
		if err != nil {
			return err
		}
		out = f.Name()
		f.Close()
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nJSON: %s (%.0f s)\n", out, time.Since(started).Seconds())
	return nil
}

// browserDirs returns the directory of the browser executable when it is a
// real binary (not a wrapper script in a shared bin directory), so helper
// executables next to it count as browser processes.
func browserDirs(path string) []string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	f, err := os.Open(real)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 4)
	if n, _ := io.ReadFull(f, head); n == 4 && string(head) == "\x7fELF" {
		return []string{filepath.Dir(real)}
	}
	return nil
}

func chromiumVersion(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// loadAvg returns the 1-minute load average, or "" where there is none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

// busy reports whether a load average exceeds the CPU count.
func busy(load string) bool {
	var v float64
	if _, err := fmt.Sscan(load, &v); err != nil {
		return false
	}
	return v > float64(runtime.NumCPU())
}
