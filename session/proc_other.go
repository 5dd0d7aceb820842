//go:build !linux

package session

import "time"

// killAndWait is only implemented on Linux.
func killAndWait(string, time.Duration) {}
