package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/confine"
)

// Handler serves the sandbox's requests to the host: tool calls and the
// like. Each request is served on its own goroutine; ctx is cancelled when
// the sandbox gives up on the request (it was interrupted) or its process
// exits. A *RemoteError return makes Python raise that exception type; any
// other error raises RuntimeError with the error's text.
type Handler interface {
	ServeSandbox(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// Reasons the host killed a process, reported in the error of the
// execution that was running.
const (
	killTimeout = "timeout"
	killMemory  = "memory"
	killClose   = "close"
)

// process is one Deno process and its protocol connection.
type process struct {
	log     hclog.Logger
	cmd     *exec.Cmd
	handler Handler

	writeMu sync.Mutex
	stdin   io.WriteCloser

	mu         sync.Mutex
	nextID     int64
	pending    map[int64]chan *message      // our requests awaiting a response
	serving    map[int64]context.CancelFunc // the sandbox's requests being served
	killReason string

	ctx    context.Context // cancelled when the process has exited
	cancel context.CancelFunc

	ready   chan ReadyInfo
	exited  chan struct{} // closed once the process is reaped
	exitErr error
	stderr  *tailBuffer
	guard   *confine.Guard
}

// spawnSpec is what it takes to start one process.
type spawnSpec struct {
	args    []string
	env     []string
	dir     string
	init    initParams
	handler Handler
	log     hclog.Logger
	confine *confine.Spec
}

func spawn(spec spawnSpec) (*process, error) {
	cmd := exec.Command(spec.args[0], spec.args[1:]...)
	cmd.Env = spec.env
	cmd.Dir = spec.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // its own group: a kill reaches every thread and child
		Pdeathsig: syscall.SIGKILL, // and it dies with the host
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	guard, err := confine.Command(cmd, spec.confine)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{
		log:     spec.log,
		cmd:     cmd,
		handler: spec.handler,
		stdin:   stdin,
		pending: make(map[int64]chan *message),
		serving: make(map[int64]context.CancelFunc),
		ctx:     ctx,
		cancel:  cancel,
		ready:   make(chan ReadyInfo, 1),
		exited:  make(chan struct{}),
		stderr:  newTailBuffer(16 << 10),
		guard:   guard,
	}
	if err := cmd.Start(); err != nil {
		cancel()
		guard.Release()
		return nil, fmt.Errorf("starting deno: %w", err)
	}
	p.log = p.log.With("pid", cmd.Process.Pid)

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.relayStderr(stderr)
	}()
	go func() {
		p.readStdout(stdout)
		<-stderrDone
		err := cmd.Wait()
		p.mu.Lock()
		if p.guard.OOMKilled() && p.killReason == "" {
			p.killReason = killMemory // the kernel's memory limit
		}
		p.exitErr = err
		pending := p.pending
		p.pending = nil
		p.mu.Unlock()
		p.cancel()
		for _, ch := range pending {
			close(ch)
		}
		if err := p.guard.Release(); err != nil {
			p.log.Warn("releasing the sandbox's confinement", "error", err)
		}
		close(p.exited)
	}()

	if err := p.send(&message{Method: "init", Params: mustJSON(spec.init)}); err != nil {
		p.kill(killClose)
		<-p.exited
		return nil, fmt.Errorf("sending init: %w", err)
	}
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// waitReady waits for the ready notification.
func (p *process) waitReady(ctx context.Context) (ReadyInfo, error) {
	select {
	case info := <-p.ready:
		return info, nil
	case <-p.exited:
		return ReadyInfo{}, fmt.Errorf("%w (%s): %s", errExitedBeforeReady, p.exitStatus(), p.stderr.String())
	case <-ctx.Done():
		p.kill(killClose)
		<-p.exited
		return ReadyInfo{}, fmt.Errorf("sandbox did not become ready: %w; stderr: %s", ctx.Err(), p.stderr.String())
	}
}

// exitStatus describes how the process ended, once it has.
func (p *process) exitStatus() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ee *exec.ExitError
	if errors.As(p.exitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		}
		return "exit status " + strconv.Itoa(ee.ExitCode())
	}
	if p.exitErr != nil {
		return p.exitErr.Error()
	}
	return "exit status 0"
}

func (p *process) isExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill ends the process group at once, remembering why. Once the process
// is reaped its id may be reused, so an exited process is left alone (its
// group is empty: Deno runs with --deny-run).
func (p *process) kill(reason string) {
	p.mu.Lock()
	if p.killReason == "" {
		p.killReason = reason
	}
	p.mu.Unlock()
	if !p.isExited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (p *process) reason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killReason
}

// stop ends the process: EOF on stdin first (the runner exits), then SIGKILL
// after grace.
func (p *process) stop(grace time.Duration) {
	p.mu.Lock()
	if p.killReason == "" {
		p.killReason = killClose
	}
	p.mu.Unlock()
	p.writeMu.Lock()
	_ = p.stdin.Close()
	p.writeMu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(grace):
		p.kill(killClose)
		<-p.exited
	}
}

func (p *process) send(m *message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	_, err = p.stdin.Write(b)
	return err
}

// call sends a request and returns the channel its response arrives on; the
// channel is closed without a value if the process exits first.
func (p *process) call(method string, params any) (<-chan *message, error) {
	p.mu.Lock()
	if p.pending == nil {
		p.mu.Unlock()
		return nil, ErrExited
	}
	p.nextID++
	id := p.nextID
	ch := make(chan *message, 1)
	p.pending[id] = ch
	p.mu.Unlock()
	if err := p.send(&message{ID: &id, Method: method, Params: mustJSON(params)}); err != nil {
		p.mu.Lock()
		if p.pending != nil {
			delete(p.pending, id)
		}
		p.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", ErrExited, err)
	}
	return ch, nil
}

// request is call, waiting for the result.
func (p *process) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch, err := p.call(method, params)
	if err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%w (%s)", ErrExited, p.exitStatus())
		}
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		p.forget(ch)
		return nil, ctx.Err()
	}
}

// forget drops a pending request whose caller gave up.
func (p *process) forget(ch <-chan *message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, c := range p.pending {
		if c == ch {
			delete(p.pending, id)
			return
		}
	}
}

func (p *process) readStdout(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 1 {
			p.dispatch(line)
		}
		if err != nil {
			return
		}
	}
}

func (p *process) dispatch(line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		p.log.Warn("ignoring a line from the sandbox that is not JSON", "error", err)
		return
	}
	switch {
	case m.Method == "" && m.ID != nil: // a response
		p.mu.Lock()
		ch := p.pending[*m.ID]
		delete(p.pending, *m.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	case m.Method == "ready":
		var info ReadyInfo
		_ = json.Unmarshal(m.Params, &info)
		select {
		case p.ready <- info:
		default: // only the first counts
		}
	case m.Method == "cancel":
		// The sandbox gave up on some of its requests (it was interrupted).
		var ids struct {
			IDs []int64 `json:"ids"`
		}
		_ = json.Unmarshal(m.Params, &ids)
		p.mu.Lock()
		for _, id := range ids.IDs {
			if c := p.serving[id]; c != nil {
				c()
			}
		}
		p.mu.Unlock()
	case m.ID != nil: // a request from the sandbox
		ctx, cancel := context.WithCancel(p.ctx)
		p.mu.Lock()
		p.serving[*m.ID] = cancel
		p.mu.Unlock()
		go p.serve(ctx, cancel, *m.ID, m.Method, m.Params)
	default:
		p.log.Debug("notification from the sandbox", "method", m.Method)
	}
}

func (p *process) serve(ctx context.Context, cancel context.CancelFunc, id int64, method string, params json.RawMessage) {
	defer func() {
		cancel()
		p.mu.Lock()
		delete(p.serving, id)
		p.mu.Unlock()
	}()
	var (
		result any
		err    error
	)
	if p.handler == nil {
		err = &RemoteError{Type: "NotImplementedError", Message: "the host serves no " + method + " requests"}
	} else {
		result, err = p.handler.ServeSandbox(ctx, method, params)
	}
	reply := &message{ID: &id}
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			reply.Error = &Error{Type: re.Type, Message: re.Message}
		} else {
			reply.Error = &Error{Type: "RuntimeError", Message: err.Error()}
		}
	} else {
		b, merr := json.Marshal(result)
		if merr != nil {
			reply.Error = &Error{Type: "TypeError", Message: "the host's result is not JSON: " + merr.Error()}
		} else {
			reply.Result = b
		}
	}
	if err := p.send(reply); err != nil && !p.isExited() {
		p.log.Debug("replying to the sandbox", "error", err)
	}
}

// relayStderr passes the runner's stderr to the log; lines look like
// "[level] text". It keeps a tail for error messages.
func (p *process) relayStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.stderr.WriteLine(line)
		level, text := hclog.Debug, line
		if strings.HasPrefix(line, "[") {
			if end := strings.IndexByte(line, ']'); end > 0 {
				if l := hclog.LevelFromString(line[1:end]); l != hclog.NoLevel {
					level, text = l, strings.TrimPrefix(line[end+1:], " ")
				}
			}
		}
		p.log.Log(level, text)
	}
}

func mustJSON(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sandbox: marshalling %T: %v", v, err))
	}
	return b
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) WriteLine(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, s...)
	t.buf = append(t.buf, '\n')
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// rssMB reads a process's resident set size from /proc, in MB.
func rssMB(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.Atoi(f[0])
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}
