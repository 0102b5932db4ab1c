package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/parselbox/parselbox/sdk/procgroup"
)

// Mutable for tests.
var (
	// killGrace is how long a cancelled process group has between SIGTERM
	// and SIGKILL.
	killGrace = 2 * time.Second
	// drainDelay is how long output is still read after the process group
	// is gone, for a process that left the group (setsid) but holds the
	// output pipes open.
	drainDelay = time.Second
)

// reason says why a process ended early.
type reason = int32

const (
	reasonNone     reason = iota // it exited by itself
	reasonCancel                 // its context ended (cancel or timeout)
	reasonShutdown               // the bridge shut down
)

// process is a shell started in its own process group (sdk/procgroup),
// whose stdin, stdout and stderr are pipes. Ending it (by context, kill, or
// its own exit) ends the whole group, so the shell's children go with it.
type process struct {
	cmd   *exec.Cmd
	pg    *procgroup.Process
	pid   int
	stdin *os.File // write end

	stdout, stderr *os.File // read ends
	readers        sync.WaitGroup

	done     chan struct{} // closed once the process is reaped
	stopWait func() bool   // stops the context's watch

	why atomic.Int32 // a reason, set once
}

// startProcess starts s's command. When ctx ends, the process group gets
// SIGTERM, then SIGKILL after killGrace.
func startProcess(ctx context.Context, s *settings) (*process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(s.path, s.argv[1:]...)
	cmd.Args[0] = s.argv[0]
	cmd.Dir = s.dir
	cmd.Env = s.env

	pg, pipes, err := procgroup.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, pg: pg, pid: pg.Pid(), stdin: pipes.Stdin, stdout: pipes.Stdout, stderr: pipes.Stderr,
		done: make(chan struct{})}
	p.stopWait = context.AfterFunc(ctx, p.terminate)
	return p, nil
}

// read starts copying the process's stdout and stderr into out and errOut.
func (p *process) read(out, errOut *lines) {
	for _, c := range []struct {
		f *os.File
		l *lines
	}{{p.stdout, out}, {p.stderr, errOut}} {
		p.readers.Go(func() {
			_, _ = io.Copy(c.l, c.f)
			c.l.flush()
		})
	}
}

// terminate asks the process group to stop (SIGTERM), and forces it
// (SIGKILL) after killGrace.
func (p *process) terminate() {
	p.why.CompareAndSwap(reasonNone, reasonCancel)
	go p.pg.Stop(nil, killGrace)
}

// kill ends the process group at once.
func (p *process) kill(why reason) {
	p.why.CompareAndSwap(reasonNone, why)
	p.pg.Kill()
}

// wait waits for the shell to exit, kills what is left of its process group
// (background jobs), reaps it, and reads the rest of its output. It returns
// the exit status (128+N for a death by signal N) and why the process ended
// early, if it did.
func (p *process) wait() (int, reason) {
	_ = p.pg.Wait() // kills the group's leftovers before reaping the shell
	p.stopWait()
	why := p.why.Load()
	_ = p.stdin.Close()
	drained := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(drainDelay):
		// A process outside the group holds the pipes: closing them
		// stops reading.
	}
	_ = p.stdout.Close()
	_ = p.stderr.Close()
	<-drained
	close(p.done)
	return exitCode(p.cmd.ProcessState), why
}

func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// maxLogLine bounds a logged line; a longer one is logged in pieces.
const maxLogLine = 64 << 10

// lines takes a stream of output: it keeps it in capture and logs it line
// by line to log, each if set.
type lines struct {
	capture *capture
	log     func(string)
	partial []byte
}

// logLine logs a line as valid UTF-8 (the protocol's strings must be).
func (l *lines) logLine(b []byte) {
	l.log(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// Write implements io.Writer; it never fails.
func (l *lines) Write(b []byte) (int, error) {
	n := len(b)
	if l.capture != nil {
		l.capture.write(b)
	}
	for l.log != nil && len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.partial = append(l.partial, b...)
			for len(l.partial) >= maxLogLine {
				l.logLine(l.partial[:maxLogLine])
				l.partial = append(l.partial[:0], l.partial[maxLogLine:]...)
			}
			break
		}
		l.partial = append(l.partial, b[:i]...)
		l.logLine(trimCR(l.partial))
		l.partial = l.partial[:0]
		b = b[i+1:]
	}
	return n, nil
}

// flush logs an unterminated last line.
func (l *lines) flush() {
	if len(l.partial) > 0 {
		l.logLine(trimCR(l.partial))
		l.partial = nil
	}
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

// capture keeps a stream's output up to max bytes: past that, its first
// and last max/2 bytes, and how many were left out between them.
type capture struct {
	max   int
	head  []byte
	ring  []byte // the last max-max/2 bytes, and the byte before them
	start int    // where the ring begins, once full
	total int64
}

func newCapture(max int) *capture { return &capture{max: max} }

func (c *capture) write(b []byte) {
	c.total += int64(len(b))
	if room := c.max/2 - len(c.head); room > 0 {
		n := min(room, len(b))
		c.head = append(c.head, b[:n]...)
		b = b[n:]
	}
	size := c.max - c.max/2 + 1
	if len(b) >= size {
		c.ring = append(c.ring[:0], b[len(b)-size:]...)
		c.start = 0
		return
	}
	for len(b) > 0 {
		if len(c.ring) < size {
			n := min(size-len(c.ring), len(b))
			c.ring = append(c.ring, b[:n]...)
			b = b[n:]
			continue
		}
		n := copy(c.ring[c.start:], b)
		b = b[n:]
		c.start = (c.start + n) % size
	}
}

// ordered returns the ring's bytes in order.
func (c *capture) ordered() []byte {
	return append(append([]byte(nil), c.ring[c.start:]...), c.ring[:c.start]...)
}

// truncated reports whether bytes were left out.
func (c *capture) truncated() bool { return c.total > int64(c.max) }

// String returns the output, shortened in the middle if it was too long:
// the head and the tail are cut at line ends when they have some, and a
// line in between says how many bytes were left out.
func (c *capture) String() string {
	ring := c.ordered()
	if !c.truncated() {
		return string(c.head) + string(ring)
	}
	// The ring is full: its first byte is the one before the tail.
	before, tail := ring[0], ring[1:]
	head := c.head
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	if i := bytes.IndexByte(tail, '\n'); before != '\n' && i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	omitted := c.total - int64(len(head)+len(tail))
	var b strings.Builder
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d bytes omitted of %d; narrow the command or write the output to a file ...]\n", omitted, c.total)
	b.Write(tail)
	return b.String()
}

// last returns the last n bytes of the output, and whether there was more.
func (c *capture) last(n int) (string, bool) {
	b := c.ordered()
	cut := c.truncated()
	if cut {
		b = b[1:] // the byte before the tail
	} else {
		b = append(append([]byte(nil), c.head...), b...)
	}
	if len(b) > n {
		b, cut = b[len(b)-n:], true
	}
	return string(b), cut
}
