package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/internal/workers"
	"github.com/parselbox/parselbox/sdk/procgroup"
)

// Handler serves the sandbox's requests to the host: tool calls and the
// like. Each request is served at once on a goroutine of its own (a worker
// reused from one request to the next); ctx is cancelled when the sandbox
// gives up on the request (it was interrupted) or its process exits.
// A *RemoteError return makes Python raise that exception type; any
// other error raises RuntimeError with the error's text. A json.RawMessage
// result reaches Python as it is (it is only compacted if it spans lines).
type Handler interface {
	ServeSandbox(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// Reasons the host killed a process, reported in the error of the
// execution that was running (or in the note of the next one).
const (
	killTimeout   = "timeout"   // an execution did not stop when interrupted at its deadline
	killInterrupt = "interrupt" // an execution did not stop within the grace period of an interrupt
	killMemory    = "memory"    // above the hard memory limit
	killClose     = "close"     // the sandbox was closed
	killRunaway   = "runaway"   // a callback blocked the sandbox between executions
	killFatal     = "fatal"     // the interpreter failed fatally
	killWedged    = "wedged"    // the interpreter could no longer run code (Supervisor.healthy)
	killProtocol  = "protocol"  // the sandbox broke the protocol
)

// interruptPipe is where the watchdog thread of the runner reads interrupt
// requests: the read end of a pipe passed as the child's fd 3.
const interruptPipe = "/dev/fd/3"

// process is one Deno process and its protocol connection.
type process struct {
	log     hclog.Logger
	group   *procgroup.Process
	handler Handler
	limits  protocolLimits
	key     []byte // the channel key, which starts every line of the runner's

	writeMu sync.Mutex
	stdin   io.WriteCloser

	ctlMu sync.Mutex
	ctl   *os.File // the interrupt pipe's write end

	// workers run the sandbox's requests (serve), on goroutines reused
	// from one request to the next; only the stdout reader starts them.
	workers *workers.Pool

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]chan *message      // our requests awaiting a response
	serving   map[int64]context.CancelFunc // the sandbox's requests being served
	inFlight  int64                        // bytes of the requests being served
	rejecting int                          // refusals being sent (see dispatch)

	killReason string
	killDetail string // what the sandbox said about a fatal error or a runaway

	reported bool // an execution reported its end (guarded by Supervisor.mu)

	ctx    context.Context // cancelled when the process has exited
	cancel context.CancelFunc

	ready chan ReadyInfo
	// restoring: the process was given a snapshot to load; restored: it
	// said it did. A boot that fails between the two blames the snapshot.
	restoring bool
	restored  atomic.Bool
	exited    chan struct{} // closed once the process is reaped
	exitErr   error
	stderr    *tailBuffer
	guard     *confine.Guard

	// output receives the "output" notifications of the execution that
	// asked for them (WithOutput), nil otherwise.
	output atomic.Pointer[outputSink]
}

// outputSink is where the printed text of one execution goes.
type outputSink struct {
	id int64 // the exec request's id
	fn func(stream, text string)
}

// protocolLimits bound what crosses the channel.
type protocolLimits struct {
	maxMessage int64 // bytes of one line, either way
}

// MaxCallsInFlight bounds the sandbox's requests (tool calls, tasks) that
// the host serves at once; MaxBytesInFlight, in messages of
// max_message_size, bounds the bytes of their arguments. A request past
// either is refused at once with a RuntimeError in Python, so that a guest
// starting tasks in a loop cannot make the host hold unbounded goroutines
// and memory.
const (
	MaxCallsInFlight = 1024
	MaxBytesInFlight = 4 // × max_message_size
)

// spawnSpec is what it takes to start one process.
type spawnSpec struct {
	args    []string
	env     []string
	dir     string
	init    initParams
	handler Handler
	log     hclog.Logger
	limits  protocolLimits
	confine *confine.Spec
}

func spawn(spec spawnSpec) (*process, error) {
	cmd := exec.Command(spec.args[0], spec.args[1:]...)
	cmd.Env = spec.env
	cmd.Dir = spec.dir
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
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{ctlR} // fd 3
	guard, err := confine.Command(cmd, spec.confine)
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	spec.init.ChannelKey = newChannelKey()
	p := &process{
		log:       spec.log,
		handler:   spec.handler,
		limits:    spec.limits,
		key:       []byte(spec.init.ChannelKey),
		stdin:     stdin,
		ctl:       ctlW,
		pending:   make(map[int64]chan *message),
		serving:   make(map[int64]context.CancelFunc),
		workers:   workers.New(),
		ctx:       ctx,
		cancel:    cancel,
		ready:     make(chan ReadyInfo, 1),
		restoring: spec.init.Snapshot != "" && !spec.init.MakeSnapshot,
		exited:    make(chan struct{}),
		stderr:    &tailBuffer{max: 16 << 10},
		guard:     guard,
	}
	// Its own process group, killed with the host (procgroup).
	p.group, err = procgroup.Start(cmd)
	ctlR.Close()
	if err != nil {
		ctlW.Close()
		cancel()
		guard.Release()
		return nil, fmt.Errorf("starting deno: %w", err)
	}
	p.log = p.log.With("pid", p.group.Pid())

	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.relayStderr(stderr)
	}()
	go func() {
		p.readStdout(stdout)
		// No more requests: the idle workers end, and a busy one when its
		// request is (cancelled below with p.ctx).
		p.workers.Close()
		<-stderrDone
		err := p.group.Wait()
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
		p.ctlMu.Lock()
		p.ctl.Close()
		p.ctl = nil
		p.ctlMu.Unlock()
		if err := p.guard.Release(); err != nil {
			p.log.Warn("releasing the sandbox's confinement", "error", err)
		}
		close(p.exited)
	}()

	if err := p.send(&message{Method: "init", Params: mustJSON(spec.init)}); err != nil {
		// The process is gone or going (a broken pipe): how it ended is
		// the news, as in waitReady.
		p.kill(killClose)
		<-p.exited
		return nil, fmt.Errorf("sending init: %w (%s)", err, p.exitStatus())
	}
	return p, nil
}

func (p *process) pid() int { return p.group.Pid() }

// waitReady waits for the ready notification.
func (p *process) waitReady(ctx context.Context) (ReadyInfo, error) {
	select {
	case info := <-p.ready:
		return info, nil
	case <-p.exited:
		err := fmt.Errorf("%w (%s): %s", errExitedBeforeReady, p.exitStatus(), bootFailure(p.stderr.String()))
		// (A process killed, by the host or the kernel's OOM killer,
		// while it loaded says nothing about the snapshot.)
		if p.restoring && !p.restored.Load() && !p.killed() {
			err = fmt.Errorf("%w: %w", errSnapshotUnusable, err)
		}
		return ReadyInfo{}, err
	case <-ctx.Done():
		p.kill(killClose)
		<-p.exited
		return ReadyInfo{}, fmt.Errorf("sandbox did not become ready: %w; stderr: %s", ctx.Err(), p.stderr.String())
	}
}

// bootFailure is what the runner said when its boot failed (its
// "boot failed: " line, the first line of the cause), or the tail of
// stderr when it said nothing of the kind.
func bootFailure(stderr string) string {
	for line := range strings.Lines(stderr) {
		if cause, ok := strings.CutPrefix(strings.TrimSpace(line), "boot failed: "); ok {
			return cause
		}
	}
	return stderr
}

// killed reports whether the process ended by SIGKILL.
func (p *process) killed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ee, ok := errors.AsType[*exec.ExitError](p.exitErr)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// exitStatus describes how the process ended, once it has.
func (p *process) exitStatus() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ee, ok := errors.AsType[*exec.ExitError](p.exitErr); ok {
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

// kill ends the process group at once, remembering why (the first reason
// counts). procgroup leaves a reaped group alone: its id may be reused.
func (p *process) kill(reason string) { p.killWith(reason, "") }

func (p *process) killWith(reason, detail string) {
	p.setReason(reason, detail)
	p.group.Kill()
}

// setReason remembers why the process ends, unless a reason came first.
func (p *process) setReason(reason, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killReason == "" {
		p.killReason, p.killDetail = reason, detail
	}
}

func (p *process) reason() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killReason, p.killDetail
}

// stop ends the process: EOF on stdin first (the runner exits), then
// SIGTERM, then SIGKILL, grace apart; it returns once the process is reaped.
func (p *process) stop(grace time.Duration) {
	p.setReason(killClose, "")
	p.group.Stop(closerFunc(func() error {
		p.writeMu.Lock() // not in the middle of a line
		defer p.writeMu.Unlock()
		return p.stdin.Close()
	}), grace)
	<-p.exited
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// send writes one message as a line.
func (p *process) send(m *message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return p.writeLine(b)
}

// writeLine writes parts as one line, whole: small lines in one write,
// large ones part by part (not copied into one buffer).
func (p *process) writeLine(parts ...[]byte) error {
	parts = append(parts, []byte{'\n'})
	n := 0
	for _, b := range parts {
		n += len(b)
	}
	if n <= 64<<10 {
		parts = [][]byte{slices.Concat(parts...)}
	}
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	for _, b := range parts {
		if _, err := p.stdin.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// interrupt asks the runner's watchdog to interrupt request id (an exec).
func (p *process) interrupt(id int64) {
	line := []byte(`{"method":"interrupt","params":{"id":` + strconv.FormatInt(id, 10) + "}}\n")
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	if p.ctl != nil {
		_, _ = p.ctl.Write(line)
	}
}

// call sends a request and returns its id and the channel its response
// arrives on; the channel is closed without a value if the process exits
// first. before, if not nil, is given the request's id before the request
// is sent.
func (p *process) call(method string, params any, before func(id int64)) (int64, <-chan *message, error) {
	p.mu.Lock()
	if p.pending == nil {
		p.mu.Unlock()
		return 0, nil, ErrExited
	}
	p.nextID++
	id := p.nextID
	ch := make(chan *message, 1)
	p.pending[id] = ch
	p.mu.Unlock()
	if before != nil {
		before(id)
	}
	// One encoding: the parameters, marshalled once, go into the line as
	// they are.
	head := []byte(`{"id":` + strconv.FormatInt(id, 10) + `,"method":` + string(mustJSON(method)) + `,"params":`)
	if err := p.writeLine(head, mustJSON(params), []byte("}")); err != nil {
		p.forget(id)
		return 0, nil, fmt.Errorf("%w: %w", ErrExited, err)
	}
	return id, ch, nil
}

// request is call, waiting for the result.
func (p *process) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id, ch, err := p.call(method, params, nil)
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
		p.forget(id)
		return nil, ctx.Err()
	}
}

// forget drops a pending request whose caller gave up.
func (p *process) forget(id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pending, id) // (nil once the process exited)
}

// readStdout reads the runner's messages: the lines that start with the
// channel key. Any other line is text that guest code wrote to the
// process's stdout (guest JS shares the runner's process): it is logged as
// guest output, escaped and rate-limited, and never interpreted.
func (p *process) readStdout(r io.Reader) {
	lr := newLineReader(r, p.limits.maxMessage+int64(len(p.key)))
	guest := newGuestLog(p.log, "stdout")
	for {
		line, size, err := lr.next()
		switch {
		case errors.Is(err, errTooLong):
			// The runner keeps to the limit itself: this one is broken.
			p.log.Error("the sandbox sent a message over the max_message_size limit; killing it",
				"size", size, "limit", p.limits.maxMessage)
			p.killWith(killProtocol, fmt.Sprintf("it sent a message of %d bytes, over the max_message_size limit of %d bytes", size, p.limits.maxMessage))
			continue
		case len(line) > 0:
			if msg, ok := unframe(line, p.key); ok {
				p.dispatch(msg)
			} else {
				guest.line(line)
			}
		}
		if err != nil {
			// Drain what is left so that the process never blocks on a
			// full pipe while being killed.
			_, _ = io.Copy(io.Discard, r)
			return
		}
	}
}

func (p *process) dispatch(line []byte) {
	m, err := decodeMessage(line)
	if err != nil {
		p.log.Warn("ignoring a line from the sandbox", "error", err)
		return
	}
	switch {
	case m.isResponse():
		p.mu.Lock()
		ch, ok := p.pending[*m.ID]
		delete(p.pending, *m.ID)
		p.mu.Unlock()
		if !ok {
			p.log.Warn("ignoring a response to no request of ours", "id", *m.ID)
			return
		}
		ch <- m
	case m.ID != nil: // a request from the sandbox
		size := int64(len(line))
		p.mu.Lock()
		if p.serving[*m.ID] != nil {
			p.mu.Unlock()
			p.log.Warn("ignoring a request whose id is in use", "id", *m.ID)
			return
		}
		if refusal := p.overLimits(size); refusal != nil {
			if p.rejecting >= MaxCallsInFlight {
				p.mu.Unlock()
				p.log.Warn("dropping a request past the limits of requests in flight", "id", *m.ID)
				return
			}
			p.rejecting++
			p.mu.Unlock()
			// Replied from a goroutine: the reader never blocks on the
			// sandbox's stdin.
			go func(id int64) {
				_ = p.send(&message{ID: &id, Error: refusal})
				p.mu.Lock()
				p.rejecting--
				p.mu.Unlock()
			}(*m.ID)
			return
		}
		ctx, cancel := context.WithCancel(p.ctx)
		p.serving[*m.ID] = cancel
		p.inFlight += size
		p.mu.Unlock()
		id, method, params := *m.ID, m.Method, m.Params
		p.workers.Run(func() { p.serve(ctx, cancel, id, method, params, size) })
	default:
		p.notification(m.Method, m.Params)
	}
}

// notification acts on a notification from the runner.
func (p *process) notification(method string, params json.RawMessage) {
	switch method {
	case "ready":
		var info ReadyInfo
		if err := json.Unmarshal(params, &info); err != nil {
			p.log.Warn("bad ready notification", "error", err)
		}
		select {
		case p.ready <- info:
		default: // only the first counts
		}
	case "restored":
		p.restored.Store(true)
	case "output":
		var o struct {
			ID     int64  `json:"id"`
			Stream string `json:"stream"`
			Text   string `json:"text"`
		}
		sink := p.output.Load()
		if sink == nil || json.Unmarshal(params, &o) != nil || o.ID != sink.id ||
			(o.Stream != "stdout" && o.Stream != "stderr") {
			return
		}
		sink.fn(o.Stream, o.Text)
	case "cancel":
		// The sandbox gave up on some of its requests (it was interrupted).
		var ids struct {
			IDs []int64 `json:"ids"`
		}
		_ = json.Unmarshal(params, &ids)
		p.mu.Lock()
		for _, id := range ids.IDs {
			if c := p.serving[id]; c != nil {
				c()
			}
		}
		p.mu.Unlock()
	case "log":
		var l struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(params, &l)
		level := hclog.LevelFromString(l.Level)
		if level == hclog.NoLevel || level < hclog.Debug {
			level = hclog.Warn
		}
		p.log.Log(level, "runner: "+escape(l.Message, 4096))
	case "fatal":
		var f struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(params, &f)
		p.log.Warn("the Python runtime failed fatally", "cause", escape(f.Message, 300))
		p.killWith(killFatal, escape(f.Message, 300))
	case "runaway":
		var r struct {
			Phase   string `json:"phase"`
			Seconds int    `json:"seconds"`
		}
		_ = json.Unmarshal(params, &r)
		if r.Phase == "exec" {
			p.log.Warn("an execution did not stop when interrupted; killing the sandbox")
			p.kill(killTimeout)
		} else {
			p.log.Warn("a callback blocked the sandbox between executions and did not stop; killing it", "seconds", r.Seconds)
			p.killWith(killRunaway, strconv.Itoa(r.Seconds))
		}
	default:
		p.log.Debug("ignoring a notification from the sandbox", "method", escape(method, 100))
	}
}

// overLimits is the error for a request of size bytes that would pass the
// limits of requests in flight, or nil. p.mu is held.
func (p *process) overLimits(size int64) *Error {
	if n := len(p.serving); n >= MaxCallsInFlight {
		return &Error{Type: "RuntimeError", Message: fmt.Sprintf(
			"too many tool calls in flight: %d are running, the most the host serves at once; wait for some to finish (await the tasks) before starting more", n)}
	}
	if limit := MaxBytesInFlight * p.limits.maxMessage; p.inFlight+size > limit {
		return &Error{Type: "RuntimeError", Message: fmt.Sprintf(
			"the tool calls in flight would hold %d bytes of arguments, over the limit of %d bytes (%d × max_message_size); wait for some to finish before starting more",
			p.inFlight+size, limit, MaxBytesInFlight)}
	}
	return nil
}

func (p *process) serve(ctx context.Context, cancel context.CancelFunc, id int64, method string, params json.RawMessage, size int64) {
	defer func() {
		cancel()
		p.mu.Lock()
		delete(p.serving, id)
		p.inFlight -= size
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
	var raw json.RawMessage
	if err == nil {
		raw, err = p.resultJSON(method, result)
	}
	if err != nil {
		reply := &Error{Type: "RuntimeError", Message: err.Error()}
		if re, ok := errors.AsType[*RemoteError](err); ok {
			reply = &Error{Type: re.Type, Message: re.Message}
		}
		err = p.send(&message{ID: &id, Error: reply})
	} else {
		err = p.writeLine([]byte(`{"id":`+strconv.FormatInt(id, 10)+`,"result":`), raw, []byte("}"))
	}
	if err != nil && !p.isExited() {
		p.log.Debug("replying to the sandbox", "error", err)
	}
}

// resultJSON is the JSON of a handler's result, as it goes on the line: a
// json.RawMessage as it is (compacted only if it spans lines), anything
// else marshalled once; within the message limit.
func (p *process) resultJSON(method string, result any) (json.RawMessage, error) {
	raw, isRaw := result.(json.RawMessage)
	var err error
	switch {
	case !isRaw:
		raw, err = json.Marshal(result)
	case len(raw) == 0:
		raw = json.RawMessage("null")
	case !json.Valid(raw):
		return nil, &RemoteError{Type: "TypeError", Message: "the host's result is not JSON"}
	case bytes.IndexByte(raw, '\n') >= 0:
		var buf bytes.Buffer
		err = json.Compact(&buf, raw)
		raw = buf.Bytes()
	}
	if err != nil {
		return nil, &RemoteError{Type: "TypeError", Message: "the host's result is not JSON: " + err.Error()}
	}
	if n := int64(len(raw)) + 64; n > p.limits.maxMessage {
		return nil, &RemoteError{Type: "ValueError", Message: fmt.Sprintf(
			"the result of this %s is %d bytes, over the max_message_size limit of %d bytes", method, len(raw), p.limits.maxMessage)}
	}
	return raw, nil
}

// Guest output on stderr is logged at this level, under "guest".
const guestLevel = hclog.Debug

// relayStderr logs the process's stderr: everything the guest prints there
// (console.* of JS reached from Python, Deno's own messages). Lines are
// escaped (no control characters reach the log; a "[error]" prefix is just
// text), truncated, logged at one fixed level and rate-limited. A tail is
// kept for error messages. The runner's own diagnostics never come this
// way (see notification "log").
func (p *process) relayStderr(r io.Reader) {
	br := newLineReader(r, 64<<10)
	guest := newGuestLog(p.log, "stderr")
	for {
		line, _, err := br.next()
		if errors.Is(err, errTooLong) {
			line, err = []byte("[a line over 64 KiB, dropped]"), nil
		}
		if len(line) > 0 || err == nil {
			p.stderr.WriteLine(guest.line(line))
		}
		if err != nil {
			return
		}
	}
}

// guestLog logs the lines of one of the guest's streams under "guest":
// escaped, truncated, at one fixed level, rate-limited.
type guestLog struct {
	log     hclog.Logger
	stream  string
	limit   *rateLimit
	dropped int
}

func newGuestLog(log hclog.Logger, stream string) *guestLog {
	return &guestLog{log: log.Named("guest"), stream: stream, limit: newRateLimit(50, 200)}
}

// line logs one line and returns it escaped.
func (g *guestLog) line(line []byte) string {
	text := escape(string(line), 2048)
	if g.limit.allow() {
		if g.dropped > 0 {
			g.log.Log(guestLevel, g.stream+" lines dropped (rate limit)", "count", g.dropped)
			g.dropped = 0
		}
		g.log.Log(guestLevel, g.stream, "line", text)
	} else {
		g.dropped++
	}
	return text
}

// escape makes s safe to log: control and invalid characters escaped as in
// a Go string literal, at most max bytes of the original.
func escape(s string, max int) string {
	cut := len(s) > max
	if cut {
		s = s[:max]
	}
	q := strconv.QuoteToGraphic(s)
	q = q[1 : len(q)-1]
	if cut {
		q += "..."
	}
	return q
}

// rateLimit is a token bucket: rate tokens a second, up to burst.
type rateLimit struct {
	rate, burst, tokens float64
	last                time.Time
}

func newRateLimit(rate, burst float64) *rateLimit {
	return &rateLimit{rate: rate, burst: burst, tokens: burst, last: time.Now()}
}

func (l *rateLimit) allow() bool {
	now := time.Now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
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

func (t *tailBuffer) WriteLine(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(append(t.buf, s...), '\n')
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// rssMB reads a process's resident set size from /proc, in MB: the second
// field of /proc/PID/statm, in pages (status has it too, but costs the
// kernel far more to write).
func rssMB(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, errors.New("no resident size in /proc statm")
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, err
	}
	return int(pages * int64(os.Getpagesize()) >> 20), nil
}
