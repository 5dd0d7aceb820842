//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// densityOptions are the flags of the density and memory modes.
type densityOptions struct {
	// servers, when set, runs the density comparison instead of the
	// isolation modes: the same 16-session loop against each server.
	servers  string
	chromium string
	// oursArgs are more flags for our server (e.g. --extra-args=...).
	oursArgs string
	cache    string
	// memory, when set, runs the driver-memory comparison: one session per
	// node flag set, separated by '|'.
	memory     string
	memRounds  int
	memRepeats int
}

var dens densityOptions

func densityFlags() {
	flag.StringVar(&dens.servers, "servers", "", "density mode: run the loop with --http-isolation context against these servers (ours, upstream), report CPU-seconds per round and PSS per session")
	flag.StringVar(&dens.chromium, "chromium", "/usr/bin/chromium", "Chromium both servers run (density and memory modes)")
	flag.StringVar(&dens.oursArgs, "ours-args", "", "more flags for our server, space-separated (e.g. --extra-args=--renderer-process-limit=4)")
	flag.StringVar(&dens.cache, "upstream-cache", mcptest.UpstreamDir(), "directory @playwright/mcp@"+mcptest.UpstreamVersion+" is installed into (reused when present)")
	flag.StringVar(&dens.memory, "memory", "", "memory mode: node flag sets for the driver separated by '|' (\"default\" = the server's own, \"none\" = no flags), each measured idle and after a 500k-character snapshot")
	flag.IntVar(&dens.memRounds, "memory-rounds", 20, "memory mode: navigate → snapshot → click rounds timed per flag set")
	flag.IntVar(&dens.memRepeats, "memory-repeats", 1, "memory mode: times each flag set is measured (sets interleave)")
}

// densityMode reports whether a density or memory run was asked for, and
// runs it.
func densityMode(ctx context.Context, o options) (bool, error) {
	if dens.servers == "" && dens.memory == "" {
		return false, nil
	}
	work, bin, err := prepare(ctx, o)
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(work)
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(o.pages)))
	mux.HandleFunc("/big.html", bigPage)
	fx := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return true, err
	}
	go fx.Serve(ln)
	defer fx.Close()
	pages := "http://" + ln.Addr().String()
	if dens.memory != "" {
		return true, runMemory(ctx, o, bin, work, pages)
	}
	return true, runDensity(ctx, o, bin, work, pages)
}

// bigPage serves a page whose snapshot is about 500,000 characters: 2,700
// list items, each a link and a button with distinct names.
func bigPage(w http.ResponseWriter, _ *http.Request) {
	var b strings.Builder
	b.WriteString("<!doctype html><title>Big</title><h1>Big page</h1><button>Start</button><ul>\n")
	for i := range 2700 {
		fmt.Fprintf(&b, "<li><a href=\"#item-%d\">Item number %d of the big page, a fairly long link text</a> <button>Act on %d</button></li>\n", i, i, i)
	}
	b.WriteString("</ul>")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, b.String())
}

// launch starts cmd marked with its own marker and TMPDIR under dir and
// waits until url() is non-empty.
func launch(ctx context.Context, dir string, cmd *exec.Cmd, url func(s *server) string) (*server, error) {
	s := &server{cmd: cmd, marker: markerEnv + "=" + filepath.Base(dir), tmp: filepath.Join(dir, "tmp"), stderr: &mcptest.SyncBuffer{}, exited: make(chan error, 1)}
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, err
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, s.marker, "TMPDIR="+s.tmp)
	cmd.Stderr = s.stderr
	proctree.Own(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
	for {
		if s.url = url(s); s.url != "" {
			return s, nil
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			s.stop()
			return nil, fmt.Errorf("%s exited before serving: %v\n%s", cmd.Path, err, mcptest.Tail(s.stderr.String(), 4000))
		case <-deadline:
			s.stop()
			return nil, fmt.Errorf("%s did not serve within 60s:\n%s", cmd.Path, mcptest.Tail(s.stderr.String(), 4000))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startOurs starts our server over HTTP in context isolation.
func startOurs(ctx context.Context, o options, bin, work, name string, env []string) (*server, error) {
	dir, err := os.MkdirTemp(work, name+"-")
	if err != nil {
		return nil, err
	}
	args := []string{"--transport", "streamable-http", "--port", "0", "--no-download", "--binary-path", dens.chromium,
		"--http-session-max", strconv.Itoa(o.sessionMax), "--http-isolation", "context",
		"--log-level", "info", "--output-dir", filepath.Join(dir, "out")}
	args = append(args, strings.Fields(dens.oursArgs)...)
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = env
	}
	return launch(ctx, dir, cmd, func(s *server) string { return mcptest.ListenURL(s.stderr.String()) })
}

// startUpstream installs (once) and starts @playwright/mcp over HTTP on a
// free loopback port; each HTTP session gets its own browser context
// (--isolated), as ours does in context isolation.
func startUpstream(ctx context.Context, work string) (*server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node not found: install Node.js 20, or pass --servers ours")
	}
	cli, err := mcptest.InstallUpstream(ctx, "", dens.cache, os.Stderr)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(work, "upstream-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// Its Host check allows only "localhost:<port>" unless told otherwise.
	cmd := exec.Command(node, cli, "--port", strconv.Itoa(port), "--host", "127.0.0.1", "--allowed-hosts", "*", "--executable-path", dens.chromium,
		"--headless", "--isolated", "--no-sandbox", "--output-dir", filepath.Join(dir, "out"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir)
	return launch(ctx, dir, cmd, func(*server) string {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return ""
		}
		c.Close()
		return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	})
}

// role is what a process of a server's tree is, for the CPU and memory split.
type role string

const (
	roleServer   role = "server"   // the Go server, or upstream's node (server and driver in one)
	roleDriver   role = "driver"   // our Playwright driver (node, and its sh/setpriv shim)
	roleChromium role = "chromium" // every browser process
)

func roleOf(p proctree.Proc, root int) role {
	switch {
	case p.PID == root:
		return roleServer
	case p.Comm == "node" || p.Comm == "sh" || p.Comm == "setpriv":
		return roleDriver
	default:
		return roleChromium
	}
}

// chromiumKind is what a browser process is, from its command line: its
// --type (renderer, gpu-process, zygote, …; "network" for the network
// service's utility process, "utility" for the others), or "browser" for
// the main process; "" when its command line cannot be read.
func chromiumKind(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return ""
	}
	kind, sub := "browser", ""
	// Chromium's child processes set their title: one string with the
	// arguments separated by spaces.
	for _, a := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			kind = v
		}
		if v, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
			sub = v
		}
	}
	if kind == "utility" && strings.HasPrefix(sub, "network.") {
		return "network"
	}
	return kind
}

// chromiumKinds are the kinds printDensity lists, in its order; any other
// counts under "other".
var chromiumKinds = []string{"browser", "renderer", "gpu-process", "network", "utility", "zygote", "other"}

// cpuMeter sums the CPU time processes of a tree use after it starts:
// sampled, a process's last seen total counts (minus what it had used at the
// start). A process that is born and exits between two samples is missed.
type cpuMeter struct {
	root int
	base map[procKey]int64 // CPU ms at the first sample, for processes alive then
	last map[procKey]int64
	role map[procKey]role
	// kind is a browser process's chromiumKind, read once (kindOf).
	kind   map[procKey]string
	kindOf func(pid int) string
}

type procKey struct {
	pid   int
	start uint64
}

func newCPUMeter(root int, ps []proctree.Proc) *cpuMeter {
	m := &cpuMeter{root: root, base: map[procKey]int64{}, last: map[procKey]int64{}, role: map[procKey]role{},
		kind: map[procKey]string{}, kindOf: chromiumKind}
	for _, p := range ps {
		k := procKey{p.PID, p.Start}
		m.base[k], m.last[k] = p.CPUms, p.CPUms
		m.classify(k, p)
	}
	return m
}

func (m *cpuMeter) classify(k procKey, p proctree.Proc) {
	m.role[k] = roleOf(p, m.root)
	if m.role[k] == roleChromium {
		m.kind[k] = m.kindOf(p.PID)
	}
}

func (m *cpuMeter) sample(ps []proctree.Proc) {
	for _, p := range ps {
		k := procKey{p.PID, p.Start}
		m.last[k] = p.CPUms
		if _, ok := m.role[k]; !ok {
			m.classify(k, p)
		}
	}
}

// chromiumSeconds is the browser processes' CPU time since the first
// sample, per chromiumKinds entry.
func (m *cpuMeter) chromiumSeconds() map[string]float64 {
	out := map[string]float64{}
	for k, v := range m.last {
		if m.role[k] != roleChromium {
			continue
		}
		kind := m.kind[k]
		if !slices.Contains(chromiumKinds, kind) {
			kind = "other"
		}
		out[kind] += float64(v-m.base[k]) / 1000
	}
	return out
}

// seconds is the CPU time used since the first sample, per role.
func (m *cpuMeter) seconds() map[role]float64 {
	out := map[role]float64{}
	for k, v := range m.last {
		out[m.role[k]] += float64(v-m.base[k]) / 1000
	}
	return out
}

// memSplit sums RSS and PSS per role.
func memSplit(ps []proctree.Proc, root int) (rss, pss map[role]int64) {
	rss, pss = map[role]int64{}, map[role]int64{}
	for _, p := range ps {
		r := roleOf(p, root)
		rss[r] += p.RSSKB
		pss[r] += p.PSSKB
	}
	return rss, pss
}

// densityResult is one server's 16-session run.
type densityResult struct {
	*modeResult
	Server      string           `json:"server"`
	Seconds     float64          `json:"seconds"`
	CPU         map[role]float64 `json:"cpu_s"`
	CPUPerRound map[role]float64 `json:"cpu_s_per_round"`
	// ChromiumPerRound splits CPUPerRound's chromium by process kind.
	ChromiumPerRound map[string]float64 `json:"chromium_cpu_s_per_round"`
	PSSKB            map[role]int64     `json:"pss_kb"`
	PSSPerSess       int64              `json:"pss_per_session_kb"`
}

func runDensity(ctx context.Context, o options, bin, work, pages string) error {
	var rs []*densityResult
	var errs []error
	for _, name := range strings.Split(dens.servers, ",") {
		name = strings.TrimSpace(name)
		if name == "" || ctx.Err() != nil {
			continue
		}
		var s *server
		var err error
		switch name {
		case "ours":
			s, err = startOurs(ctx, o, bin, work, "ours", nil)
		case "upstream":
			s, err = startUpstream(ctx, work)
		default:
			err = fmt.Errorf("--servers: unknown server %q: want ours, upstream or both (ours,upstream)", name)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		logf("%s: %d sessions for %v", name, o.sessions, o.duration)
		r, err := measureDensity(ctx, o, s, pages, name)
		if r != nil {
			rs = append(rs, r)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	printDensity(os.Stdout, o, rs)
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"duration_s": o.duration.Seconds(), "sessions": o.sessions, "servers": rs}, "", "  ")
		if o.jsonOut == "-" {
			fmt.Println(string(b))
		} else if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// measureDensity connects o.sessions clients to s, loops them for
// o.duration while sampling CPU every 500 ms and PSS over the last fifth,
// then stops s.
func measureDensity(ctx context.Context, o options, s *server, pages, name string) (*densityResult, error) {
	r := &densityResult{modeResult: &modeResult{Mode: "context", Sessions: o.sessions, Tools: map[string]*toolStats{}}, Server: name}
	defer func() {
		if s != nil {
			_, _ = s.stop()
		}
	}()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * o.sessions}}
	defer hc.CloseIdleConnections()
	clients := connectAll(ctx, r.modeResult, s.url, hc, o.sessions)
	var wg sync.WaitGroup
	root := s.cmd.Process.Pid
	meter := newCPUMeter(root, proctree.Marked(s.marker))
	lctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start := time.Now()
	for i, c := range clients {
		if c != nil {
			wg.Go(func() { sessionLoop(lctx, o, c, pages, i, r.modeResult) })
		}
	}
	var peak int64
	for done := false; !done; {
		select {
		case <-lctx.Done():
			done = true
		case <-time.After(500 * time.Millisecond):
		}
		ps := proctree.Marked(s.marker)
		meter.sample(ps)
		if time.Since(start) < o.duration*4/5 {
			continue
		}
		rss, pss := memSplit(ps, root)
		var sum int64
		for _, v := range pss {
			sum += v
		}
		if sum > peak {
			peak, r.PSSKB, r.Procs = sum, pss, len(ps)
			r.RSSKB = rss[roleServer] + rss[roleDriver] + rss[roleChromium]
		}
	}
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	if r.Loops == 0 {
		// Calls still running at the end are not counted: say what the
		// server was doing.
		r.FirstErrors = append(r.FirstErrors, "no round finished; server log tail: "+mcptest.Tail(s.stderr.String(), 600))
	}
	r.CPU = meter.seconds()
	r.CPUPerRound, r.ChromiumPerRound = map[role]float64{}, map[string]float64{}
	if r.Loops > 0 {
		for k, v := range r.CPU {
			r.CPUPerRound[k] = v / float64(r.Loops)
		}
		for k, v := range meter.chromiumSeconds() {
			r.ChromiumPerRound[k] = v / float64(r.Loops)
		}
	}
	if r.Connected > 0 {
		r.PSSPerSess = peak / int64(r.Connected)
		r.RSSPerSessKB = r.RSSKB / int64(r.Connected)
	}
	for _, c := range clients {
		if c != nil {
			wg.Go(func() { _ = c.Close() })
		}
	}
	wg.Wait()
	left, err := s.stop()
	s = nil
	r.Leftover = left
	for _, t := range r.Tools {
		t.P50ms, t.P95ms = pct(t.lat, 50), pct(t.lat, 95)
	}
	if err != nil && name == "ours" {
		return r, fmt.Errorf("stop server: %w", err)
	}
	if len(left) != 0 {
		return r, fmt.Errorf("processes left after the server exited (killed): %v", left)
	}
	return r, nil
}

func printDensity(w io.Writer, o options, rs []*densityResult) {
	fmt.Fprintf(w, "\n%d sessions, %v per server, context isolation (navigate → snapshot → click); CPU-s and PSS by process role\n\n", o.sessions, o.duration)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tsessions\trounds\terrors\tnavigate p95 ms\tsnapshot p95 ms\tclick p95 ms\tCPU-s/round\tchromium\tdriver\tserver\tPSS MiB/session\tchromium\tdriver\tserver\tRSS MiB/session\t")
	total := func(m map[role]float64) float64 { return m[roleChromium] + m[roleDriver] + m[roleServer] }
	perSess := func(r *densityResult, kb int64) float64 {
		if r.Connected == 0 {
			return 0
		}
		return float64(kb) / 1024 / float64(r.Connected)
	}
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", r.Server, r.Connected, r.Sessions, r.Loops, r.Errors,
			r.p95("browser_navigate"), r.p95("browser_snapshot"), r.p95("browser_click"),
			total(r.CPUPerRound), r.CPUPerRound[roleChromium], r.CPUPerRound[roleDriver], r.CPUPerRound[roleServer],
			float64(r.PSSPerSess)/1024, perSess(r, r.PSSKB[roleChromium]), perSess(r, r.PSSKB[roleDriver]), perSess(r, r.PSSKB[roleServer]),
			float64(r.RSSPerSessKB)/1024)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nChromium CPU-s/round by process\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "server\t%s\t\n", strings.Join(chromiumKinds, "\t"))
	for _, r := range rs {
		fmt.Fprintf(tw, "%s", r.Server)
		for _, k := range chromiumKinds {
			fmt.Fprintf(tw, "\t%.3f", r.ChromiumPerRound[k])
		}
		fmt.Fprintln(tw, "\t")
	}
	_ = tw.Flush()
	if len(rs) == 2 && rs[1].Loops > 0 {
		a, b := rs[0], rs[1]
		ratio := func(x, y float64) string {
			if y == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2f", x/y)
		}
		fmt.Fprintf(w, "\n%s/%s: rounds %s, navigate p95 %s, snapshot p95 %s, click p95 %s, CPU-s/round %s, PSS/session %s\n", a.Server, b.Server,
			ratio(float64(a.Loops), float64(b.Loops)), ratio(a.p95("browser_navigate"), b.p95("browser_navigate")),
			ratio(a.p95("browser_snapshot"), b.p95("browser_snapshot")), ratio(a.p95("browser_click"), b.p95("browser_click")),
			ratio(total(a.CPUPerRound), total(b.CPUPerRound)), ratio(float64(a.PSSPerSess), float64(b.PSSPerSess)))
		if a.Server == "ours" && b.Server == "upstream" {
			printDensityGoals(w, a, b)
		}
	}
	fmt.Fprintln(w, "(upstream's single node process is both its server and its driver: counted as server)")
	for _, r := range rs {
		for _, e := range r.FirstErrors {
			fmt.Fprintf(w, "%s: error: %s\n", r.Server, mcptest.Tail(e, 300))
		}
		if len(r.Leftover) != 0 {
			fmt.Fprintf(w, "%s: LEFT BEHIND: pids %v\n", r.Server, r.Leftover)
		}
	}
}

// memoryResult is one measurement of one driver flag set.
type memoryResult struct {
	Flags string `json:"flags"`
	// Idle is after initialize (driver started, no browser yet); Big after
	// navigating to and snapshotting the 500k-character page.
	IdleRSSKB, IdlePSSKB map[role]int64
	BigRSSKB, BigPSSKB   map[role]int64
	RoundMedianMs        float64 `json:"round_median_ms"`
	DriverArgs           string  `json:"driver_args"`
}

// nodeWrapper writes a script that runs node with flags, for
// PLAYWRIGHT_NODEJS_PATH.
func nodeWrapper(work string, i int, flags string) (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", errors.New("node not found: install Node.js 20")
	}
	p := filepath.Join(work, fmt.Sprintf("node-%d", i))
	script := fmt.Sprintf("#!/bin/sh\nexec %s %s \"$@\"\n", node, flags)
	return p, os.WriteFile(p, []byte(script), 0o755)
}

// memEnv is the server environment that gives the driver flags: "default"
// leaves the server's own choice, anything else runs node through a
// wrapper with those flags and no NODE_OPTIONS.
func memEnv(work string, i int, flags string) ([]string, error) {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "NODE_OPTIONS=") && !strings.HasPrefix(e, "PLAYWRIGHT_NODEJS_PATH=") && !strings.HasPrefix(e, driverFlagsEnv+"=") {
			env = append(env, e)
		}
	}
	if flags == "default" {
		return env, nil
	}
	if flags == "none" {
		flags = ""
	}
	w, err := nodeWrapper(work, i, flags)
	if err != nil {
		return nil, err
	}
	return append(env, "PLAYWRIGHT_NODEJS_PATH="+w, "NODE_OPTIONS=", driverFlagsEnv+"="), nil
}

// driverFlagsEnv mirrors driver.NodeFlagsEnv (not imported: mcpload
// measures the binary from the outside).
const driverFlagsEnv = "CLOAKBROWSER_MCP_DRIVER_NODE_FLAGS"

func runMemory(ctx context.Context, o options, bin, work, pages string) error {
	sets := strings.Split(dens.memory, "|")
	var rs []*memoryResult
	for rep := range max(dens.memRepeats, 1) {
		for i, flags := range sets {
			flags = strings.TrimSpace(flags)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			env, err := memEnv(work, i, flags)
			if err != nil {
				return err
			}
			logf("memory: %q (repeat %d)", flags, rep+1)
			r, err := measureMemory(ctx, o, bin, work, pages, flags, env)
			if err != nil {
				logf("memory: flags %q: %s", flags, mcptest.Tail(err.Error(), 300))
				continue
			}
			rs = append(rs, r)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\ndriver flags\tidle RSS Go/driver MiB\tidle PSS Go/driver MiB\tbig RSS Go/driver MiB\tbig PSS Go/driver MiB\tround median ms (%d)\t\n", dens.memRounds)
	mib := func(m map[role]int64, r role) float64 { return float64(m[r]) / 1024 }
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%.1f / %.1f\t%.1f / %.1f\t%.1f / %.1f\t%.1f / %.1f\t%.0f\t\n", r.Flags,
			mib(r.IdleRSSKB, roleServer), mib(r.IdleRSSKB, roleDriver), mib(r.IdlePSSKB, roleServer), mib(r.IdlePSSKB, roleDriver),
			mib(r.BigRSSKB, roleServer), mib(r.BigRSSKB, roleDriver), mib(r.BigPSSKB, roleServer), mib(r.BigPSSKB, roleDriver), r.RoundMedianMs)
	}
	_ = tw.Flush()
	for _, r := range rs {
		fmt.Printf("%s: driver runs %s\n", r.Flags, r.DriverArgs)
	}
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(rs, "", "  ")
		return os.WriteFile(o.jsonOut, append(b, '\n'), 0o644)
	}
	return nil
}

// driverOnly keeps the node process of the driver (not its shim, which has
// exec'd into it anyway) and the Go server.
func driverOnly(ps []proctree.Proc, root int) []proctree.Proc {
	var out []proctree.Proc
	for _, p := range ps {
		if r := roleOf(p, root); r == roleServer || r == roleDriver {
			out = append(out, p)
		}
	}
	return out
}

func measureMemory(ctx context.Context, o options, bin, work, pages, flags string, env []string) (*memoryResult, error) {
	s, err := startOurs(ctx, o, bin, work, "mem", env)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	c, err := connect(ctx, s.url, hc)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	root := s.cmd.Process.Pid
	r := &memoryResult{Flags: flags}
	// The driver starts in the background: wait for its node process.
	var driverPid int
	for deadline := time.Now().Add(30 * time.Second); driverPid == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, p := range proctree.Marked(s.marker) {
			if p.Comm == "node" {
				driverPid = p.PID
			}
		}
	}
	if driverPid == 0 {
		return nil, errors.New("the driver's node process did not start within 30s")
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", driverPid)); err == nil {
		r.DriverArgs = strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", driverPid)); err == nil {
		for _, e := range strings.Split(string(b), "\x00") {
			if strings.HasPrefix(e, "NODE_OPTIONS=") {
				r.DriverArgs += " [" + e + "]"
			}
		}
	}
	time.Sleep(3 * time.Second)
	r.IdleRSSKB, r.IdlePSSKB = memSplit(driverOnly(proctree.Marked(s.marker), root), root)
	if _, _, err = call(ctx, c, o.callTO, "browser_navigate", map[string]any{"url": pages + "/big.html"}); err != nil {
		return nil, err
	}
	// A loaded machine can make the page's first snapshot miss the
	// server's bound: try again, the page is the same.
	var snap string
	for try := 0; try < 3; try++ {
		if snap, _, err = call(ctx, c, o.callTO, "browser_snapshot", map[string]any{}); err == nil {
			break
		}
		logf("memory: snapshot of the big page: %s", mcptest.Tail(err.Error(), 120))
	}
	if err != nil {
		return nil, err
	}
	if len(snap) < 100_000 {
		logf("memory: the big page's snapshot answer is %d characters (the server may outline it; the driver still moved the whole snapshot)", len(snap))
	}
	time.Sleep(3 * time.Second)
	r.BigRSSKB, r.BigPSSKB = memSplit(driverOnly(proctree.Marked(s.marker), root), root)
	var rounds []time.Duration
	fixtures := []string{"/lab.html", "/tools.html", "/forms.html"}
	for i := range dens.memRounds {
		start := time.Now()
		url := pages + fixtures[i%len(fixtures)]
		if _, _, err := call(ctx, c, o.callTO, "browser_navigate", map[string]any{"url": url}); err != nil {
			return nil, err
		}
		snap, _, err := call(ctx, c, o.callTO, "browser_snapshot", map[string]any{})
		if err != nil {
			return nil, err
		}
		m := buttonRE.FindStringSubmatch(snap)
		if m == nil {
			return nil, fmt.Errorf("no button in the snapshot of %s", url)
		}
		if _, _, err := call(ctx, c, o.callTO, "browser_click", map[string]any{"element": "first button", "target": m[1]}); err != nil {
			return nil, err
		}
		rounds = append(rounds, time.Since(start))
	}
	sort.Slice(rounds, func(i, j int) bool { return rounds[i] < rounds[j] })
	r.RoundMedianMs = float64(rounds[len(rounds)/2].Microseconds()) / 1000
	return r, nil
}

// printDensityGoals prints issue 16's goals for the 16-session loop, each
// with our figure and pass or miss.
func printDensityGoals(w io.Writer, ours, up *densityResult) {
	verdict := func(ok bool) string {
		if ok {
			return "pass"
		}
		return "miss"
	}
	fmt.Fprintln(w, "goals (issues 16, 28):")
	rounds := float64(ours.Loops) / float64(up.Loops)
	fmt.Fprintf(w, "  rounds ≥ 2× upstream's (issue 28's floor): %.2f× — %s\n", rounds, verdict(rounds >= 2))
	fmt.Fprintf(w, "  rounds ≥ 3× upstream's: %.2f× — %s\n", rounds, verdict(rounds >= 3))
	for _, tool := range []string{"browser_navigate", "browser_snapshot", "browser_click"} {
		v := ours.p95(tool)
		fmt.Fprintf(w, "  %s p95 ≤ 3 s: %.0f ms — %s\n", tool, v, verdict(v > 0 && v <= 3000))
	}
	if up.PSSPerSess > 0 {
		pss := float64(ours.PSSPerSess) / float64(up.PSSPerSess)
		fmt.Fprintf(w, "  PSS per session ≤ 0.5× upstream's: %.2f× — %s\n", pss, verdict(pss <= 0.5))
	}
}

// p95 is the 95th percentile of a tool's call times, in ms (0 if none).
func (r *densityResult) p95(tool string) float64 {
	if t := r.Tools[tool]; t != nil {
		return t.P95ms
	}
	return 0
}
