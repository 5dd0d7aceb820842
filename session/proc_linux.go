package session

import (
	"syscall"
	"time"
)

// killAndWait SIGKILLs what is left of a browser and waits until it is gone.
func killAndWait(profile string, d time.Duration) {
	deadline := time.Now().Add(d)
	for empty := 0; ; {
		pids := ProfilePIDs(profile)
		if len(pids) == 0 {
			// Twice in a row, 50 ms apart: a child the browser forked as it
			// was killed (a zygote) can be between fork and exec, its
			// command line not readable, at one scan.
			if empty++; empty == 2 {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		empty = 0
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
