package driver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// spawnLog is a browser binary that logs each start (its PID, which exec
// keeps, and the time) and then runs Chromium.
type spawnLog struct {
	bin, log string
}

func newSpawnLog(t *testing.T) spawnLog {
	t.Helper()
	dir := t.TempDir()
	s := spawnLog{bin: filepath.Join(dir, "browser"), log: filepath.Join(dir, "starts")}
	script := "#!/bin/sh\necho \"$$ $(date +%s%N)\" >> " + shellQuote(s.log) + "\nexec " + shellQuote(chromium(t)) + " \"$@\"\n"
	if err := os.WriteFile(s.bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

type start struct {
	pid int
	at  time.Time
}

func (s spawnLog) starts(t *testing.T) []start {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []start
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, ns, _ := strings.Cut(l, " ")
		p, err1 := strconv.Atoi(pid)
		n, err2 := strconv.ParseInt(ns, 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("start log line %q", l)
		}
		out = append(out, start{p, time.Unix(0, n)})
	}
	return out
}

// TestPrelaunchIsTakenByItsLaunch runs the real driver four times in a
// driver dir of its own, each for a launch in a fresh profile:
//  1. no record yet: nothing starts before the launch, which keeps its
//     argv as a template (no profile path in it, its placeholder instead);
//  2. the same launch: the server starts the browser (its parent is this
//     process) as the driver starts, and the launch takes that process
//     (one start, the record not written again), which serves a page from
//     the second profile over the pipes node adopted;
//  3. a launch with one argument more: the early browser is killed, the
//     launch starts its own, and the new argv is kept;
//  4. a driver closed with no launch: its early browser starts, and is
//     gone after Close.
//
// The plan file is gone once node read it, and nothing runs in any profile
// after Close.
func TestPrelaunchIsTakenByItsLaunch(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", nodeFromEnv)
	t.Setenv(PrelaunchEnv, "")
	dir := ownDriverDir(t)
	sl := newSpawnLog(t)
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "TMPDIR": os.TempDir()}
	const placeholder = "{{profile}}"
	args := launchOptions(t).Args

	run := func(launchArgs []string, launch bool) (profile string, before int, d *Driver) {
		t.Helper()
		profile = t.TempDir()
		began := time.Now()
		d = New(Options{Dir: dir}, false)
		t.Cleanup(func() { _ = d.Close() })
		want := Prelaunched
		if _, err := os.Stat(filepath.Join(dir, "prelaunch")); err != nil {
			want = PrelaunchRecording
		}
		if got := d.BeginPrelaunch(Prelaunch{Command: sl.bin, Key: []string{"test"}, Vars: map[string]string{placeholder: profile}, Env: env}); got != want {
			t.Fatalf("a driver not started yet: BeginPrelaunch = %d, want %d", got, want)
		}
		if got := d.BeginPrelaunch(Prelaunch{Command: sl.bin, Vars: map[string]string{}}); got != NotPrelaunched {
			t.Fatalf("a starting driver: BeginPrelaunch = %d, want NotPrelaunched", got)
		}
		pw, err := d.Get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := time.Now() // nothing of Playwright's own can start before
		if plans, _ := filepath.Glob(filepath.Join(d.TempDir(), "prelaunch-*")); len(plans) != 0 {
			t.Errorf("plan files left: %v", plans)
		}
		for _, s := range sl.starts(t) {
			if s.at.After(began) && s.at.Before(got) {
				before++
			}
		}
		if !launch {
			return profile, before, d
		}
		bc, err := pw.Chromium.LaunchPersistentContext(profile, playwright.BrowserTypeLaunchPersistentContextOptions{
			ExecutablePath: playwright.String(sl.bin),
			Headless:       playwright.Bool(true),
			Args:           launchArgs,
			Env:            env,
		})
		if err != nil {
			t.Fatal(err)
		}
		page := bc.Pages()[0]
		if _, err := page.Goto("data:text/html,<title>early</title>"); err != nil {
			t.Fatal(err)
		}
		if title, err := page.Title(); err != nil || title != "early" {
			t.Fatalf("title %q, %v", title, err)
		}
		return profile, before, d
	}
	recordFile := func(t *testing.T) string {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(dir, "prelaunch", "*.json"))
		if len(files) != 1 {
			t.Fatalf("records %v, want one", files)
		}
		return files[0]
	}
	record := func() prelaunchRecord {
		t.Helper()
		b, err := os.ReadFile(recordFile(t))
		if err != nil {
			t.Fatal(err)
		}
		var r prelaunchRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	closeAll := func(d *Driver, profile string) {
		t.Helper()
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		waitGone(t, profile, 10*time.Second)
	}

	// 1. No record: the launch's own start only, and its template.
	p1, before, d := run(args, true)
	if n := len(sl.starts(t)); before != 0 || n != 1 {
		t.Fatalf("first run: %d starts, %d before the launch; want 1, 0", n, before)
	}
	r := record()
	joined := strings.Join(r.Args, " ")
	if r.Command != sl.bin || strings.Contains(joined, p1) || !strings.Contains(joined, "--user-data-dir="+placeholder) {
		t.Fatalf("record %+v: want %s with the profile as %s", r, sl.bin, placeholder)
	}
	closeAll(d, p1)

	// 2. The same launch: started early, and taken. What shows it without
	// timing: a plan with a prediction started a browser (else the launch
	// would have written the record again), and there was one start.
	kept, err := os.Stat(recordFile(t))
	if err != nil {
		t.Fatal(err)
	}
	p2, _, d := run(args, true)
	starts := sl.starts(t)
	if len(starts) != 2 {
		t.Fatalf("second run: %d starts in all, want 2 (the early browser taken)", len(starts))
	}
	if now, err := os.Stat(recordFile(t)); err != nil || !os.SameFile(kept, now) {
		t.Fatalf("second run wrote the record again (%v): its launch did not take the early browser", err)
	}
	if !alive(starts[1].pid) || !strings.Contains(strings.Join(cmdline(t, starts[1].pid), " "), "--user-data-dir="+p2) {
		t.Fatalf("the early browser %d does not run in %s", starts[1].pid, p2)
	}
	if pp := parentOf(t, starts[1].pid); pp != os.Getpid() {
		t.Fatalf("the early browser's parent is %d, want this process (%d): the driver's node started it", pp, os.Getpid())
	}
	closeAll(d, p2)

	// 3. Another argv: the early browser is killed, the launch starts its
	// own, and its argv is kept.
	p3, _, d := run(append(args, "--mute-audio"), true)
	starts = sl.starts(t)
	if len(starts) != 4 {
		t.Fatalf("third run: %d starts in all, want 4", len(starts))
	}
	var running []int
	testtier.EventuallyState(t, 10*time.Second, "one of the third run's two browsers to be left", func() (bool, string) {
		running = running[:0]
		for _, s := range starts[2:] {
			if alive(s.pid) {
				running = append(running, s.pid)
			}
		}
		return len(running) == 1, fmt.Sprint("running: ", running)
	})
	if !strings.Contains(strings.Join(cmdline(t, running[0]), " "), "--mute-audio") || !strings.Contains(strings.Join(record().Args, " "), "--mute-audio") {
		t.Fatal("the browser left is not the launch's own, or its argv was not kept")
	}
	closeAll(d, p3)

	// 4. No launch: the early browser starts, and dies with the driver;
	// as it does when the driver's node dies (the end of its DevTools
	// pipe), here SIGKILLed with the browser never adopted.
	p4, _, d := run(append(args, "--mute-audio"), false)
	testtier.EventuallyState(t, 10*time.Second, "the fourth run's early browser to start", func() (bool, string) {
		starts = sl.starts(t)
		return len(starts) == 5 && alive(starts[4].pid), fmt.Sprint(len(starts), " starts")
	})
	closeAll(d, p4)

	p5, _, d := run(append(args, "--mute-audio"), false)
	testtier.EventuallyState(t, 10*time.Second, "the fifth run's early browser to start", func() (bool, string) {
		starts = sl.starts(t)
		return len(starts) == 6 && alive(starts[5].pid), fmt.Sprint(len(starts), " starts")
	})
	node := runningDriver(t)
	if err := syscall.Kill(node, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testtier.EventuallyState(t, 10*time.Second, "the early browser to exit with its node", func() (bool, string) {
		return !alive(starts[5].pid), fmt.Sprint("browser ", starts[5].pid, " alive")
	})
	closeAll(d, p5)
}

// runningDriver is the PID of this process's one running driver (node
// running playwright-core's run-driver).
func runningDriver(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(b), "run-driver") {
			continue
		}
		if pp, err := ppidOf(pid); err == nil && pp == os.Getpid() {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("drivers of this process: %v, want one", found)
	}
	return found[0]
}

// parentOf is pid's parent.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	pp, err := ppidOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	return pp
}

func ppidOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return strconv.Atoi(f[1])
}
