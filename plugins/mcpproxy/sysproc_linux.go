package main

import "syscall"

// sysProcAttr has the kernel SIGKILL a stdio server when the proxy dies
// (strictly, when the OS thread that started it exits, which Go's runtime
// does not do to unlocked threads). The server stays in the proxy's process
// group, so the host's kill of the bridge's group takes it along.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
