//go:build !linux

package mcptest

import "os/exec"

func setPdeathsig(*exec.Cmd) {}

// processGone cannot tell here: nothing is swept.
func processGone(int) bool { return false }
