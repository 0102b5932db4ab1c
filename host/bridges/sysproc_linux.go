package bridges

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a plugin in its own process group (so that killing it
// also kills what it started) and has the kernel SIGKILL it when the host
// dies (Pdeathsig; strictly, when the OS thread that started it exits, which
// Go's runtime does not do to unlocked threads).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupKillAfterExit: waitExited can wait for the plugin's exit without
// collecting its status, so Wait can kill the leftovers of its process group
// while the group's id cannot have been reused.
const groupKillAfterExit = true

// waitExited blocks until the process has exited, leaving it a zombie.
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
