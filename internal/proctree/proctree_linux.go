package proctree

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Own puts cmd in its own process group (so Kill can signal the group) and
// has the kernel SIGKILL it when its parent dies: strictly, when the thread
// that forked it exits, and the Go runtime keeps its threads for the life of
// the process (nothing here locks one to a goroutine that ends). Other
// SysProcAttr fields already set are kept. It is the one place this
// module's code outside session, pkg/server and pkg/driver arms the
// parent-death signal (pkg/driver's early browser needs a session of its
// own, as Playwright's detached launch has, where Own gives a group).
func Own(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// Marked lists the live processes whose environment holds kv (KEY=value)
// and all their descendants, with their memory and CPU. Zombies and the
// calling process are skipped.
func Marked(kv string) []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	all := map[int]Proc{}
	marked := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		st, err := parseStat(string(stat))
		if err != nil || st.State == "Z" || st.State == "X" {
			continue
		}
		// USER_HZ is 100 on every Linux this runs on.
		all[pid] = Proc{PID: pid, PPID: st.PPID, Comm: st.Comm, State: st.State, CPUms: st.Ticks * 10, Start: st.Start}
		if env, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil && environHas(env, kv) {
			marked[pid] = true
		}
	}
	var out []Proc
	for pid, p := range all {
		if !belongs(pid, all, marked) {
			continue
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		p.Exe, _ = os.Readlink(filepath.Join(dir, "exe"))
		if st, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
			p.RSSKB, _ = parseStatusKB(string(st), "VmRSS")
			p.PeakRSSKB, _ = parseStatusKB(string(st), "VmHWM")
		}
		if sm, err := os.ReadFile(filepath.Join(dir, "smaps_rollup")); err == nil {
			p.PSSKB, _ = parseStatusKB(string(sm), "Pss")
		}
		out = append(out, p)
	}
	return out
}

// Alive returns the processes of ps that still run (same PID and start
// time, not a zombie).
func Alive(ps []Proc) []Proc {
	var out []Proc
	for _, p := range ps {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "stat"))
		if err != nil {
			continue
		}
		st, err := parseStat(string(stat))
		if err != nil || st.State == "Z" || st.State == "X" || st.Start != p.Start {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Remaining is what is left of a server: the processes of before (listed
// while it ran) that still run, plus any process still carrying kv.
func Remaining(kv string, before []Proc) []Proc {
	left := Alive(before)
	seen := map[int]bool{}
	for _, p := range left {
		seen[p.PID] = true
	}
	for _, p := range Marked(kv) {
		if !seen[p.PID] {
			left = append(left, p)
		}
	}
	return left
}

// KillGroup SIGKILLs what is left of the process group pgid (if > 0): a
// process started with Own leads its own group, and the children it
// spawned are in it.
func KillGroup(pgid int) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Kill SIGKILLs the process group pgid (if > 0) and what Remaining(kv,
// before) finds, until none is left or wait has passed. It returns what was
// still alive when it gave up.
func Kill(kv string, pgid int, before []Proc, wait time.Duration) []Proc {
	KillGroup(pgid)
	deadline := time.Now().Add(wait)
	for {
		left := Remaining(kv, before)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Cmdline is one live process and its command line.
type Cmdline struct {
	PID  int
	Args []string
}

// WithArg lists the live processes (zombies skipped) whose command line
// has an argument equal to arg, with their command lines.
func WithArg(arg string) []Cmdline {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(arg)
	var out []Cmdline
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmd, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !slices.ContainsFunc(bytes.Split(cmd, []byte{0}), func(a []byte) bool { return bytes.Equal(a, want) }) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if st, err := parseStat(string(stat)); err != nil || st.State == "Z" || st.State == "X" {
			continue
		}
		out = append(out, Cmdline{PID: pid, Args: strings.Split(strings.TrimSuffix(string(cmd), "\x00"), "\x00")})
	}
	return out
}
