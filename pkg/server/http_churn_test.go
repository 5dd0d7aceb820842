package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// churnCycle opens a session, navigates it (which creates its browser state:
// a BrowserContext or a browser of its own) and closes it with DELETE.
func churnCycle(h *mcptest.HTTPServer, url string) error {
	c, err := h.TryConnect(mcptest.ConnectOptions{})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name: "browser_navigate", Arguments: map[string]any{"url": url},
	}})
	if err == nil && res.IsError {
		err = fmt.Errorf("browser_navigate: %s", mcptest.Text(res))
	}
	if err == nil && !strings.Contains(mcptest.Text(res), "- Page URL: "+url) {
		err = fmt.Errorf("browser_navigate did not reach %s:\n%s", url, mcptest.Text(res))
	}
	if cerr := c.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close (DELETE): %w", cerr)
	}
	if err == nil {
		if _, gerr := h.Server.Sessions().Get(c.SessionID); gerr == nil {
			err = fmt.Errorf("session %s still registered after DELETE", c.SessionID)
		}
	}
	return err
}

// churn runs n cycles, par at a time, and fails the test on the first error.
func churn(t *testing.T, h *mcptest.HTTPServer, url string, n, par int) {
	t.Helper()
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for !failed.Load() {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := churnCycle(h, url+"?cycle="+strconv.FormatInt(i, 10)); err != nil {
					failed.Store(true)
					t.Errorf("cycle %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}

// rendererPIDs lists the renderer processes of the browser using profile:
// each open page has one, so with no context left there are none.
func rendererPIDs(profile string) []int {
	var out []int
	for _, pid := range session.ProfilePIDs(profile) {
		cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && strings.Contains(string(cmd), "--type=renderer") {
			out = append(out, pid)
		}
	}
	return out
}

// procsUnder lists live processes with a user data dir under dir.
func procsUnder(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	needle := "--user-data-dir=" + dir + string(filepath.Separator)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		for _, arg := range strings.Split(string(cmd), "\x00") {
			if strings.HasPrefix(arg, needle) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func closeIdleHTTP() {
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
}

// waitGoroutines polls until the goroutine count is back to base (plus a
// small tolerance) and fails with a full dump otherwise.
func waitGoroutines(t *testing.T, base, tolerance int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	var n int
	for {
		closeIdleHTTP()
		if n = runtime.NumGoroutine(); n <= base+tolerance {
			t.Logf("goroutines: %d (baseline %d)", n, base)
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	buf := make([]byte, 4<<20)
	t.Fatalf("goroutines: %d after churn, baseline %d\n%s", n, base, buf[:runtime.Stack(buf, true)])
}

func profilesIn(tmp string) []string {
	var out []string
	for _, pat := range []string{"cloakbrowser-mcp-profile-*", "playwright_chromiumdev_profile-*"} {
		m, _ := filepath.Glob(filepath.Join(tmp, pat))
		out = append(out, m...)
	}
	return out
}

// TestHTTPSessionChurnWithBrowsers churns 24 sessions, four at a time,
// that each get a BrowserContext in the shared browser ("context"
// isolation): afterwards no session, context, goroutine, process or profile
// is left.
func TestHTTPSessionChurnWithBrowsers(t *testing.T) {
	if testing.Short() {
		t.Skip("launches a browser")
	}
	tmp := browserEnv(t)
	page := pages(t).URL + "/lab.html"
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--log-level", "warn", "--http-isolation", "context", "--http-session-max", "32"), OwnBrowser: true})
	reg := h.Server.Sessions()

	// Warm up: the driver and the shared browser start on first use and
	// keep goroutines of their own.
	if err := churnCycle(h, page); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	shared := h.Server.SharedBrowser()
	profile := shared.ProfileDir()
	browserPIDs := shared.PIDs()
	if profile == "" || len(browserPIDs) == 0 {
		t.Fatalf("shared browser not found (profile %q)", profile)
	}
	closeIdleHTTP()
	base := stableGoroutines()

	start := time.Now()
	const cycles, par = 24, 4
	churn(t, h, page, cycles, par)
	elapsed := time.Since(start)
	t.Logf("%d session cycles (%d at a time): %v, %v per cycle", cycles, par, elapsed, elapsed/cycles)

	if st := reg.Stats(); st.Active != 0 || st.Pending != 0 {
		t.Fatalf("stats after churn: %+v, want none", st)
	}
	// One shared browser throughout: it was neither relaunched nor killed.
	if got := shared.PIDs(); len(got) == 0 || shared.ProfileDir() != profile {
		t.Fatalf("shared browser changed during churn: profile %q → %q, pids %v", profile, shared.ProfileDir(), got)
	}
	// The server exposes no Playwright handle for Contexts(): every context
	// has a page and every page a renderer, so none may remain.
	testtier.EventuallyState(t, 10*time.Second, "the renderer processes to end after churn (no context left open)", func() (bool, string) {
		r := rendererPIDs(profile)
		return len(r) == 0, fmt.Sprintf("renderers %v", r)
	})
	waitGoroutines(t, base, 3, 10*time.Second)

	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, profile, 0)
	if pids := procsUnder(tmp); len(pids) != 0 {
		t.Fatalf("browser processes left: %v", pids)
	}
	if m := profilesIn(tmp); len(m) != 0 {
		t.Fatalf("temp profiles left: %v", m)
	}
}

// TestHTTPSessionChurnWithBrowsersIsolated churns sessions that each launch
// a browser of their own ("browser" isolation): nothing is left behind.
func TestHTTPSessionChurnWithBrowsersIsolated(t *testing.T) {
	if testing.Short() {
		t.Skip("launches browsers")
	}
	tmp := browserEnv(t)
	page := pages(t).URL + "/lab.html"
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--log-level", "warn", "--http-isolation", "browser"), OwnBrowser: true})
	reg := h.Server.Sessions()

	start := time.Now()
	const cycles = 6
	churn(t, h, page, cycles, 2)
	t.Logf("%d browser-per-session cycles: %v", cycles, time.Since(start))

	if st := reg.Stats(); st.Active != 0 || st.Pending != 0 {
		t.Fatalf("stats after churn: %+v, want none", st)
	}
	// DELETE is answered once the browser is gone and its profile removed.
	if m := profilesIn(tmp); len(m) != 0 {
		t.Fatalf("temp profiles left after churn: %v", m)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	if m := profilesIn(tmp); len(m) != 0 {
		t.Fatalf("temp profiles left after Close: %v", m)
	}
	if pids := procsUnder(tmp); len(pids) != 0 {
		t.Fatalf("browser processes left: %v", pids)
	}
}
