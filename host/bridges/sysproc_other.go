//go:build unix && !linux

package bridges

import "syscall"

// sysProcAttr puts a plugin in its own process group. Without Pdeathsig
// (Linux only) a plugin outlives a host that is SIGKILLed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupKillAfterExit is false where waitExited cannot wait without reaping.
const groupKillAfterExit = false

func waitExited(int) {}
