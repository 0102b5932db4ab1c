package procgroup

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr: a group of its own, so that a signal reaches every process
// the child starts; and SIGKILL from the kernel when the starting thread
// dies (Go's runtime does not end unlocked threads, so in practice: when the
// host dies).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until pid has exited, leaving it a zombie; it reports
// whether it could.
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}
