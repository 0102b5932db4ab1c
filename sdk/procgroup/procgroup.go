//go:build unix

package procgroup

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is a started command that leads its own process group.
type Process struct {
	cmd *exec.Cmd
	pid int

	mu     sync.Mutex
	reaped bool // the leader is reaped: its pid may name another group now

	exited   chan struct{} // closed when the leader has exited
	reapedCh chan struct{} // closed when Wait has reaped the leader
}

// Prepare sets cmd to start in a new process group and, on Linux, to be
// killed when the thread that starts it dies. Use it when something else
// starts cmd; then Track it. Start does both.
func Prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = sysProcAttr()
}

// Start prepares cmd (see Prepare) and starts it.
func Start(cmd *exec.Cmd) (*Process, error) {
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return Track(cmd), nil
}

// Pipes are the parent's ends of the pipes that StartPiped connects to a
// command's stdin, stdout and stderr. They are plain files, which
// exec.Cmd.Wait neither waits for nor closes: a grandchild that holds a pipe
// open cannot keep Wait from returning, and Wait never cuts off output that
// is still unread. The caller closes them.
type Pipes struct {
	Stdin  *os.File // write end
	Stdout *os.File // read end
	Stderr *os.File // read end
}

// StartPiped connects new pipes to cmd's stdin, stdout and stderr, and
// starts it (see Start). The child's ends are closed once it has started;
// on failure, every end is.
func StartPiped(cmd *exec.Cmd) (_ *Process, _ Pipes, err error) {
	var files []*os.File // every end, closed on failure
	defer func() {
		if err != nil {
			for _, f := range files {
				_ = f.Close()
			}
		}
	}()
	var r, w [3]*os.File // the ends of the pipes of stdin, stdout and stderr
	for i := range 3 {
		if r[i], w[i], err = os.Pipe(); err != nil {
			return nil, Pipes{}, err
		}
		files = append(files, r[i], w[i])
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r[0], w[1], w[2]
	p, err := Start(cmd)
	if err != nil {
		return nil, Pipes{}, err
	}
	// The child has its copies; ours would keep the pipes open.
	for _, f := range []*os.File{r[0], w[1], w[2]} {
		_ = f.Close()
	}
	return p, Pipes{Stdin: w[0], Stdout: r[1], Stderr: r[2]}, nil
}

// Track returns the Process of a command that was prepared with Prepare and
// has been started.
func Track(cmd *exec.Cmd) *Process {
	return &Process{
		cmd:      cmd,
		pid:      cmd.Process.Pid,
		exited:   make(chan struct{}),
		reapedCh: make(chan struct{}),
	}
}

// Pid is the leader's process id, which is also the group's id.
func (p *Process) Pid() int { return p.pid }

// Exited is closed when the leader has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Done is closed when Wait has reaped the leader.
func (p *Process) Done() <-chan struct{} { return p.reapedCh }

// Wait waits for the leader to exit, kills what is left of its group (on
// Linux, where it can do so before the leader is reaped), reaps it and
// returns exec.Cmd.Wait's error. Call it exactly once; with pipes from
// StdoutPipe or StderrPipe, after their reads have finished (as
// exec.Cmd.Wait requires). Stop and Exited rely on it running.
func (p *Process) Wait() error {
	early := waitExited(p.pid)
	if early {
		p.Signal(syscall.SIGKILL) // leftovers: background jobs, grandchildren
		close(p.exited)
	}
	err := p.cmd.Wait()
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	if !early {
		close(p.exited)
	}
	close(p.reapedCh)
	return err
}

// Signal sends sig to every process of the group, unless the leader has
// been reaped (its id may then belong to someone else). A group that is
// already gone is not an error.
func (p *Process) Signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	_ = syscall.Kill(-p.pid, sig) // ESRCH: the group is gone already
}

// Kill sends SIGKILL to the group.
func (p *Process) Kill() { p.Signal(syscall.SIGKILL) }

// Stop ends the process gracefully first: it closes stdin (if not nil) and
// waits up to grace for the leader to exit; then sends SIGTERM to the group
// and waits up to grace again; then sends SIGKILL and waits for the exit.
// It returns once the leader has exited. Wait must be running (in another
// goroutine) for Stop to see the exit.
func (p *Process) Stop(stdin io.Closer, grace time.Duration) {
	if stdin != nil {
		_ = stdin.Close()
		if p.exitedWithin(grace) {
			return
		}
	}
	p.Signal(syscall.SIGTERM)
	if p.exitedWithin(grace) {
		return
	}
	p.Kill()
	<-p.exited
}

func (p *Process) exitedWithin(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}
