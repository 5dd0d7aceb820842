package server_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

var stressSeed = flag.Uint64("stress.seed", 0, "seed of TestStressPopupsDialogsTabs's call mix; 0 picks one from the clock")

const (
	stressWorkers = 8
	stressRounds  = 25
	// stressCallTimeout bounds each call from the client's side. The server's
	// own bounds are far below it (3 s actions, 8 s navigations here): a
	// call that reaches it did not answer at all.
	stressCallTimeout = 20 * time.Second
	// stressMaxTabs is where workers stop opening and start closing tabs:
	// every tab is a renderer on a 2-core machine.
	stressMaxTabs = 5
)

// stressCall is one tool call of the mix: label names it in the tally
// ("browser_tabs select", "browser_click #popup").
type stressCall struct {
	label string
	tool  string
	args  map[string]any
}

// pickStressCall draws a call, weighted towards what sets off popups,
// dialogs and tab closes, and towards closing once tabs pile up.
func pickStressCall(r *rand.Rand, tabs int, base string) stressCall {
	if tabs > stressMaxTabs {
		return stressCall{"browser_tabs close", "browser_tabs", map[string]any{"action": "close", "index": r.IntN(tabs)}}
	}
	click := func(sel string) stressCall {
		return stressCall{"browser_click " + sel, "browser_click", map[string]any{"target": sel}}
	}
	// A tab index that is sometimes one past the end: an error is an answer.
	index := func() int { return r.IntN(max(tabs, 1) + 1) }
	table := []struct {
		weight int
		call   func() stressCall
	}{
		{8, func() stressCall {
			u := base
			if r.IntN(2) == 0 {
				u += fmt.Sprintf("?close=%d", 200+r.IntN(1000))
			}
			return stressCall{"browser_tabs new", "browser_tabs", map[string]any{"action": "new", "url": u}}
		}},
		{12, func() stressCall {
			return stressCall{"browser_tabs select", "browser_tabs", map[string]any{"action": "select", "index": index()}}
		}},
		{7, func() stressCall {
			if r.IntN(3) == 0 {
				return stressCall{"browser_tabs close", "browser_tabs", map[string]any{"action": "close"}}
			}
			return stressCall{"browser_tabs close", "browser_tabs", map[string]any{"action": "close", "index": index()}}
		}},
		{5, func() stressCall {
			return stressCall{"browser_tabs list", "browser_tabs", map[string]any{"action": "list"}}
		}},
		{9, func() stressCall { return click("#popup") }},
		{9, func() stressCall { return click("#popup-later") }},
		{5, func() stressCall { return click("#blank") }},
		{4, func() stressCall { return click("#alert") }},
		{4, func() stressCall { return click("#confirm") }},
		{4, func() stressCall { return click("#dialog-later") }},
		{5, func() stressCall { return click("#close-popups") }},
		{5, func() stressCall { return click("#close-popups-later") }},
		{10, func() stressCall {
			return stressCall{"browser_handle_dialog", "browser_handle_dialog", map[string]any{"accept": r.IntN(2) == 0}}
		}},
		{5, func() stressCall {
			return stressCall{"browser_navigate", "browser_navigate", map[string]any{"url": base}}
		}},
		{3, func() stressCall { return stressCall{"browser_snapshot", "browser_snapshot", map[string]any{}} }},
	}
	total := 0
	for _, e := range table {
		total += e.weight
	}
	n := r.IntN(total)
	for _, e := range table {
		if n < e.weight {
			return e.call()
		}
		n -= e.weight
	}
	panic("unreachable")
}

// stressTally counts calls and tool errors per label.
type stressTally struct {
	mu   sync.Mutex
	rows map[string]*stressRow
}

type stressRow struct {
	calls, toolErrors, noAnswer int
	latencies                   []time.Duration
	samples                     []string // distinct first lines of tool errors
}

func (s *stressTally) add(label string, isError, answered bool, errText string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows == nil {
		s.rows = map[string]*stressRow{}
	}
	row := s.rows[label]
	if row == nil {
		row = &stressRow{}
		s.rows[label] = row
	}
	row.calls++
	row.latencies = append(row.latencies, d)
	switch {
	case !answered:
		row.noAnswer++
	case isError:
		row.toolErrors++
		line := firstErrorLine(errText)
		if len(row.samples) < 3 && !slices.Contains(row.samples, line) {
			row.samples = append(row.samples, line)
		}
	}
}

// firstErrorLine is the first line of a result's "### Error" section.
func firstErrorLine(text string) string {
	if i := strings.Index(text, "### Error\n"); i >= 0 {
		text = text[i+len("### Error\n"):]
	}
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if len(line) > 120 {
		line = line[:120] + "…"
	}
	return line
}

func (s *stressTally) log(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	labels := slices.Sorted(func(yield func(string) bool) {
		for l := range s.rows {
			if !yield(l) {
				return
			}
		}
	})
	type sum struct{ calls, errs, hung int }
	perTool := map[string]*sum{}
	var b strings.Builder
	fmt.Fprintf(&b, "%-32s %5s %6s %6s %8s %8s\n", "call", "calls", "errors", "hung", "p50", "max")
	for _, l := range labels {
		row := s.rows[l]
		lat := slices.Clone(row.latencies)
		slices.Sort(lat)
		fmt.Fprintf(&b, "%-32s %5d %6d %6d %8v %8v\n", l, row.calls, row.toolErrors, row.noAnswer,
			lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
		for _, smp := range row.samples {
			fmt.Fprintf(&b, "    error: %s\n", smp)
		}
		tool, _, _ := strings.Cut(l, " ")
		if perTool[tool] == nil {
			perTool[tool] = &sum{}
		}
		perTool[tool].calls += row.calls
		perTool[tool].errs += row.toolErrors
		perTool[tool].hung += row.noAnswer
	}
	b.WriteString("per tool:\n")
	for _, tool := range slices.Sorted(func(yield func(string) bool) {
		for k := range perTool {
			if !yield(k) {
				return
			}
		}
	}) {
		p := perTool[tool]
		fmt.Fprintf(&b, "  %-24s %4d calls, %4d tool errors, %d without an answer\n", tool, p.calls, p.errs, p.hung)
	}
	t.Logf("call mix:\n%s", b.String())
}

// stressHang is a call that got no answer within stressCallTimeout (or a
// transport error instead of one).
type stressHang struct {
	worker, round int
	call          stressCall
	err           error
	after         time.Duration
}

var tabLineRE = regexp.MustCompile(`(?m)^- \d+: `)

// TestStressPopupsDialogsTabs is issue 11's stress test: 8 clients' worth of
// concurrent calls, for 50 rounds, mixing tab new/select/close/list with
// clicks that open popups and dialogs or close popups from script, some of
// them after a delay so that the event lands in the middle of another call.
// Every call must answer (a result or an isError result) within its own
// timeout; afterwards the session still works, and closing the client leaves
// no browser process, profile or goroutine behind.
func TestStressPopupsDialogsTabs(t *testing.T) {
	if testing.Short() {
		t.Skip("launches a browser and runs 200 calls")
	}
	leaks := goleak.IgnoreCurrent()
	seed := *stressSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -args -stress.seed=%d)", seed, seed)

	c, out := inProcessOwnBrowser(t, "--timeout-action", "3000", "--timeout-navigation", "8000")
	tmp := filepath.Dir(out)
	srv := httptest.NewServer(http.FileServer(http.Dir("../../testdata/stress")))
	t.Cleanup(srv.Close)
	base := srv.URL + "/stress.html"
	must(t, c, "browser_navigate", map[string]any{"url": base}, "Stress bench")

	var (
		tally    stressTally
		tabs     atomic.Int64
		stop     atomic.Bool
		mu       sync.Mutex // guards hangs, dump, maxTabs
		hangs    []stressHang
		dump     string
		wg       sync.WaitGroup
		finished atomic.Int64
		modals   atomic.Int64 // answers that report a dialog
		maxTabs  int          // guarded by mu
	)
	tabs.Store(1)
	start := time.Now()
	for w := range stressWorkers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			for round := range stressRounds {
				if stop.Load() {
					return
				}
				call := pickStressCall(r, int(tabs.Load()), base)
				ctx, cancel := context.WithTimeout(context.Background(), stressCallTimeout)
				t0 := time.Now()
				res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: call.tool, Arguments: call.args}})
				d := time.Since(t0)
				cancel()
				if err != nil {
					tally.add(call.label, false, false, "", d)
					mu.Lock()
					hangs = append(hangs, stressHang{w, round, call, err, d})
					if dump == "" {
						dump = goroutineDump()
					}
					mu.Unlock()
					// Once one call hangs the rest usually queue behind it:
					// stop issuing new ones.
					stop.Store(true)
					return
				}
				text := mcptest.Text(res)
				tally.add(call.label, res.IsError, true, text, d)
				if n := len(tabLineRE.FindAllString(text, -1)); n > 0 && strings.Contains(text, "### Open tabs") {
					tabs.Store(int64(n))
					mu.Lock()
					maxTabs = max(maxTabs, n)
					mu.Unlock()
				}
				if strings.Contains(text, "dialog with message") {
					modals.Add(1)
				}
				finished.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d of %d calls answered in %v (%d workers × %d rounds)", finished.Load(), stressWorkers*stressRounds, elapsed.Round(time.Millisecond), stressWorkers, stressRounds)
	t.Logf("%d answers reported an open dialog; up to %d tabs were open", modals.Load(), maxTabs)
	tally.log(t)

	if len(hangs) > 0 {
		for _, h := range hangs {
			t.Errorf("worker %d round %d: %s %v got no answer after %v: %v", h.worker, h.round, h.call.tool, h.call.args, h.after.Round(time.Millisecond), h.err)
		}
		t.Logf("goroutines of the server when the first call timed out:\n%s", dump)
		if !closeWithin(t, c, 60*time.Second) {
			t.Logf("closing the client hangs too; mcptest's cleanup will block until -timeout")
		}
		t.FailNow()
	}

	// The session still works: a fresh tab (the current one may hold a
	// dialog the mix left open) navigates and snapshots.
	must(t, c, "browser_tabs", map[string]any{"action": "new", "url": base}, "(current) [Stress]")
	must(t, c, "browser_navigate", map[string]any{"url": base + "?after=1"}, "Stress bench")
	must(t, c, "browser_snapshot", nil, `button "Popup"`, `link "Blank link"`)
	must(t, c, "browser_tabs", map[string]any{"action": "list"}, "?after=1")

	profiles, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*"))
	if len(profiles) != 1 {
		t.Fatalf("want one browser profile under %s, got %v", tmp, profiles)
	}
	if pids := session.ProfilePIDs(profiles[0]); len(pids) == 0 {
		t.Fatal("no browser process found for the profile")
	}
	closeStart := time.Now()
	if !closeWithin(t, c, 60*time.Second) {
		t.FailNow()
	}
	t.Logf("client and server closed in %v", time.Since(closeStart).Round(time.Millisecond))
	testtier.EventuallyState(t, 10*time.Second, "the browser processes to end after close", func() (bool, string) {
		pids := procsUnder(tmp)
		return len(pids) == 0, fmt.Sprintf("processes %v", pids)
	})
	if m := profilesIn(tmp); len(m) != 0 {
		t.Fatalf("temp profiles left after close: %v", m)
	}
	if strings.Contains(c.Stderr.String(), "panic") {
		t.Fatalf("server panicked:\n%s", c.Stderr.String())
	}
	srv.Close()
	goleak.VerifyNone(t, leaks)
}

// closeWithin closes the client (and the in-process server with its
// browser), reporting false with a goroutine dump when that takes longer
// than d.
func closeWithin(t *testing.T, c *mcptest.Client, d time.Duration) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("close: %v", err)
		}
		return true
	case <-time.After(d):
		t.Errorf("closing the client did not return within %v", d)
		t.Logf("goroutines while closing:\n%s", goroutineDump())
		return false
	}
}

// goroutineDump returns the goroutines of the server and of this test,
// identical stacks folded into one with a count, the ones on Playwright's
// dispatch goroutine first, capped at 64 KB.
func goroutineDump() string {
	buf := make([]byte, 16<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	type group struct {
		n     int
		stack string
	}
	var order []string
	groups := map[string]*group{}
	for _, g := range strings.Split(all, "\n\n") {
		if !strings.Contains(g, "cloakbrowser-mcp/") && !strings.Contains(g, "playwright-go.") {
			continue
		}
		key := dumpNoise.ReplaceAllString(g, "")
		if groups[key] == nil {
			groups[key] = &group{stack: g}
			if strings.Contains(g, "playwright-go.(*connection).Dispatch") {
				order = append([]string{key}, order...)
			} else {
				order = append(order, key)
			}
		}
		groups[key].n++
	}
	var b strings.Builder
	for _, k := range order {
		g := groups[k]
		fmt.Fprintf(&b, "%d× %s\n\n", g.n, g.stack)
	}
	out := b.String()
	if len(out) > 64<<10 {
		out = out[:64<<10] + "\n… (cut)"
	}
	return out
}

// dumpNoise is what differs between goroutines parked at the same place.
var dumpNoise = regexp.MustCompile(`goroutine \d+|, \d+ minutes|\([^\n]*\)\n|\+0x[0-9a-f]+| in goroutine \d+`)
