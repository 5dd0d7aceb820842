package smoke

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
)

// DefaultStepTimeout bounds one step when Options.StepTimeout is zero.
const DefaultStepTimeout = 60 * time.Second

// Starter gives Run a connected client for a scenario: it starts a server
// (with sc.Server.Args) or opens a session on a running one. Run closes the
// client when the scenario ends.
type Starter func(ctx context.Context, sc *Scenario) (*embed.Client, error)

// InProcess is the default Starter: a cloakbrowser-mcp server in this
// process with the scenario's server args added to args.
func InProcess(args ...string) Starter {
	return func(ctx context.Context, sc *Scenario) (*embed.Client, error) {
		return embed.Start(ctx, embed.Options{Args: append(slices.Clone(args), sc.Server.Args...)})
	}
}

// Options configure Run.
type Options struct {
	// Start gives the scenario its client. If nil, InProcess().
	Start Starter
	// LookupEnv reads the process environment for ${VAR}s. If nil,
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Vars are set over the scenario's env and the environment (the
	// runner's --serve sets BASE here).
	Vars map[string]string
	// StepTimeout bounds each step's call. If zero, DefaultStepTimeout.
	StepTimeout time.Duration
	// Artifacts, if set, is the directory where a failing step leaves a
	// screenshot, the full snapshot, the console messages and, with Trace,
	// a Playwright trace of the scenario.
	Artifacts string
	// Trace records a Playwright trace of the scenario (browser_start_tracing,
	// which our server offers with --caps devtools) and keeps it on failure.
	Trace bool
	// Progress, if set, gets one line per step with its time.
	Progress io.Writer
	// Color uses ANSI colours in Progress lines.
	Color bool
	// ExpectTimeout bounds the wait for a step's page expectations (url,
	// title, text, snapshot_has). If zero, DefaultExpectTimeout.
	ExpectTimeout time.Duration
	// Update records what each step's page shows instead of checking the
	// page expectations (StepResult.Observed), for --update.
	Update bool
}

// Status is the outcome of a step or a scenario.
type Status string

// Outcomes.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped" // a step after a failing one
	Invalid Status = "invalid" // the scenario is malformed (exit 2)
)

// Result is what Run found.
type Result struct {
	Name     string        `json:"name"`
	File     string        `json:"file"`
	Status   Status        `json:"status"`
	Duration time.Duration `json:"-"`
	MS       int64         `json:"ms"`
	// Error says why the scenario could not run its steps (a server that
	// did not start, an unknown tool, an interrupt), with the server's
	// stderr tail when it is the cause.
	Error string       `json:"error,omitempty"`
	Steps []StepResult `json:"steps"`
	// Started is when the scenario began.
	Started time.Time `json:"started"`

	vars map[string]string // the ${VAR}s' values the steps ran with
}

// StepResult is one step's outcome.
type StepResult struct {
	Index    int           `json:"index"` // from 1
	Name     string        `json:"name"`
	Tool     string        `json:"tool"`
	Line     int           `json:"line"`
	Status   Status        `json:"status"`
	Duration time.Duration `json:"-"`
	MS       int64         `json:"ms"`
	// Failure is the expectation that failed, naming the field.
	Failure string `json:"failure,omitempty"`
	// Excerpt is the start of the response text (or the call's error).
	Excerpt string `json:"excerpt,omitempty"`
	// Artifacts are the files left for a failing step.
	Artifacts []string `json:"artifacts,omitempty"`
	// Observed is what the page showed after the step, with
	// Options.Update.
	Observed *Observed `json:"observed,omitempty"`
}

// Passed says every step passed.
func (r *Result) Passed() bool { return r.Status == Passed }

// ErrInterrupted is the Error of a scenario stopped by its context.
var ErrInterrupted = errors.New("interrupted")

const excerptMax = 1500

// Run runs sc and returns its result. The error is non-nil only when the
// scenario is malformed (errors.Is(err, ErrInvalid)): undefined ${VAR}s,
// or tools the server does not offer; the Result then has Status Invalid.
// A step that fails, a server that does not start and a cancelled ctx are
// reported in the Result. Everything Run started is closed when it returns.
func Run(ctx context.Context, sc *Scenario, o Options) (*Result, error) {
	r := &runner{sc: sc, o: o, res: &Result{Name: sc.Name, File: sc.File, Started: time.Now()}}
	err := r.run(ctx)
	r.res.vars = r.vars
	r.res.Duration = time.Since(r.res.Started)
	r.res.MS = r.res.Duration.Milliseconds()
	return r.res, err
}

type runner struct {
	sc   *Scenario
	o    Options
	res  *Result
	vars map[string]string
	c    *embed.Client
}

func (r *runner) lookup(name string) (string, bool) {
	if v, ok := r.o.Vars[name]; ok {
		return v, true
	}
	le := r.o.LookupEnv
	if le == nil {
		le = os.LookupEnv
	}
	if v, ok := le(name); ok {
		return v, true
	}
	v, ok := r.sc.Env[name]
	return v, ok
}

func (r *runner) run(ctx context.Context) error {
	sc := r.sc
	for i, st := range sc.Steps {
		name := st.Name
		if name == "" {
			name = st.Tool
		}
		r.res.Steps = append(r.res.Steps, StepResult{Index: i + 1, Name: name, Tool: st.Tool, Line: st.Line, Status: Skipped})
	}
	if err := sc.CheckVars(func(n string) bool { _, ok := r.lookup(n); return ok || (n == "BASE" && sc.Serve != "") }); err != nil {
		r.res.Status, r.res.Error = Invalid, err.Error()
		return err
	}
	r.vars = map[string]string{}
	for k, v := range sc.Env {
		r.vars[k] = v
	}
	for _, kv := range os.Environ() {
		if k, _, ok := strings.Cut(kv, "="); ok {
			if v, ok := r.lookup(k); ok {
				r.vars[k] = v
			}
		}
	}
	for k, v := range r.o.Vars {
		r.vars[k] = v
	}
	for _, n := range sc.varNames() {
		// A name Options.LookupEnv knows that the process environment lacks.
		if _, ok := r.vars[n]; !ok {
			if v, ok := r.lookup(n); ok {
				r.vars[n] = v
			}
		}
	}
	if sc.Serve != "" {
		dir := sc.Serve
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(sc.File), dir)
		}
		fs, err := serveDir(dir)
		if err != nil {
			r.res.Status, r.res.Error = Invalid, (&InvalidError{File: sc.File, Line: sc.line("$.serve"), Msg: fmt.Sprintf("serve: %v", err)}).Error()
			return &InvalidError{File: sc.File, Line: sc.line("$.serve"), Msg: fmt.Sprintf("serve: %v", err)}
		}
		defer fs.Close()
		r.vars["BASE"] = fs.URL
	}
	if ctx.Err() != nil {
		r.res.Status, r.res.Error = Failed, ErrInterrupted.Error()
		return nil
	}
	start := r.o.Start
	if start == nil {
		start = InProcess()
	}
	c, err := start(ctx, sc)
	if err != nil {
		r.res.Status, r.res.Error = Failed, fmt.Sprintf("server did not start: %v", err)
		r.progressf("%s %s: %s\n", r.mark(Failed), sc.Name, r.res.Error)
		return nil
	}
	r.c = c
	defer func() {
		if err := c.Close(); err != nil && r.o.Progress != nil {
			fmt.Fprintf(r.o.Progress, "  %s: closing the server: %v\n", sc.Name, err)
		}
	}()
	if err := r.checkTools(ctx); err != nil {
		if errors.Is(err, ErrInvalid) {
			r.res.Status, r.res.Error = Invalid, err.Error()
			return err
		}
		r.res.Status, r.res.Error = Failed, err.Error()
		return nil
	}
	tracing := r.o.Trace && r.startTrace(ctx)
	r.res.Status = Passed
	for i := range sc.Steps {
		sr := &r.res.Steps[i]
		r.step(ctx, i, sr)
		r.progressf("%s %s › %d %s (%s)\n", r.mark(sr.Status), sc.Name, sr.Index, sr.Name, sr.Duration.Round(time.Millisecond))
		if sr.Status == Failed {
			r.res.Status = Failed
			r.progressf("    %s\n", strings.ReplaceAll(sr.Failure, "\n", "\n    "))
			if ctx.Err() != nil {
				r.res.Error = ErrInterrupted.Error()
			} else if r.o.Artifacts != "" {
				sr.Artifacts = r.artifacts(ctx, sr.Index, tracing)
			}
			return nil
		}
	}
	if tracing {
		// Passed: stop the trace without keeping it.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.stepTimeout())
		_, _ = r.c.Call(sctx, "browser_stop_tracing", map[string]any{})
		cancel()
	}
	return nil
}

func (r *runner) stepTimeout() time.Duration {
	if r.o.StepTimeout > 0 {
		return r.o.StepTimeout
	}
	return DefaultStepTimeout
}

// checkTools fails the scenario as invalid when a step names a tool the
// server does not offer.
func (r *runner) checkTools(ctx context.Context) error {
	lctx, cancel := context.WithTimeout(ctx, r.stepTimeout())
	defer cancel()
	tools, err := r.c.ListTools(lctx)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var errs []error
	for i, st := range r.sc.Steps {
		if !slices.Contains(tools, st.Tool) {
			errs = append(errs, r.sc.invalid(fmt.Sprintf("$.steps[%d].tool", i), "step %d: tool: the server has no tool %q%s", i+1, quote(st.Tool), suggest(st.Tool, tools)))
		}
	}
	return errors.Join(errs...)
}

func suggest(name string, tools []string) string {
	best, bd := "", 1<<30
	for _, t := range tools {
		if d := distance(name, t); d < bd {
			best, bd = t, d
		}
	}
	if best != "" && bd <= len(name)/2 {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return " (a --caps flag under server.args may turn it on)"
}

// step runs step i and fills sr.
func (r *runner) step(ctx context.Context, i int, sr *StepResult) {
	st := r.sc.Steps[i]
	where := fmt.Sprintf("step %d (%s)", i+1, st.Tool)
	fail := func(format string, a ...any) {
		sr.Status = Failed
		sr.Failure = where + " " + fmt.Sprintf(format, a...)
	}
	cctx, cancel := context.WithTimeout(ctx, r.stepTimeout())
	defer cancel()
	start := time.Now()
	defer func() {
		sr.Duration = time.Since(start)
		sr.MS = sr.Duration.Milliseconds()
	}()

	args, _ := expandAny(st.Args, r.vars).(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	var beforeSnap string // the page before the call, when a snapshot was taken
	for _, ta := range targetArgs(args) {
		want, _ := targetArg(ta.get())
		if want == nil {
			continue
		}
		if beforeSnap == "" {
			snap, err := r.c.Call(cctx, "browser_snapshot", map[string]any{})
			if err != nil {
				fail("args.%s %s: taking a snapshot to find it: %v", ta.path, want, err)
				return
			}
			beforeSnap = snap.Text
		}
		els := elements(beforeSnap)
		e, found := find(els, *want)
		switch {
		case !found:
			fail("args.%s: no %s in the snapshot; %s", ta.path, want, closest(els, *want, 5))
			sr.Excerpt = excerpt(beforeSnap)
			return
		case e.ref == "":
			fail("args.%s: %s has no ref in the snapshot", ta.path, want)
			return
		}
		ta.set(e.ref)
		if ta.path == "target" {
			if _, ok := args["element"]; !ok {
				args["element"] = e.String()
			}
		}
	}
	if r.o.Update && beforeSnap == "" && len(st.Expect.SnapshotHas) > 0 && st.Tool != "browser_navigate" {
		if snap, err := r.c.Call(cctx, "browser_snapshot", map[string]any{}); err == nil {
			beforeSnap = snap.Text
		}
	}
	callStart := time.Now()
	res, err := r.c.Call(cctx, st.Tool, args)
	took := time.Since(callStart)
	if err != nil {
		if ctx.Err() != nil {
			fail("interrupted")
		} else if cctx.Err() != nil {
			fail("no answer within %s (--timeout)", r.stepTimeout())
		} else {
			fail("call failed: %v", err)
		}
		sr.Excerpt = excerpt(r.c.Log())
		return
	}
	sr.Excerpt = excerpt(res.Text)
	sr.Status = Passed
	ex := st.Expect
	if res.IsError != ex.IsError {
		if res.IsError {
			fail("expect.is_error: the tool reported an error")
		} else {
			fail("expect.is_error: true, but the tool succeeded")
		}
		return
	}
	for j, s := range ex.Contains {
		if s = expand(s, r.vars); !strings.Contains(res.Text, s) {
			fail("expect.contains[%d]: %q not found in the response", j, quote(s))
			return
		}
	}
	for j, s := range ex.NotContains {
		if s = expand(s, r.vars); strings.Contains(res.Text, s) {
			fail("expect.not_contains[%d]: %q found in the response", j, quote(s))
			return
		}
	}
	for j, p := range ex.Matches {
		p = expand(p, r.vars)
		re, err := regexp.Compile(p)
		if err != nil {
			fail("expect.matches[%d]: invalid regular expression %q after ${VAR}s: %v", j, quote(p), regexpReason(err))
			return
		}
		if !re.MatchString(res.Text) {
			fail("expect.matches[%d]: /%s/ does not match the response", j, quote(p))
			return
		}
	}
	if ex.URL != "" || ex.Title != "" || len(ex.Text) > 0 || len(ex.SnapshotHas) > 0 {
		if r.o.Update {
			sr.Observed = r.observe(cctx, st, res.Text, beforeSnap)
		} else if msg := r.checkPage(cctx, ex, res.Text); msg != "" {
			fail("%s", msg)
			return
		}
	}
	if ex.MaxMS > 0 && took > time.Duration(ex.MaxMS)*time.Millisecond {
		fail("expect.max_ms: took %d ms, more than %d", took.Milliseconds(), ex.MaxMS)
		return
	}
	for _, k := range sortedKeys(st.Save) {
		re := regexp.MustCompile(st.Save[k]) // checked by Parse
		m := re.FindStringSubmatch(res.Text)
		if m == nil {
			fail("save.%s: /%s/ does not match the response", k, quote(st.Save[k]))
			return
		}
		v := m[0]
		if len(m) > 1 {
			v = m[1]
		}
		r.vars[k] = v
	}
}

func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= excerptMax {
		return s
	}
	return s[:excerptMax] + "\n…"
}

// DefaultExpectTimeout bounds the wait for a step's page expectations
// when Options.ExpectTimeout is zero (Playwright's expect waits as long).
const DefaultExpectTimeout = 5 * time.Second

// pollEvery is the pause between two reads of a page not yet as expected.
const pollEvery = 200 * time.Millisecond

// checkPage checks the page expectations (url, title, text, snapshot_has)
// on the response's snapshot when it holds a whole one, else on a fresh
// browser_snapshot, again on fresh ones until ExpectTimeout: the runner
// waits for the page the way Playwright's expect does, never a fixed sleep.
// It returns the last failure, or "".
func (r *runner) checkPage(ctx context.Context, ex Expect, resp string) string {
	wait := r.o.ExpectTimeout
	if wait <= 0 {
		wait = DefaultExpectTimeout
	}
	deadline := time.Now().Add(wait)
	text := resp
	if !fullSnapshot(resp) || (ex.URL != "" || ex.Title != "") && !strings.Contains(resp, "- Page URL:") {
		text = ""
	}
	for {
		if text == "" {
			snap, err := r.c.Call(ctx, "browser_snapshot", map[string]any{})
			if err != nil {
				return fmt.Sprintf("expect: taking a snapshot: %v", err)
			}
			text = snap.Text
		}
		msg := r.pageFailure(ex, text)
		if msg == "" || time.Now().After(deadline) || ctx.Err() != nil {
			return msg
		}
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return msg
		case <-t.C:
		}
		text = ""
	}
}

// pageFailure is the first page expectation snap does not meet.
func (r *runner) pageFailure(ex Expect, snap string) string {
	url, title := pageField(snap, "URL"), pageField(snap, "Title")
	if want := expand(ex.URL, r.vars); want != "" && url != want {
		return fmt.Sprintf("expect.url: the page is at %q, want %q", quote(url), quote(want))
	}
	if want := expand(ex.Title, r.vars); want != "" && title != want {
		return fmt.Sprintf("expect.title: the page's title is %q, want %q", quote(title), quote(want))
	}
	for j, s := range ex.Text {
		if s = expand(s, r.vars); !strings.Contains(snapshotText(snap), s) {
			return fmt.Sprintf("expect.text[%d]: %q is not on the page", j, quote(s))
		}
	}
	els := elements(snap)
	for j, want := range ex.SnapshotHas {
		want.Name = expand(want.Name, r.vars)
		if _, ok := find(els, want); !ok {
			return fmt.Sprintf("expect.snapshot_has[%d]: no %s in the page's snapshot; %s", j, want, closest(els, want, 5))
		}
	}
	return ""
}

// pageField reads "- Page URL: …" (or Title) of a response.
func pageField(resp, field string) string {
	prefix := "- Page " + field + ": "
	for _, l := range strings.Split(resp, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l[len(prefix):])
		}
	}
	return ""
}

// startTrace starts a Playwright trace when the server offers it.
func (r *runner) startTrace(ctx context.Context) bool {
	tctx, cancel := context.WithTimeout(ctx, r.stepTimeout())
	defer cancel()
	res, err := r.c.Call(tctx, "browser_start_tracing", map[string]any{})
	if err != nil || res.IsError {
		msg := "the server does not offer browser_start_tracing (cloakbrowser-mcp: --caps devtools)"
		if err == nil {
			msg = excerpt(res.Text)
		}
		r.progressf("  %s: no trace: %s\n", r.sc.Name, msg)
		return false
	}
	return true
}

var traceLink = regexp.MustCompile(`\]\(([^)\s]+\.zip)\)`)

// artifacts saves what a failing step leaves: a screenshot, the full
// snapshot, the console messages and the trace. Each is best effort: what
// cannot be had is noted in a file of its own name with .txt.
func (r *runner) artifacts(ctx context.Context, step int, tracing bool) []string {
	dir := r.o.Artifacts
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.progressf("  %s: artifacts: %v\n", r.sc.Name, err)
		return nil
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*r.stepTimeout())
	defer cancel()
	var out []string
	var mu sync.Mutex
	save := func(name string, data []byte) {
		p := filepath.Join(dir, fmt.Sprintf("step-%02d-%s", step, name))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			r.progressf("  %s: artifacts: %v\n", r.sc.Name, err)
			return
		}
		mu.Lock()
		out = append(out, p)
		mu.Unlock()
	}
	if res, err := r.c.Call(actx, "browser_take_screenshot", map[string]any{"type": "png", "scale": "css"}); err == nil && len(res.Images) > 0 {
		save("screenshot.png", res.Images[0].Data)
	} else {
		save("screenshot.txt", []byte(fmt.Sprintf("no screenshot: %v %s\n", err, resText(res))))
	}
	if res, err := r.c.Call(actx, "browser_snapshot", map[string]any{}); err == nil && !res.IsError {
		save("snapshot.md", []byte(res.Text+"\n"))
	} else {
		save("snapshot.txt", []byte(fmt.Sprintf("no snapshot: %v %s\n", err, resText(res))))
	}
	if res, err := r.c.Call(actx, "browser_console_messages", map[string]any{"level": "debug", "all": true}); err == nil && !res.IsError {
		save("console.txt", []byte(res.Text+"\n"))
	}
	if tracing {
		res, err := r.c.Call(actx, "browser_stop_tracing", map[string]any{})
		var zip string
		if err == nil && !res.IsError {
			if m := traceLink.FindStringSubmatch(res.Text); m != nil {
				zip = m[1]
			}
		}
		if data, rerr := os.ReadFile(zip); zip != "" && rerr == nil {
			p := filepath.Join(dir, "trace.zip")
			if os.WriteFile(p, data, 0o644) == nil {
				out = append(out, p)
			}
		} else {
			save("trace.txt", []byte(fmt.Sprintf("no trace: %v %s\n", err, resText(res))))
		}
	}
	return out
}

func resText(res *embed.Result) string {
	if res == nil {
		return ""
	}
	return excerpt(res.Text)
}

func (r *runner) progressf(format string, a ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, format, a...)
	}
}

func (r *runner) mark(s Status) string { return mark(s, r.o.Color) }

func mark(s Status, color bool) string {
	sym, code := "✓", "32"
	switch s {
	case Failed:
		sym, code = "✗", "31"
	case Skipped:
		sym, code = "-", "33"
	case Invalid:
		sym, code = "!", "31"
	}
	if color {
		return "\x1b[" + code + "m" + sym + "\x1b[0m"
	}
	return sym
}
