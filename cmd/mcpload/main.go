//go:build linux

// Command mcpload is a load benchmark for the server over Streamable HTTP:
// it builds and starts the server binary, serves the fixture pages, and
// runs concurrent MCP sessions looping navigate → snapshot → click for a
// while in each isolation mode, then reports calls, errors, latency per
// tool and resident memory of the whole server process tree.
//
//	go run ./cmd/mcpload --duration 30s --modes browser,context
//
// With --servers it runs the density comparison instead (density.go): the
// same loop in context isolation against ours and upstream @playwright/mcp,
// with CPU-seconds per round and PSS per session split by Chromium, driver
// and server. With --memory it measures the driver's memory per set of node
// flags.
//
//	go run ./cmd/mcpload --servers ours,upstream --duration 30s
//	go run ./cmd/mcpload --memory 'none|default|--max-semi-space-size=1'
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

type options struct {
	duration   time.Duration
	sessions   int
	sessionMax int
	modes      []string
	pages      string
	bin        string
	jsonOut    string
	callTO     time.Duration
	verbose    bool
}

func main() {
	var o options
	var modes string
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "how long the sessions loop in each mode")
	flag.IntVar(&o.sessions, "sessions", 16, "concurrent MCP sessions")
	flag.IntVar(&o.sessionMax, "session-max", 32, "the server's --http-session-max")
	flag.StringVar(&modes, "modes", "browser,context", "isolation modes to run, comma-separated")
	flag.StringVar(&o.pages, "pages", "testdata/pages", "fixture page directory")
	flag.StringVar(&o.bin, "bin", "", "server binary (default: go build ./cmd/cloakbrowser-mcp)")
	flag.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to this file (- for stdout)")
	flag.DurationVar(&o.callTO, "call-timeout", 60*time.Second, "timeout of one tool call")
	flag.BoolVar(&o.verbose, "v", false, "log progress and errors")
	densityFlags()
	fleetFlags()
	flag.Parse()
	for _, m := range strings.Split(modes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			o.modes = append(o.modes, m)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if ran, err := densityMode(ctx, o); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpload:", err)
			os.Exit(1)
		}
		return
	}
	if ran, err := fleetMode(ctx, o); ran {
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpload:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mcpload: "+format+"\n", args...)
}

func run(ctx context.Context, o options) error {
	work, bin, err := prepare(ctx, o)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fx := httptest.NewServer(http.FileServer(http.Dir(o.pages)))
	defer fx.Close()

	var results []*modeResult
	var errs []error
	for _, mode := range o.modes {
		if ctx.Err() != nil {
			break
		}
		logf("mode %s: %d sessions for %v", mode, o.sessions, o.duration)
		r, err := runMode(ctx, o, bin, work, fx.URL, mode)
		if r != nil {
			results = append(results, r)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mode %s: %w", mode, err))
			logf("mode %s: %v", mode, err)
		}
	}
	printTable(os.Stdout, o, results)
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"duration_s": o.duration.Seconds(), "sessions": o.sessions, "modes": results,
		}, "", "  ")
		if o.jsonOut == "-" {
			fmt.Println(string(b))
		} else if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// toolStats are the latencies of one tool in one mode.
type toolStats struct {
	Calls  int     `json:"calls"`
	Errors int     `json:"errors"`
	P50ms  float64 `json:"p50_ms"`
	P95ms  float64 `json:"p95_ms"`
	lat    []time.Duration
}

type modeResult struct {
	Mode         string                `json:"mode"`
	Sessions     int                   `json:"sessions"`
	Connected    int                   `json:"connected"`
	Loops        int                   `json:"loops"`
	Calls        int                   `json:"calls"`
	Errors       int                   `json:"errors"`
	Tools        map[string]*toolStats `json:"tools"`
	RSSKB        int64                 `json:"rss_kb"`
	RSSPerSessKB int64                 `json:"rss_per_session_kb"`
	Procs        int                   `json:"procs"`
	FirstErrors  []string              `json:"first_errors,omitempty"`
	Leftover     []int                 `json:"leftover_pids,omitempty"`
	TmpLeft      []string              `json:"tmp_left,omitempty"`

	mu sync.Mutex
}

func (r *modeResult) add(tool string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.Tools[tool]
	if s == nil {
		s = &toolStats{}
		r.Tools[tool] = s
	}
	s.Calls++
	r.Calls++
	if err != nil {
		s.Errors++
		r.Errors++
		if len(r.FirstErrors) < 5 {
			r.FirstErrors = append(r.FirstErrors, tool+": "+err.Error())
		}
		return
	}
	s.lat = append(s.lat, d)
}

// markerEnv tags every process a server starts: the driver and the browser
// inherit the environment, even when they detach or are reparented to init,
// so proctree finds the whole tree (renderers by parentage).
const markerEnv = "MCPLOAD_MARKER"

// server is a started server binary.
type server struct {
	cmd    *exec.Cmd
	marker string
	tmp    string
	stderr *mcptest.SyncBuffer
	exited chan error
	url    string
}

func startServer(ctx context.Context, o options, bin, work, mode string) (*server, error) {
	dir, err := os.MkdirTemp(work, mode+"-")
	if err != nil {
		return nil, err
	}
	s := &server{marker: markerEnv + "=" + filepath.Base(dir), tmp: filepath.Join(dir, "tmp"), stderr: &mcptest.SyncBuffer{}, exited: make(chan error, 1)}
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "--transport", "streamable-http", "--port", "0", "--no-download",
		"--http-session-max", strconv.Itoa(o.sessionMax), "--http-isolation", mode,
		"--log-level", "info", "--output-dir", filepath.Join(dir, "out"))
	// Its own TMPDIR: profiles land there, and what is left is seen.
	s.cmd.Env = append(os.Environ(), s.marker, "TMPDIR="+s.tmp)
	s.cmd.Stderr = s.stderr
	proctree.Own(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- s.cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for s.url == "" {
		s.url = mcptest.ListenURL(s.stderr.String())
		if s.url != "" {
			break
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			s.stop()
			return nil, fmt.Errorf("server exited before serving: %v\n%s", err, mcptest.Tail(s.stderr.String(), 4000))
		case <-deadline:
			s.stop()
			return nil, fmt.Errorf("server did not log its URL in 30s:\n%s", mcptest.Tail(s.stderr.String(), 4000))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return s, nil
}

// stop sends SIGTERM, waits for the server, then kills whatever of its tree
// is left and reports it.
func (s *server) stop() (left []int, stopErr error) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		s.exited <- err
		stopErr = err
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		stopErr = errors.New("server did not exit within 30s of SIGTERM; killed")
	}
	// Anything still running after a clean exit is a leak: note it, then
	// kill it so nothing outlives the benchmark.
	for _, p := range proctree.Marked(s.marker) {
		left = append(left, p.PID)
	}
	if rest := proctree.Kill(s.marker, 0, nil, 10*time.Second); len(rest) != 0 {
		stopErr = errors.Join(stopErr, fmt.Errorf("processes survive SIGKILL: %v", rest))
	}
	return left, stopErr
}

func connect(ctx context.Context, url string, hc *http.Client) (*client.Client, error) {
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(ictx); err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpload", Version: "1"}
	if _, err := c.Initialize(ictx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

var buttonRE = regexp.MustCompile(`button "[^"\n]*" \[ref=((?:f\d+)?e\d+)\]`)

func call(ctx context.Context, c *client.Client, to time.Duration, name string, args map[string]any) (string, time.Duration, error) {
	cctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	start := time.Now()
	res, err := c.CallTool(cctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	d := time.Since(start)
	if err != nil {
		return "", d, err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return b.String(), d, fmt.Errorf("tool error: %s", mcptest.Tail(b.String(), 300))
	}
	return b.String(), d, nil
}

// sessionLoop navigates, snapshots and clicks until ctx ends.
func sessionLoop(ctx context.Context, o options, c *client.Client, pages string, n int, r *modeResult) {
	fixtures := []string{"/lab.html", "/tools.html", "/forms.html"}
	for i := n; ctx.Err() == nil; i++ {
		url := pages + fixtures[i%len(fixtures)]
		_, d, err := call(ctx, c, o.callTO, "browser_navigate", map[string]any{"url": url})
		if ctx.Err() != nil {
			return
		}
		r.add("browser_navigate", d, err)
		snap, d, err := call(ctx, c, o.callTO, "browser_snapshot", map[string]any{})
		if ctx.Err() != nil {
			return
		}
		r.add("browser_snapshot", d, err)
		if err != nil {
			continue
		}
		m := buttonRE.FindStringSubmatch(snap)
		if m == nil {
			r.add("browser_click", 0, fmt.Errorf("no button in the snapshot of %s", url))
			continue
		}
		_, d, err = call(ctx, c, o.callTO, "browser_click", map[string]any{"element": "first button", "target": m[1]})
		if ctx.Err() != nil {
			return
		}
		r.add("browser_click", d, err)
		r.mu.Lock()
		r.Loops++
		r.mu.Unlock()
	}
}

func runMode(ctx context.Context, o options, bin, work, pages, mode string) (*modeResult, error) {
	r := &modeResult{Mode: mode, Sessions: o.sessions, Tools: map[string]*toolStats{}}
	s, err := startServer(ctx, o, bin, work, mode)
	if err != nil {
		return nil, err
	}
	var stopErr error
	defer func() {
		// Idempotent: runMode stops the server itself on the normal path.
		if s != nil {
			_, _ = s.stop()
		}
	}()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * o.sessions}}
	defer hc.CloseIdleConnections()

	clients := connectAll(ctx, r, s.url, hc, o.sessions)
	var wg sync.WaitGroup
	lctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start := time.Now()
	for i, c := range clients {
		if c != nil {
			wg.Go(func() { sessionLoop(lctx, o, c, pages, i, r) })
		}
	}
	// Sample memory over the last fifth of the run; keep the peak.
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		select {
		case <-time.After(o.duration * 4 / 5):
		case <-lctx.Done():
			return
		}
		for {
			var sum int64
			ps := proctree.Marked(s.marker)
			for _, p := range ps {
				sum += p.RSSKB
			}
			r.mu.Lock()
			if sum > r.RSSKB {
				r.RSSKB, r.Procs = sum, len(ps)
			}
			r.mu.Unlock()
			select {
			case <-lctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	wg.Wait()
	<-sampled
	if o.verbose {
		logf("mode %s: loop ended after %v", mode, time.Since(start).Round(time.Millisecond))
	}
	if r.Connected > 0 {
		r.RSSPerSessKB = r.RSSKB / int64(r.Connected)
	}
	for _, c := range clients {
		if c != nil {
			wg.Go(func() { _ = c.Close() })
		}
	}
	wg.Wait()
	tmp := s.tmp
	left, err := s.stop()
	s = nil
	stopErr = err
	r.Leftover = left
	// Temp profiles and other files the server or its browsers left.
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		for _, e := range ents {
			r.TmpLeft = append(r.TmpLeft, e.Name())
		}
	}
	for _, t := range r.Tools {
		t.P50ms, t.P95ms = pct(t.lat, 50), pct(t.lat, 95)
	}
	if stopErr != nil {
		return r, fmt.Errorf("stop server: %w", stopErr)
	}
	if len(left) != 0 {
		return r, fmt.Errorf("processes left after the server exited (killed): %v", left)
	}
	if len(r.TmpLeft) != 0 {
		return r, fmt.Errorf("left in the server's TMPDIR: %v", r.TmpLeft)
	}
	return r, nil
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return float64(s[i].Microseconds()) / 1000
}

func printTable(w *os.File, o options, rs []*modeResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\n%d sessions, %v per mode (navigate → snapshot → click)\n\n", o.sessions, o.duration)
	fmt.Fprintln(tw, "mode\tsessions\tloops\tcalls\terrors\tnavigate p50/p95 ms\tsnapshot p50/p95 ms\tclick p50/p95 ms\tprocs\tRSS MiB\tRSS/session MiB\t")
	for _, r := range rs {
		cell := func(name string) string {
			t := r.Tools[name]
			if t == nil {
				return "-"
			}
			return fmt.Sprintf("%.0f / %.0f", t.P50ms, t.P95ms)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%.0f\t%.1f\t\n", r.Mode, r.Connected, r.Sessions, r.Loops, r.Calls, r.Errors,
			cell("browser_navigate"), cell("browser_snapshot"), cell("browser_click"), r.Procs,
			float64(r.RSSKB)/1024, float64(r.RSSPerSessKB)/1024)
	}
	_ = tw.Flush()
	for _, r := range rs {
		for _, e := range r.FirstErrors {
			fmt.Fprintf(w, "%s: error: %s\n", r.Mode, mcptest.Tail(e, 300))
		}
		if len(r.Leftover) != 0 || len(r.TmpLeft) != 0 {
			fmt.Fprintf(w, "%s: LEFT BEHIND: pids %v, tmp %v\n", r.Mode, r.Leftover, r.TmpLeft)
		}
	}
}

// prepare checks the fixture pages and makes a work directory (the caller
// removes it) holding the server binary, built unless --bin names one.
func prepare(ctx context.Context, o options) (work, bin string, err error) {
	if _, err := os.Stat(filepath.Join(o.pages, "lab.html")); err != nil {
		return "", "", fmt.Errorf("fixture pages: %w (run from the repository root or pass --pages)", err)
	}
	if work, err = os.MkdirTemp("", "mcpload-"); err != nil {
		return "", "", err
	}
	bin = o.bin
	if bin == "" {
		bin = filepath.Join(work, "cloakbrowser-mcp")
		logf("building the server")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cloakbrowser-mcp")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			os.RemoveAll(work)
			return "", "", fmt.Errorf("go build: %w", err)
		}
	}
	return work, bin, nil
}

// connectAll initializes n clients at url at once; r records the failures
// (as "initialize") and counts the connected ones. A failed client is nil.
func connectAll(ctx context.Context, r *modeResult, url string, hc *http.Client, n int) []*client.Client {
	clients := make([]*client.Client, n)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			c, err := connect(ctx, url, hc)
			if err != nil {
				r.add("initialize", 0, err)
				return
			}
			clients[i] = c
		})
	}
	wg.Wait()
	for _, c := range clients {
		if c != nil {
			r.Connected++
		}
	}
	return clients
}

// freePort is a loopback TCP port free right now, for a child that takes
// its port as a flag.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
