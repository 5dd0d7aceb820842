package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// setProcAttrs puts a server in its own process group and has the kernel
// kill it if the harness dies.
func setProcAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// markedProcs lists the live processes of one server: those whose
// environment holds kv (markerEnv=value) and all their descendants
// (Chromium's zygote starts renderers with a scrubbed environment, so they
// are found by parentage), with their memory and CPU. Zombies are skipped.
func markedProcs(kv string) []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	all := map[int]procInfo{}
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
		// USER_HZ is 100 on every Linux the harness targets.
		all[pid] = procInfo{PID: pid, PPID: st.PPID, Comm: st.Comm, State: st.State, CPUms: st.Ticks * 10, Start: st.Start}
		if env, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil && environHas(env, kv) {
			marked[pid] = true
		}
	}
	var out []procInfo
	for pid, p := range all {
		if !belongs(pid, all, marked) {
			continue
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		p.Exe, _ = os.Readlink(filepath.Join(dir, "exe"))
		if st, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
			p.RSSKB, _ = parseStatusKB(string(st), "VmRSS")
		}
		if sm, err := os.ReadFile(filepath.Join(dir, "smaps_rollup")); err == nil {
			p.PSSKB, _ = parseStatusKB(string(sm), "Pss")
		}
		out = append(out, p)
	}
	return out
}

// alive returns the processes of ps that still run (same PID and start
// time, not a zombie).
func alive(ps []procInfo) []procInfo {
	var out []procInfo
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

// remaining is what is left of a server: processes seen before it was
// closed that still run, plus any process still carrying its marker.
func remaining(kv string, before []procInfo) []procInfo {
	left := alive(before)
	seen := map[int]bool{}
	for _, p := range left {
		seen[p.PID] = true
	}
	for _, p := range markedProcs(kv) {
		if !seen[p.PID] {
			left = append(left, p)
		}
	}
	return left
}

// killMarked SIGKILLs the process group pgid (if > 0) and what remains of
// a server (see remaining), then waits, bounded, until none is left. It
// returns what was still alive when it gave up.
func killMarked(kv string, pgid int, before []procInfo, wait time.Duration) []procInfo {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(wait)
	for {
		left := remaining(kv, before)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
