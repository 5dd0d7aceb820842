package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestFindAndKill starts a marked child that starts an unmarked grandchild,
// finds both (the grandchild by parentage), kills them and finds nothing left.
func TestFindAndKill(t *testing.T) {
	kv := "PROCTREE_TEST_MARKER=" + strconv.Itoa(os.Getpid()) + "-" + t.Name()
	// The grandchild gets a scrubbed environment, like a Chromium renderer.
	cmd := exec.Command("sh", "-c", "env -i sleep 60 & wait")
	cmd.Env = append(os.Environ(), kv)
	Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		Kill(kv, cmd.Process.Pid, nil, 5*time.Second)
		<-exited
	})

	var procs []Proc
	byComm := map[string]Proc{}
	// Until env has exec'd sleep.
	testtier.EventuallyState(t, 10*time.Second, "Marked to find sh and its sleep", func() (bool, string) {
		procs = Marked(kv)
		clear(byComm)
		for _, p := range procs {
			byComm[p.Comm] = p
		}
		return len(procs) == 2 && byComm["sleep"].PID != 0, fmt.Sprintf("%+v", procs)
	})
	sh, sleep := byComm["sh"], byComm["sleep"]
	if sh.PID != cmd.Process.Pid || sleep.PPID != sh.PID {
		t.Fatalf("Marked = %+v; want sh (pid %d) and its child sleep", procs, cmd.Process.Pid)
	}
	if sh.RSSKB <= 0 || sh.Start == 0 {
		t.Errorf("sh has no RSS or start time: %+v", sh)
	}
	if sh.PeakRSSKB < sh.RSSKB {
		t.Errorf("sh's peak RSS %d kB is below its RSS %d kB", sh.PeakRSSKB, sh.RSSKB)
	}
	if got := Alive(procs); len(got) != 2 {
		t.Errorf("Alive = %+v, want both", got)
	}

	if left := Kill(kv, cmd.Process.Pid, procs, 5*time.Second); len(left) != 0 {
		t.Fatalf("Kill left %+v", left)
	}
	<-exited // reaped: no zombie left either
	if left := Remaining(kv, procs); len(left) != 0 {
		t.Fatalf("Remaining after Kill = %+v", left)
	}
}

// TestOwnKeepsAttrs checks that Own adds its two fields to a SysProcAttr the
// caller already set, rather than replacing it.
func TestOwnKeepsAttrs(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Noctty: true}
	Own(cmd)
	if a := cmd.SysProcAttr; !a.Setpgid || a.Pdeathsig != syscall.SIGKILL || !a.Noctty {
		t.Fatalf("SysProcAttr after Own: %+v", a)
	}
	cmd = exec.Command("true")
	Own(cmd)
	if a := cmd.SysProcAttr; a == nil || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("SysProcAttr after Own: %+v", a)
	}
}

// TestWithArg finds a child by one argument of its command line, with the
// whole command line, and no longer once it exited.
func TestWithArg(t *testing.T) {
	arg := "--proctree-test=" + strconv.Itoa(os.Getpid())
	// A builtin that blocks (read on a pipe kept open): the shell forks no
	// child that would show the same command line for a moment.
	cmd := exec.Command("sh", "-c", "read x", "sh", arg)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := WithArg(arg)
	if len(got) != 1 || got[0].PID != cmd.Process.Pid || got[0].Args[len(got[0].Args)-1] != arg {
		t.Fatalf("WithArg(%q) = %+v, want pid %d", arg, got, cmd.Process.Pid)
	}
	if WithArg(arg+"x") != nil || WithArg(arg[:len(arg)-1]) != nil {
		t.Fatal("WithArg matched an argument that is not equal")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := WithArg(arg); got != nil {
		t.Fatalf("after exit: %+v", got)
	}
}
