package driver

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// A prelaunched browser used to start in the driver's node, once node had
// started and read its plan: about 80 ms after the driver's start began.
// The server starts it itself now, at the driver's start, and node adopts
// it (prelaunch.js): the browser talks to node over named pipes (FIFOs) in
// the driver's private TMPDIR, which node opens by name, since playwright-go
// starts node and hands it no file of ours.
//
// Each FIFO is held open both ways by the server until node has started
// (release): the browser's own opens return at once, and it sees no end of
// its DevTools pipe before node opened its side. From then on only the
// browser and node hold them, so each sees the other's exit as the end of
// its pipe: a browser whose node died (or never adopted it) closes, and
// node tells Playwright of a browser that exited. The server is the
// browser's parent, and reaps it; the browser gets SIGKILL should the server
// die, as node does (the shim's setpriv).

// earlyBrowser is a prelaunched browser the server started.
type earlyBrowser struct {
	cmd   *exec.Cmd
	dir   string     // its FIFOs
	holds []*os.File // the server's ends, until release
	done  chan struct{}
}

// earlyAdopt is what prelaunch.js needs to adopt the browser: its process
// and the FIFOs of its DevTools pipe (in: node → browser, out: browser →
// node) and of its stderr.
type earlyAdopt struct {
	PID int    `json:"pid"`
	In  string `json:"in"`
	Out string `json:"out"`
	Err string `json:"err"`
}

// startEarly starts the browser plan predicts, for node to adopt; nil when
// it cannot (the plan's own start in node then stands).
func startEarly(tmp string, plan *prelaunchPlan) *earlyBrowser {
	if tmp == "" || plan == nil || plan.Command == "" {
		return nil
	}
	dir, err := os.MkdirTemp(tmp, "early-")
	if err != nil {
		return nil
	}
	e := &earlyBrowser{dir: dir, done: make(chan struct{})}
	// Each FIFO is held open both ways, then opened as the browser's end
	// (its DevTools pipe on fds 3 (read) and 4 (write), its stderr): a FIFO
	// held both ways opens at once either way.
	var ends []*os.File
	drop := func() *earlyBrowser {
		for _, f := range append(ends, e.holds...) {
			_ = f.Close()
		}
		_ = os.RemoveAll(dir)
		return nil
	}
	for _, f := range []struct {
		name string
		flag int
	}{{"in", os.O_RDONLY}, {"out", os.O_WRONLY}, {"err", os.O_WRONLY}} {
		path := filepath.Join(dir, f.name)
		if syscall.Mkfifo(path, 0o600) != nil {
			return drop()
		}
		h, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return drop()
		}
		e.holds = append(e.holds, h)
		end, err := os.OpenFile(path, f.flag, 0)
		if err != nil {
			return drop()
		}
		ends = append(ends, end)
	}
	cmd := exec.Command(plan.Command, plan.Args...)
	cmd.Env = envList(plan.Env)
	cmd.Stderr = ends[2]
	cmd.ExtraFiles = ends[:2]
	// Playwright starts it detached (a process group of its own, which it
	// kills as one); SIGKILL if the server dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return drop()
	}
	for _, f := range ends {
		_ = f.Close() // the browser's now
	}
	e.cmd = cmd
	go func() {
		_ = cmd.Wait()
		close(e.done)
	}()
	return e
}

// adopt is the plan's part for prelaunch.js.
func (e *earlyBrowser) adopt() *earlyAdopt {
	return &earlyAdopt{PID: e.cmd.Process.Pid, In: filepath.Join(e.dir, "in"), Out: filepath.Join(e.dir, "out"), Err: filepath.Join(e.dir, "err")}
}

// release lets go of the server's ends of the FIFOs, once node has started
// (and adopted the browser, or not): from then on the browser and node see
// each other's exit.
func (e *earlyBrowser) release() {
	for _, f := range e.holds {
		_ = f.Close()
	}
	e.holds = nil
}

// stop kills the browser's process group if it still runs, waits for it,
// and removes its FIFOs.
func (e *earlyBrowser) stop() {
	e.release()
	select {
	case <-e.done:
	default:
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-e.done:
		case <-time.After(stopWait):
		}
	}
	_ = os.RemoveAll(e.dir)
}

// envList is env as os/exec takes it.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
