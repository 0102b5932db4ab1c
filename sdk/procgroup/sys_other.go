//go:build unix && !linux

package procgroup

import "syscall"

// sysProcAttr: a group of its own. Without Pdeathsig (Linux only), a child
// outlives a parent that is SIGKILLed.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExited cannot wait without reaping here: Wait reaps first and leaves
// the group's leftovers alone rather than risk signalling a reused id.
func waitExited(int) bool { return false }
