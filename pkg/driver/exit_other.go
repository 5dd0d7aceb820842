//go:build !linux

package driver

import (
	"os"
	"syscall"
	"time"
)

// watchExit closes exited when process pid exits, polling for it.
func watchExit(pid int, exited chan<- struct{}) {
	defer close(exited)
	for {
		p, err := os.FindProcess(pid)
		if err != nil {
			return
		}
		if err := p.Signal(syscall.Signal(0)); err != nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
