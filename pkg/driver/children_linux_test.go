package driver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/mxschmitt/playwright-go"
)

// needSetpriv fails the test when the parent-death wrapper is missing.
func needSetpriv(t *testing.T) {
	t.Helper()
	if pdeathsigWrapper() == "" {
		t.Fatal("setpriv with --pdeathsig not found: install util-linux 2.33 or newer (Debian: apt-get install util-linux)")
	}
}

func chromium(t *testing.T) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: install it (Debian: apt-get install -y chromium)")
	return ""
}

func launchOptions(t *testing.T) playwright.BrowserTypeLaunchOptions {
	o := playwright.BrowserTypeLaunchOptions{ExecutablePath: playwright.String(chromium(t)), Headless: playwright.Bool(true)}
	if os.Geteuid() == 0 {
		o.Args = []string{"--no-sandbox"} // Chromium refuses its sandbox as root
	}
	return o
}

// waitGone polls until no live process uses dir, failing after d.
func waitGone(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	testtier.EventuallyState(t, d, "no live process to use "+dir, func() (bool, string) {
		pids := PIDsUsing(dir)
		return len(pids) == 0, "still alive:" + describe(pids)
	})
}

func describe(pids []int) string {
	var b strings.Builder
	for _, p := range pids {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		fmt.Fprintf(&b, "\n  %d %s", p, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
	}
	return b.String()
}

func alive(pid int) bool {
	st, err := readStat(strconv.Itoa(pid))
	return err == nil && !st.exited
}

func environ(t *testing.T, pid int) []string { return procList(t, pid, "environ") }

func cmdline(t *testing.T, pid int) []string { return procList(t, pid, "cmdline") }

// procList is /proc/<pid>/<name>, a list of NUL-terminated strings.
func procList(t *testing.T, pid int, name string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// shimWithSleepingNode writes a shim whose "node" records its PID and
// environment in the file named by $RECORD, then sleeps.
func shimWithSleepingNode(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	os.WriteFile(node, []byte("#!/bin/sh\n{ echo $$; env; } > \"$RECORD.tmp\"; mv \"$RECORD.tmp\" \"$RECORD\"\nexec sleep 60\n"), 0o755)
	fakePackage(t, dir, PlaywrightVersion)
	shim, err := versionShim(Options{Dir: dir, NodePath: node})
	if err != nil || shim == "" {
		t.Fatalf("shim: %q %v", shim, err)
	}
	return shim
}

// TestShimDiesWithParent runs the shim from a parent that is then
// SIGKILLed: the node it started must die too, though it reads no stdin
// that could tell it. It runs in the TMPDIR it was given, with a fixed
// malloc mmap threshold, without our variables.
func TestShimDiesWithParent(t *testing.T) {
	needSetpriv(t)
	shim := shimWithSleepingNode(t)
	record := filepath.Join(t.TempDir(), "record")
	parent := exec.Command("/bin/sh", "-c", driverParentEnv+`=$$ "$0" cli.js run-driver & wait`, shim)
	parent.Env = append(os.Environ(), "RECORD="+record, driverTmpEnv+"=/private/tmp/x")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	var rec []byte
	testtier.EventuallyState(t, 10*time.Second, "node to start (its record written)", func() (bool, string) {
		var err error
		rec, err = os.ReadFile(record)
		return err == nil, fmt.Sprint(err)
	})
	lines := strings.Split(string(rec), "\n")
	node, err := strconv.Atoi(lines[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(node, syscall.SIGKILL) })
	if !slices.Contains(lines, "TMPDIR=/private/tmp/x") {
		t.Errorf("node's environment lacks the private TMPDIR:\n%s", rec)
	}
	if want := mallocMmapEnv + "=" + strconv.Itoa(mallocMmapThreshold); os.Getenv(mallocMmapEnv) == "" && !slices.Contains(lines, want) {
		t.Errorf("node's environment lacks %s:\n%s", want, rec)
	}
	if strings.Contains(string(rec), "CLOAKBROWSER_MCP_DRIVER_") {
		t.Errorf("our variables reached node:\n%s", rec)
	}
	if !alive(node) {
		t.Fatal("node is not running")
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	testtier.Eventually(t, 5*time.Second, "node to die with its SIGKILLed parent", func() bool { return !alive(node) })
}

// TestShimRefusesAnOrphan: when the parent died before the parent-death
// signal was armed (simulated by naming another parent), the shim exits
// instead of running a driver nobody will stop.
func TestShimRefusesAnOrphan(t *testing.T) {
	needSetpriv(t)
	shim := shimWithSleepingNode(t)
	record := filepath.Join(t.TempDir(), "record")
	cmd := exec.Command(shim, "cli.js", "run-driver")
	cmd.Env = append(os.Environ(), "RECORD="+record, driverParentEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "exited before its Playwright driver started") {
		t.Fatalf("shim ran for a dead parent: %v %s", err, out)
	}
	if _, err := os.Stat(record); err == nil {
		t.Fatal("node ran")
	}
}

// TestBrowserDiesWithDriver SIGKILLs the driver while a browser it
// launched runs: the browser goes with the driver's pipe. Everything ran in
// the driver's private TMPDIR, which Close removes.
func TestBrowserDiesWithDriver(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", nodeFromEnv)
	d := Start(Options{}, false)
	defer d.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	pw, err := d.Get(ctx)
	if err != nil {
		t.Fatalf("the real driver is needed (`go run ./cmd/cloakbrowser-mcp install --driver-only`): %v", err)
	}
	if d.tmp == "" {
		t.Fatal("the driver has no private TMPDIR")
	}
	if _, err := pw.Chromium.Launch(launchOptions(t)); err != nil {
		t.Fatal(err)
	}
	driverPid := d.Pid()
	env := environ(t, driverPid)
	if !slices.Contains(env, "TMPDIR="+d.tmp) {
		t.Fatalf("driver TMPDIR is not %s", d.tmp)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "CLOAKBROWSER_MCP_DRIVER_") {
			t.Errorf("driver environment has %s", kv)
		}
	}
	pids := PIDsUsing(d.tmp)
	var browser []int
	profileInside := false
	for _, p := range pids {
		if p == driverPid {
			continue
		}
		browser = append(browser, p)
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		profileInside = profileInside || bytes.Contains(cmd, []byte("--user-data-dir="+d.tmp+"/"))
	}
	if !slices.Contains(pids, driverPid) || len(browser) == 0 || !profileInside {
		t.Fatalf("want the driver %d and a browser with its profile in %s, got:%s", driverPid, d.tmp, describe(pids))
	}
	exited := d.Exited(pw)
	if err := syscall.Kill(driverPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, d.tmp, 10*time.Second)
	<-exited
	// The replacement starts in the same TMPDIR, emptied of what the dead
	// driver left (the browser's temporary profile).
	if _, err := d.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(d.tmp); len(entries) != 1 || entries[0].Name() != OwnerFile {
		t.Fatalf("after the restart %s holds %v, want only the owner marker", d.tmp, entries)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.tmp); !os.IsNotExist(err) {
		t.Fatalf("Close left the driver's temp dir: %v", err)
	}
}

// TestCloseDuringStart closes a driver at once, and while its node runs
// but the start has not finished: Close waits for the start and stops what
// it started; nothing is left.
func TestCloseDuringStart(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", nodeFromEnv)
	for _, tc := range []struct {
		name     string
		waitNode bool
	}{{"at once", false}, {"while node starts", true}} {
		t.Run(tc.name, func(t *testing.T) {
			d := Start(Options{}, false)
			deadline := time.Now().Add(20 * time.Second)
			for tc.waitNode && len(PIDsUsing(d.tmp)) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the driver never started")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Get(t.Context()); !errors.Is(err, ErrStopped) {
				t.Fatalf("Get after Close: %v, want ErrStopped", err)
			}
			if pids := PIDsUsing(d.tmp); len(pids) != 0 {
				t.Fatalf("left running:%s", describe(pids))
			}
			if _, err := os.Stat(d.tmp); !os.IsNotExist(err) {
				t.Fatalf("temp dir %s left: %v", d.tmp, err)
			}
		})
	}
}

const helperEnv = "CLOAKBROWSER_MCP_TEST_DRIVER_HELPER"

// TestDriverHelperProcess is not a test: it is the process that
// TestDriverDiesWithItsProcess kills. It starts a driver and a browser,
// prints the driver's PID and temp dir, and waits to be killed.
func TestDriverHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper process")
	}
	d := Start(Options{}, false)
	pw, err := d.Get(context.Background())
	if err == nil {
		_, err = pw.Chromium.Launch(launchOptions(t))
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	// Hold the driver's stdin open in another process, as a wedged pipe
	// would: its end-of-input cannot stop the driver then, only the
	// parent-death signal can.
	holder, err := holdStdin(d.Pid())
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("ready", d.Pid(), d.tmp, holder)
	select {}
}

// holdStdin starts a process that holds our end of pid's stdin pipe.
func holdStdin(pid int) (int, error) {
	stdin, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0")
	if err != nil {
		return 0, err
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	for _, e := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l != stdin {
			continue
		}
		fd, _ := strconv.Atoi(e.Name())
		cmd := exec.Command("sleep", "30")
		cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(fd), "driver-stdin")}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	}
	return 0, fmt.Errorf("no fd of ours is the driver's stdin %s", stdin)
}

// TestDriverDiesWithItsProcess SIGKILLs a process running a driver and a
// browser: both die with it, even with the driver's stdin held open
// elsewhere, and its temp dir goes with them (its reaper's work).
func TestDriverDiesWithItsProcess(t *testing.T) {
	testtier.BrowserTier(t)
	needSetpriv(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDriverHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "PLAYWRIGHT_NODEJS_PATH="+nodeFromEnv)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") || strings.HasPrefix(sc.Text(), "error ") {
				lines <- sc.Text()
			}
		}
		close(lines)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not start a driver and a browser")
	}
	var driverPid, holder int
	var tmp string
	if _, err := fmt.Sscanf(line, "ready %d %s %d", &driverPid, &tmp, &holder); err != nil {
		t.Fatalf("helper: %q", line)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(holder, syscall.SIGKILL)
		_ = os.RemoveAll(tmp)
	})
	if pids := PIDsUsing(tmp); !slices.Contains(pids, driverPid) || len(pids) < 2 {
		t.Fatalf("want the driver %d and a browser using %s, got:%s", driverPid, tmp, describe(pids))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for range lines { // the pipe closes with the helper
	}
	waitGone(t, tmp, 10*time.Second)
	// The helper's reaper removes its temp dir.
	testtier.EventuallyState(t, 15*time.Second, "the dead helper's reaper to remove "+tmp, func() (bool, string) {
		_, err := os.Lstat(tmp)
		return errors.Is(err, fs.ErrNotExist), fmt.Sprintf("lstat: %v", err)
	})
}
