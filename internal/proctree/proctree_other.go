//go:build !linux

package proctree

import (
	"os/exec"
	"time"
)

// Without /proc nothing is found or killed: memory figures are n/a and
// stray children are the servers' business.

// Own does nothing outside Linux.
func Own(cmd *exec.Cmd) {}

// Marked finds nothing outside Linux.
func Marked(kv string) []Proc { return nil }

// Alive finds nothing outside Linux.
func Alive(ps []Proc) []Proc { return nil }

// Remaining finds nothing outside Linux.
func Remaining(kv string, before []Proc) []Proc { return nil }

// KillGroup kills nothing outside Linux.
func KillGroup(pgid int) {}

// Kill kills nothing outside Linux.
func Kill(kv string, pgid int, before []Proc, wait time.Duration) []Proc { return nil }

// Cmdline is one live process and its command line.
type Cmdline struct {
	PID  int
	Args []string
}

// WithArg finds nothing outside Linux.
func WithArg(arg string) []Cmdline { return nil }
