//go:build !linux

package session

import "time"

// ProfilePIDs is only implemented on Linux.
func ProfilePIDs(string) []int { return nil }

func killAndWait(string, time.Duration) {}
