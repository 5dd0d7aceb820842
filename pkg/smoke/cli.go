package smoke

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
)

// Exit codes of Main.
const (
	ExitPassed  = 0 // every scenario passed
	ExitFailed  = 1 // a step failed, a server did not start, or interrupted
	ExitInvalid = 2 // a file or flag is invalid
)

const usage = `usage: cloakbrowser-mcp smoke [flags] FILE...
       cloakbrowser-mcp smoke record [flags] STEPS.jsonl   (run with --help for its flags)

Runs smoke scenarios (YAML or JSON) of MCP tool calls with expectations.
Exit 0: all passed; 1: a step failed (or a server did not start); 2: a file
or flag is invalid.

Flags:
`

// cliOptions are the smoke command's flags.
type cliOptions struct {
	junit, reportJSON, artifacts string
	trace, update                bool
	expectTimeout                time.Duration
	parallel                     int
	timeout                      time.Duration
	serverURL, serverCmd, serve  string
	headers                      []string
	files                        []string
}

type listFlag struct{ v *[]string }

func (l listFlag) String() string     { return "" }
func (l listFlag) Set(s string) error { *l.v = append(*l.v, s); return nil }

func parseFlags(args []string, stderr io.Writer) (cliOptions, error) {
	var o cliOptions
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	fs.StringVar(&o.junit, "junit", "", "write a JUnit XML report to `FILE` (one testsuite per scenario, one testcase per step)")
	fs.StringVar(&o.reportJSON, "report-json", "", "write a JSON report to `FILE`")
	fs.StringVar(&o.artifacts, "artifacts", "", "on a failing step, save a screenshot, the snapshot and console messages under `DIR`")
	fs.BoolVar(&o.trace, "trace", false, "record a Playwright trace of each scenario, kept in --artifacts when it fails")
	fs.IntVar(&o.parallel, "parallel", 1, "run up to `N` scenarios at once, each with its own server and browser")
	fs.DurationVar(&o.timeout, "timeout", DefaultStepTimeout, "bound on each step")
	fs.StringVar(&o.serverURL, "server-url", "", "smoke a running Streamable HTTP server at `URL` (a session per scenario) instead of starting one")
	fs.Var(listFlag{&o.headers}, "header", "`'Name: value'` header for --server-url (repeatable)")
	fs.StringVar(&o.serverCmd, "server-cmd", "", "spawn this stdio MCP server `COMMAND` (run by sh) per scenario instead of cloakbrowser-mcp")
	fs.BoolVar(&o.update, "update", false, "re-record the url, title and snapshot_has expectations from what the pages show now, rewrite the files and print the diff")
	fs.DurationVar(&o.expectTimeout, "expect-timeout", DefaultExpectTimeout, "how long a step's page expectations (url, title, text, snapshot_has) wait for the page")
	fs.StringVar(&o.serve, "serve", "", "serve `DIR` on loopback during the run and set ${BASE} to its URL")
	// Flags and files may be interleaved.
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		o.files = append(o.files, args[0])
		args = args[1:]
	}
	switch {
	case len(o.files) == 0:
		return o, errors.New("no scenario files: pass one or more .yaml/.json files")
	case o.parallel < 1:
		return o, fmt.Errorf("--parallel %d: must be at least 1", o.parallel)
	case o.timeout <= 0:
		return o, fmt.Errorf("--timeout %s: must be positive (e.g. 30s)", o.timeout)
	case o.expectTimeout <= 0:
		return o, fmt.Errorf("--expect-timeout %s: must be positive (e.g. 5s)", o.expectTimeout)
	case o.serverURL != "" && o.serverCmd != "":
		return o, errors.New("--server-url and --server-cmd: pick one")
	case len(o.headers) > 0 && o.serverURL == "":
		return o, errors.New("--header is for --server-url")
	}
	if o.serverURL != "" && !strings.HasPrefix(o.serverURL, "http://") && !strings.HasPrefix(o.serverURL, "https://") {
		return o, fmt.Errorf("--server-url %q: want an http:// or https:// URL of the MCP endpoint", quote(o.serverURL))
	}
	for _, h := range o.headers {
		if k, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(k) == "" {
			return o, fmt.Errorf("--header: want 'Name: value', got %q", quote(redactHeader(h)))
		}
	}
	return o, nil
}

// redactHeader hides a header's value: it may be a token.
func redactHeader(h string) string {
	if k, _, ok := strings.Cut(h, ":"); ok {
		return k + ": …"
	}
	return "…"
}

// Main is the `cloakbrowser-mcp smoke` command: it parses args, runs the
// scenario files and returns the exit code. Progress and the summary go to
// stderr; nothing is written to stdout. SIGINT/SIGTERM stop the run: the
// servers and browsers are closed and the partial reports written.
// self is the cloakbrowser-mcp binary to start per scenario (os.Executable).
func Main(ctx context.Context, self string, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "record" {
		return recordMain(args[1:], stdout, stderr)
	}
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitPassed
	}
	if err != nil {
		fmt.Fprintf(stderr, "smoke: %v\n(run `cloakbrowser-mcp smoke --help` for the flags)\n", err)
		return ExitInvalid
	}
	var scenarios []*Scenario
	var errs []error
	for _, f := range o.files {
		sc, err := LoadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		scenarios = append(scenarios, sc)
	}
	vars := map[string]string{}
	if o.serve != "" {
		fsrv, err := serveDir(o.serve)
		if err != nil {
			fmt.Fprintf(stderr, "smoke: --serve: %v\n", err)
			return ExitInvalid
		}
		defer fsrv.Close()
		vars["BASE"] = fsrv.URL
	}
	for _, sc := range scenarios {
		if err := sc.CheckVars(func(n string) bool {
			_, ok := os.LookupEnv(n)
			return ok || vars[n] != "" || (n == "BASE" && sc.Serve != "")
		}); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintf(stderr, "smoke: %v\n", e)
		}
		return ExitInvalid
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := &lockedWriter{w: stderr}
	color := isTerminal(stderr)
	start, note := o.starter(self)
	if note != "" {
		fmt.Fprintf(stderr, "smoke: %s\n", note)
	}

	results := make([]*Result, len(scenarios))
	sem := make(chan struct{}, o.parallel)
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			results[i] = notStarted(sc)
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			ro := Options{Start: start, Vars: vars, StepTimeout: o.timeout, Trace: o.trace, Progress: progress, Color: color,
				ExpectTimeout: o.expectTimeout, Update: o.update}
			if o.artifacts != "" {
				ro.Artifacts = filepath.Join(o.artifacts, fmt.Sprintf("%02d-%s", i+1, slug(sc.File)))
			}
			res, _ := Run(ctx, sc, ro)
			if res.Status == Invalid {
				fmt.Fprintf(progress, "smoke: %s\n", res.Error)
			}
			results[i] = res
		})
	}
	wg.Wait()

	fmt.Fprintln(stderr)
	WriteSummary(progress, results, color)
	code := ExitPassed
	for _, r := range results {
		switch r.Status {
		case Invalid:
			code = ExitInvalid
		case Failed:
			if code == ExitPassed {
				code = ExitFailed
			}
		}
	}
	if o.update && ctx.Err() == nil {
		for i, r := range results {
			if r.Status != Passed {
				fmt.Fprintf(stderr, "smoke: --update: %s not updated: a step failed\n", scenarios[i].File)
				continue
			}
			if _, err := Update(scenarios[i], r, stdout); err != nil {
				fmt.Fprintf(stderr, "smoke: --update: %v\n", err)
				code = max(code, ExitFailed)
			}
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "smoke: interrupted; the reports hold the steps that ran")
		if code == ExitPassed {
			code = ExitFailed
		}
	}
	if o.junit != "" {
		if err := writeFile(o.junit, func(w io.Writer) error { return WriteJUnit(w, results) }); err != nil {
			fmt.Fprintf(stderr, "smoke: --junit: %v\n", err)
			code = max(code, ExitFailed)
		}
	}
	if o.reportJSON != "" {
		if err := writeFile(o.reportJSON, func(w io.Writer) error { return WriteJSON(w, results) }); err != nil {
			fmt.Fprintf(stderr, "smoke: --report-json: %v\n", err)
			code = max(code, ExitFailed)
		}
	}
	return code
}

func notStarted(sc *Scenario) *Result {
	r := &Result{Name: sc.Name, File: sc.File, Status: Failed, Error: "interrupted before it started", Started: time.Now()}
	for i, st := range sc.Steps {
		r.Steps = append(r.Steps, StepResult{Index: i + 1, Name: cmpOr(st.Name, st.Tool), Tool: st.Tool, Line: st.Line, Status: Skipped})
	}
	return r
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// starter returns how each scenario gets its client, and a note to print.
func (o cliOptions) starter(self string) (Starter, string) {
	switch {
	case o.serverURL != "":
		headers := map[string]string{}
		for _, h := range o.headers {
			k, v, _ := strings.Cut(h, ":")
			headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		return func(ctx context.Context, sc *Scenario) (*embed.Client, error) {
			return embed.Connect(ctx, o.serverURL, embed.ConnectOptions{Headers: headers, ClientName: "cloakbrowser-mcp-smoke"})
		}, "scenarios' server.args are ignored with --server-url"
	case o.serverCmd != "":
		return func(ctx context.Context, sc *Scenario) (*embed.Client, error) {
			// sh runs the command line; the scenario's server.args follow it.
			args := append([]string{"-c", o.serverCmd + ` "$@"`, "smoke-server"}, sc.Server.Args...)
			return embed.StartCommand(ctx, "/bin/sh", embed.Options{Args: args, ClientName: "cloakbrowser-mcp-smoke"})
		}, ""
	default:
		return func(ctx context.Context, sc *Scenario) (*embed.Client, error) {
			out, err := os.MkdirTemp("", "cloakbrowser-mcp-smoke-")
			if err != nil {
				return nil, err
			}
			args := append([]string{"serve"}, sc.Server.Args...)
			if !hasFlag(args, "--output-dir") {
				args = append(args, "--output-dir", out)
			}
			if o.trace {
				args = withCap(args, "devtools")
			}
			c, err := embed.StartCommand(ctx, self, embed.Options{Args: args, ClientName: "cloakbrowser-mcp-smoke"})
			if err != nil {
				os.RemoveAll(out)
				return nil, err
			}
			c.OnClose(func() error { return os.RemoveAll(out) })
			return c, nil
		}, ""
	}
}

func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == name || strings.HasPrefix(a, name+"=") })
}

// withCap adds cap to the --caps flag of args, or adds the flag.
func withCap(args []string, cap string) []string {
	args = slices.Clone(args)
	for i, a := range args {
		switch {
		case a == "--caps" && i+1 < len(args):
			args[i+1] += "," + cap
			return args
		case strings.HasPrefix(a, "--caps="):
			args[i] += "," + cap
			return args
		}
	}
	return append(args, "--caps", cap)
}

var nonSlug = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func slug(file string) string {
	s := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	s = strings.Trim(nonSlug.ReplaceAllString(s, "-"), "-")
	if s == "" {
		s = "scenario"
	}
	return s
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// isTerminal says w is a character device and colour is not turned off
// (NO_COLOR, TERM=dumb).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
