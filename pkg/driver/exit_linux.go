package driver

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// watchExit closes exited when process pid exits. On Linux it waits on a
// pidfd, which becomes readable when the process terminates, whoever reaps
// it (playwright-go does).
func watchExit(pid int, exited chan<- struct{}) {
	defer close(exited)
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // already gone
	}
	if err != nil {
		pollExit(pid) // no pidfd (kernel before 5.3, seccomp)
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			pollExit(pid)
			return
		case n > 0:
			return
		}
	}
}

// pollExit returns once pid is gone or a zombie.
func pollExit(pid int) {
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i < 0 || i+2 >= len(b) || b[i+2] == 'Z' {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
