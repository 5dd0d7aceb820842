package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// startIn runs the binary over stdio in a temp working directory with
// --output-dir out (relative to it) and a variable marking its process tree.
func startIn(t *testing.T, args ...string) (c *mcptest.Client, dir, tree string) {
	t.Helper()
	mcptest.Chromium(t)
	env, tmp := serverEnv(t)
	tree = fmt.Sprintf("CLOAKBROWSER_MCP_TEST_TREE=%s-%d", t.Name(), time.Now().UnixNano())
	opts := mcptest.Options{
		Args: append([]string{"--no-download", "--output-dir", "out"}, args...),
		Env:  append(env, tree),
		Dir:  tmp,
	}
	return mcptest.StartBinary(t, mcptest.Binary(t), opts), tmp, tree
}

// browserPIDs are the browser processes of the marked server: those given
// a profile on their command line that are not a child process of a browser
// (--type=renderer, gpu-process, utility…, which come and go with pages).
func browserPIDs(tree string) map[int]bool {
	out := map[int]bool{}
	for _, p := range proctree.Marked(tree) {
		if cmd := procCmdline(p.PID); strings.Contains(cmd, "--user-data-dir=") && !strings.Contains(cmd, "--type=") {
			out[p.PID] = true
		}
	}
	return out
}

// TestDropinIdleTimeout: after --idle-timeout without a call the browser's
// processes end; the next call launches a new browser.
func TestDropinIdleTimeout(t *testing.T) {
	srv := pages(t)
	// A page that answers after longer than the idle timeout, and says when
	// its request arrived: the first call is a navigation to it, so a call
	// is in flight from the browser's start, and no gap between two calls
	// (which on a loaded machine has exceeded the timeout) is in the test.
	const slowFor = 6 * time.Second
	arrived := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-time.After(slowFor):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "<title>Slow</title><p>answered late</p>")
	}))
	t.Cleanup(slow.Close)
	c, _, tree := startIn(t, "--idle-timeout", "4000")
	// A call in flight longer than the timeout keeps the browser: it is
	// idle time only once the call has ended.
	navigated := make(chan error, 1)
	go func() {
		text, err := c.TryCall("browser_navigate", map[string]any{"url": slow.URL + "/slow"})
		if err == nil && !strings.Contains(text, "Page Title: Slow") {
			err = fmt.Errorf("browser_navigate answered %q", text)
		}
		navigated <- err
	}()
	select {
	case <-arrived:
	case err := <-navigated:
		t.Fatalf("the navigation ended before its page was asked for: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the browser never asked for the slow page")
	}
	first := browserPIDs(tree)
	if len(first) == 0 {
		t.Fatal("no browser process while a navigation is in flight")
	}
	if err := <-navigated; err != nil {
		t.Fatal(err)
	}
	for pid := range first {
		if !browserPIDs(tree)[pid] {
			t.Fatalf("browser process %d ended during a call in flight (%s, longer than the idle timeout)", pid, slowFor)
		}
	}
	testtier.EventuallyState(t, 60*time.Second, "the browser to close after an idle timeout of 4 s", func() (bool, string) {
		pids := browserPIDs(tree)
		return len(pids) == 0, fmt.Sprintf("still running: %v", pids)
	})
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "Page URL:")
	second := browserPIDs(tree)
	if len(second) == 0 {
		t.Fatal("no browser process after the call that follows the idle close")
	}
	for pid := range second {
		if first[pid] {
			t.Fatalf("browser process %d survived the idle close", pid)
		}
	}
}

// TestDropinOutputMaxSize: after each file written, the oldest files of the
// output dir go until the total fits the cap, and no more.
func TestDropinOutputMaxSize(t *testing.T) {
	const limit = 30000 // a screenshot of lab.html at 1280x720 is ~12 kB: two fit
	srv := pages(t)
	// The size is pinned: the default window is a desktop size chosen per
	// session, and the sizes of the screenshots must not depend on it.
	c, out := inProcess(t, "--output-max-size", fmt.Sprint(limit), "--viewport-size", "1280x720")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "Page URL:")
	var names []string
	sizes := map[string]int64{}
	for i := range 4 {
		name := fmt.Sprintf("shot-%d.png", i)
		names = append(names, name)
		must(t, c, "browser_take_screenshot", map[string]any{"filename": name}, name)
		info, err := os.Stat(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("the file just written is gone: %v", err)
		}
		sizes[name] = info.Size()
		time.Sleep(20 * time.Millisecond) // distinct modification times
	}
	// The newest files whose sizes fit the cap stay; the newest always does.
	want := map[string]bool{}
	var sum int64
	for i := len(names) - 1; i >= 0; i-- {
		if sum+sizes[names[i]] > limit && i < len(names)-1 {
			break
		}
		sum += sizes[names[i]]
		want[names[i]] = true
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range entries {
		got[e.Name()] = true
	}
	if len(want) < 2 || len(want) == len(names) {
		t.Fatalf("the test needs screenshots of which some but not all fit %d bytes: %v", limit, sizes)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("output dir holds %v, want %v (sizes %v, cap %d)", got, want, sizes, limit)
	}
}

// TestDropinFilePaths: results show paths relative to the working
// directory by default and absolute with --file-paths absolute.
func TestDropinFilePaths(t *testing.T) {
	srv := pages(t)
	for _, tc := range []struct {
		mode string
		want func(dir string) string
	}{
		{"relative", func(string) string { return "](./out/shot.png)" }},
		{"absolute", func(dir string) string { return "](" + filepath.Join(dir, "out", "shot.png") + ")" }},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c, dir, _ := startIn(t, "--file-paths", tc.mode)
			dir, _ = filepath.EvalSymlinks(dir)
			must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "Page URL:")
			got := must(t, c, "browser_take_screenshot", map[string]any{"filename": "shot.png"})
			if !strings.Contains(got, tc.want(dir)) {
				t.Fatalf("want %q in:\n%s", tc.want(dir), got)
			}
		})
	}
}

// TestDropinSaveSession: every call and its response land in one markdown
// log in the output dir, with --secrets values redacted.
func TestDropinSaveSession(t *testing.T) {
	srv := pages(t)
	secrets := filepath.Join(t.TempDir(), "s.env")
	if err := os.WriteFile(secrets, []byte("TOKEN=sekrit-4711\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, out := inProcess(t, "--save-session", "--secrets", secrets)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html?k=sekrit-4711"}, "Page URL:")
	must(t, c, "browser_evaluate", map[string]any{"function": "() => 'answer-' + 42"}, "answer-42")
	logs, _ := filepath.Glob(filepath.Join(out, "session-*.md"))
	if len(logs) != 1 {
		t.Fatalf("want one session log, got %v", logs)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, w := range []string{"### Tool call: browser_navigate", "lab.html?k=<secret>TOKEN</secret>", "### Tool call: browser_evaluate", "'answer-' + 42", "answer-42"} {
		if !strings.Contains(log, w) {
			t.Fatalf("session log lacks %q:\n%s", w, log)
		}
	}
	if strings.Contains(log, "sekrit-4711") {
		t.Fatalf("session log holds a secret value:\n%s", log)
	}
	if i, j := strings.Index(log, "browser_navigate"), strings.Index(log, "browser_evaluate"); i > j {
		t.Fatal("calls out of order")
	}
}
