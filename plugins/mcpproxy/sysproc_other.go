//go:build !linux

package main

import "syscall"

// sysProcAttr: without Pdeathsig (Linux only), a stdio server outlives a
// proxy that is killed on its own; the host's kill of the bridge's process
// group still reaches it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{}
}
