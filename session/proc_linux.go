package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ProfilePIDs lists live processes whose command line names the profile
// directory: the browser and its helpers.
func ProfilePIDs(profile string) []int {
	if profile == "" {
		return nil
	}
	needle := []byte("--user-data-dir=" + profile)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
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
		for _, arg := range bytes.Split(cmd, []byte{0}) {
			if bytes.Equal(arg, needle) {
				if !isZombie(pid) {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// killAndWait SIGKILLs what is left of a browser and waits until it is gone.
func killAndWait(profile string, d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		pids := ProfilePIDs(profile)
		if len(pids) == 0 {
			return
		}
		// Give the browser a moment to exit on its own after Close.
		if time.Until(deadline) < d-500*time.Millisecond {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
