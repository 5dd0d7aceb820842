//go:build !linux

package embed

import "os/exec"

func setProcAttr(cmd *exec.Cmd) {}

func killGroup(pgid int) {}
