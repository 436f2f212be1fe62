package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when the test binary dies. A test
// cleanup stops children on a failure, but not when go test's -timeout or a
// panic kills the binary: a serve-frontier or worker left behind then runs
// forever, holding its ports and any file descriptor it inherited.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
