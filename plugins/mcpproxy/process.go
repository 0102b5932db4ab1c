package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/procgroup"
)

// terminateGrace is how long a stdio server gets to exit after its stdin is
// closed, and again after SIGTERM, before it is killed (a variable, so that
// tests can shorten it).
var terminateGrace = 2 * time.Second

// A process is a stdio MCP server, in a process group of its own
// (sdk/procgroup). Unlike mcp.CommandTransport, it keeps the server's pipes
// as plain files (so that Wait never waits for a grandchild that holds
// stderr open, and never cuts off unread output) and records how the server
// ended, which the proxy reports.
type process struct {
	cmd    *exec.Cmd
	pg     *procgroup.Process
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	stderr *os.File // our end of the server's stderr
	tail   *tail    // the last lines the server wrote to stderr

	exited     chan struct{} // closed once the server has exited
	err        error         // cmd.Wait's result, set before exited is closed
	stderrDone chan struct{} // closed when stderr is read to its end

	stopOnce sync.Once
}

// startProcess starts the server with exactly env as its environment, in a
// process group of its own, killed if the proxy dies (Pdeathsig). redact
// removes credentials from the server's stderr as it is read.
func startProcess(path string, args, env []string, redact *sdk.Redactor, log hclog.Logger) (*process, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	pg, pipes, err := procgroup.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, pg: pg, stdin: pipes.Stdin, stdout: pipes.Stdout, stderr: pipes.Stderr,
		tail: &tail{}, exited: make(chan struct{}), stderrDone: make(chan struct{})}
	go p.readStderr(redact, log)
	go func() {
		p.err = pg.Wait() // kills what is left of the server's group first
		close(p.exited)
	}()
	return p, nil
}

// transport is the MCP transport over the server's stdin and stdout.
// Closing it stops the server (see stop).
func (p *process) transport() mcp.Transport {
	return &mcp.IOTransport{Reader: io.NopCloser(p.stdout), Writer: stdinCloser{p}}
}

// stdinCloser writes to the server's stdin; Close stops the server.
type stdinCloser struct{ p *process }

func (w stdinCloser) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }
func (w stdinCloser) Close() error                { w.p.stop(); return nil }

// stop stops the server as MCP's stdio transport says: close its stdin, wait,
// SIGTERM, wait, SIGKILL (to its whole process group). Then it closes our
// ends of its pipes, which ends any read of them (a grandchild may keep them
// open); stderr once what the server wrote is read (stderrRead): closed
// sooner, the last lines, which say why a server failed, were lost.
func (p *process) stop() {
	p.stopOnce.Do(func() {
		p.pg.Stop(p.stdin, terminateGrace)
		<-p.exited
		p.stdout.Close()
		p.stderrRead()
		p.stderr.Close()
	})
}

// exitState says how the server ended, once it has: "exit status 1",
// "signal: killed"; "" while it runs.
func (p *process) exitState() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		return "exit status 0"
	case errors.As(p.err, &ee):
		return ee.String()
	}
	return p.err.Error()
}

// waitExited waits up to d for the server to exit, and says how it ended
// (and, briefly, for the rest of its stderr, which tail then holds).
func (p *process) waitExited(d time.Duration) string {
	select {
	case <-p.exited:
		p.stderrRead()
	case <-time.After(d):
	}
	return p.exitState()
}

// stderrRead waits, once the server has exited, for its stderr to be read
// to the end: normally at once, as the pipe closes with the process; at
// most a second, as a child of the server may hold it open.
func (p *process) stderrRead() {
	select {
	case <-p.stderrDone:
	case <-time.After(time.Second):
	}
}

// readStderr logs what the server writes to stderr (at debug level, under
// the bridge's logger) and keeps the last lines for error messages, both
// redacted: a line is redacted before tail cuts it short, since a cut
// through a credential would leave its start, which no redactor
// recognizes.
func (p *process) readStderr(redact *sdk.Redactor, log hclog.Logger) {
	defer close(p.stderrDone)
	sc := bufio.NewScanner(p.stderr)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		line := redact.Redact(strings.TrimRight(sc.Text(), "\r"))
		if line == "" {
			continue
		}
		p.tail.add(line)
		log.Debug("server stderr", "line", line)
	}
}

// tail keeps the last lines of a stream.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const (
	tailLines   = 8
	tailLineLen = 300
)

func (t *tail) add(line string) {
	if len(line) > tailLineLen {
		line = line[:tailLineLen] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// String is the kept lines, for an error message: ` (stderr: a | b)`, or
// "" when there are none.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return ""
	}
	return fmt.Sprintf(" (stderr: %s)", strings.Join(t.lines, " | "))
}
