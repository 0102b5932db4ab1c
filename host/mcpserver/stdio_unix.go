//go:build unix

package mcpserver

import (
	"io"
	"os"
	"syscall"
)

// pollable returns a non-blocking duplicate of f, read through the
// network poller, when f is a pipe or a socket. O_NONBLOCK belongs to the
// open file, which f shares with its duplicate: undo closes the duplicate
// and clears the flag, so that whoever reads f after us (a shell) finds it
// as it was.
func pollable(f *os.File) (io.ReadCloser, func(), bool) {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil, nil, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, nil, false
	}
	dup := -1
	var dupErr error
	if err := rc.Control(func(fd uintptr) {
		dup, dupErr = syscall.Dup(int(fd))
	}); err != nil || dupErr != nil {
		return nil, nil, false
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return nil, nil, false
	}
	p := os.NewFile(uintptr(dup), f.Name()) // non-blocking: polled
	undo := func() {
		p.Close()
		_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
	}
	return p, undo, true
}
