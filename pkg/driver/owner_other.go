//go:build !linux

package driver

import (
	"io/fs"
	"os"
	"time"
)

// selfOwner has no start time or boot where there is no /proc.
func selfOwner() (Owner, error) { return Owner{PID: os.Getpid()}, nil }

// Alive reports true: without /proc a reused PID cannot be told from the
// owner, so nothing is ever taken for stale.
func (o Owner) Alive() bool { return true }

func fileUID(fs.FileInfo) (int, bool) { return 0, false }

// PIDsUsing is only implemented on Linux.
func PIDsUsing(string) []int { return nil }

// KillUsing is only implemented on Linux.
func KillUsing(string, time.Duration) []int { return nil }

// privateTempDir: the driver keeps the process's TMPDIR.
func privateTempDir() (string, error) { return "", nil }

// pdeathsigWrapper: no parent-death signal outside Linux.
func pdeathsigWrapper() string { return "" }
