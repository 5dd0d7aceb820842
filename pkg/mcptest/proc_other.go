//go:build !linux

package mcptest

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
