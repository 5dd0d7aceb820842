package mcptest

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the server die with the test process.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
