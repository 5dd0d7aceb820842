//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// markerEnv tags every process a server starts: the driver and the browser
// inherit the environment, even when they detach or are reparented to init.
// Renderers (started by Chromium's zygote with a scrubbed environment) are
// found by parentage.
const markerEnv = "MCPLOAD_MARKER"

type procInfo struct {
	PID   int
	PPID  int
	Comm  string
	RSSKB int64
}

// markedProcs lists the live processes carrying kv in their environment and
// all their descendants. Zombies are skipped.
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
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		all[pid] = procInfo{PID: pid, PPID: ppid, Comm: s[open+1 : end]}
		if env, err := os.ReadFile(filepath.Join(dir, "environ")); err == nil {
			for _, kvb := range bytes.Split(env, []byte{0}) {
				if string(kvb) == kv {
					marked[pid] = true
					break
				}
			}
		}
	}
	var out []procInfo
	for pid, p := range all {
		ok := false
		for q, n := pid, 0; q > 1 && n < 64; n++ {
			if marked[q] {
				ok = true
				break
			}
			pp, found := all[q]
			if !found {
				break
			}
			q = pp.PPID
		}
		if !ok {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status")); err == nil {
			p.RSSKB = statusKB(string(st), "VmRSS")
		}
		out = append(out, p)
	}
	return out
}

func statusKB(text, key string) int64 {
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		return n
	}
	return 0
}

// killMarked SIGKILLs whatever is left of a server's tree and waits up to d
// for it to go; it returns what is still there.
func killMarked(kv string, d time.Duration) []procInfo {
	deadline := time.Now().Add(d)
	for {
		left := markedProcs(kv)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
