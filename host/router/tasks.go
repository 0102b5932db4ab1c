package router

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/sdk"
)

// taskParams controls a running task: {op: "send"|"cancel", id, message}.
type taskParams struct {
	Op      string          `json:"op"`
	ID      string          `json:"id"`
	Message json.RawMessage `json:"message"`
}

// tasks tracks the calls that run in the background. A task's slot may be
// created by a send or cancel that overtakes the call itself (the requests
// are served concurrently); the call then finds its messages waiting.
//
// What the guest sends is kept within bounds, whatever ids it makes up:
// the messages waiting in the inboxes hold at most MaxQueuedBytes (a send
// past it waits, as the request in flight it is), and at most
// maxWaitingSlots slots wait for a call that has not begun.
type tasks struct {
	dir string
	log hclog.Logger

	mu      sync.Mutex
	byID    map[string]*task
	ended   map[string]bool // finished tasks, so late sends are not kept
	waiting int             // slots in byID whose call has not begun
	queued  int64           // bytes of the messages in the slots' queues
	space   chan struct{}   // closed, and replaced, when queued bytes are taken
}

// task is one background call. It is the call's sdk.EventSink: log lines
// and progress go to its log file, which Python's task.tail() reads.
type task struct {
	id        string
	inbox     chan json.RawMessage // the call's (req.Inbox), fed from queue
	queue     []json.RawMessage    // sent, not yet taken by the call; tasks.mu
	more      chan struct{}        // signalled when queue grows
	cancel    context.CancelFunc
	cancelled bool
	started   bool

	mu      sync.Mutex
	logPath string
	logFile *os.File
	logSize int64 // bytes in the log file
	log     hclog.Logger
}

// MaxTaskLogBytes caps one task's log file: past it, the older half is
// dropped (the file keeps its last lines, which task.tail() reads), so
// that a chatty tool cannot fill the workspace's disk.
const MaxTaskLogBytes = 1 << 20

// taskLogDropped heads a log whose older lines were dropped.
const taskLogDropped = "[earlier lines dropped: the log is capped]\n"

// inboxSize bounds the messages waiting for one call; a sender blocks
// (the sandbox's send() waits) when the bridge does not read them.
const inboxSize = 256

// MaxQueuedBytes bounds the bytes of the messages that wait, in all the
// tasks' inboxes, for their calls to read them; a sender blocks past it. A
// message is taken whatever its size when none waits.
const MaxQueuedBytes = 16 << 20

// maxWaitingSlots bounds the tasks known by a send or cancel whose call has
// not begun: as many as calls can be in flight. Past it, a send to an
// unknown task fails and a cancel does nothing.
const maxWaitingSlots = sandbox.MaxCallsInFlight

// maxEnded bounds the finished tasks remembered so that a late send fails
// at once; past it, they are forgotten.
const maxEnded = 4096

func (ts *tasks) init(dir string, log hclog.Logger) {
	ts.dir, ts.log = dir, log
	ts.byID = map[string]*task{}
	ts.ended = map[string]bool{}
	ts.space = make(chan struct{})
}

var taskIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// slot returns the task with this id, creating it (nil when it does not
// exist and maxWaitingSlots wait already). ts.mu must be held.
func (ts *tasks) slot(id string) *task {
	t := ts.byID[id]
	if t == nil {
		if ts.waiting >= maxWaitingSlots {
			return nil
		}
		t = ts.add(id)
		ts.waiting++
	}
	return t
}

// add makes the slot of task id. ts.mu must be held.
func (ts *tasks) add(id string) *task {
	t := &task{id: id, inbox: make(chan json.RawMessage), more: make(chan struct{}, 1), log: ts.log}
	if ts.dir != "" {
		safe := cmp.Or(taskIDChars.ReplaceAllString(id, "_"), "task")
		t.logPath = filepath.Join(ts.dir, safe+".log")
	}
	ts.byID[id] = t
	return t
}

// begin registers the call of task id and returns the context it runs in.
func (ts *tasks) begin(ctx context.Context, id string) (*task, context.Context, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	switch {
	case t == nil:
		t = ts.add(id)
	case t.started:
		return nil, nil, pyErr(sdk.CodeInvalidArgument, "task %q is already running", id)
	default:
		ts.waiting--
	}
	t.started = true
	ctx, t.cancel = context.WithCancel(ctx)
	if t.cancelled {
		t.cancel()
	}
	go ts.deliver(ctx, t)
	return t, ctx, nil
}

// deliver hands t's queued messages to its call, in order, until ctx (the
// call's) ends.
func (ts *tasks) deliver(ctx context.Context, t *task) {
	for {
		ts.mu.Lock()
		if len(t.queue) == 0 {
			ts.mu.Unlock()
			select {
			case <-t.more:
				continue
			case <-ctx.Done():
				return
			}
		}
		msg := t.queue[0]
		ts.mu.Unlock()
		select {
		case t.inbox <- msg:
		case <-ctx.Done():
			return
		}
		ts.mu.Lock()
		if len(t.queue) > 0 { // (dropped meanwhile when the task ended)
			t.queue[0] = nil
			t.queue = t.queue[1:]
			ts.taken(int64(len(msg)))
		}
		ts.mu.Unlock()
	}
}

// taken releases n queued bytes and wakes the senders waiting for room.
// ts.mu must be held.
func (ts *tasks) taken(n int64) {
	ts.queued -= n
	close(ts.space)
	ts.space = make(chan struct{})
}

// end forgets a finished task and closes its log.
func (ts *tasks) end(t *task) {
	ts.forget(t.id)
	t.cancel()
	t.mu.Lock()
	if t.logFile != nil {
		t.logFile.Close()
		t.logFile = nil
	}
	t.mu.Unlock()
}

// forget forgets task id, finished or failed before it started ("" is no
// task): later sends to it fail. Its messages not read are dropped.
func (ts *tasks) forget(id string) {
	if id == "" {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.byID[id]; t != nil {
		if !t.started {
			ts.waiting--
		}
		var n int64
		for _, m := range t.queue {
			n += int64(len(m))
		}
		t.queue = nil
		if n > 0 {
			ts.taken(n)
		}
		delete(ts.byID, id)
	}
	if len(ts.ended) >= maxEnded {
		clear(ts.ended)
	}
	ts.ended[id] = true
}

// control serves task.send() and task.cancel().
func (ts *tasks) control(ctx context.Context, p *taskParams) error {
	ts.mu.Lock()
	if ts.ended[p.ID] {
		ts.mu.Unlock()
		if p.Op == "cancel" {
			return nil // already over
		}
		return pyErr(sdk.CodeInternal, "task %s has finished; it takes no more messages", p.ID)
	}
	t := ts.slot(p.ID)
	switch {
	case p.Op == "cancel":
		if t != nil {
			t.cancelled = true
			if t.cancel != nil {
				t.cancel()
			}
		}
		ts.mu.Unlock()
		return nil
	case p.Op != "send":
		ts.mu.Unlock()
		return pyErr(sdk.CodeInvalidArgument, "unknown task operation %q", p.Op)
	}
	msg := p.Message
	if len(msg) == 0 {
		msg = json.RawMessage("null")
	}
	for {
		switch {
		case t == nil:
			ts.mu.Unlock()
			return pyErr(sdk.CodeNotFound, "no task %s is running", p.ID)
		case len(t.queue) < inboxSize && (ts.queued == 0 || ts.queued+int64(len(msg)) <= MaxQueuedBytes):
			t.queue = append(t.queue, msg)
			ts.queued += int64(len(msg))
			ts.mu.Unlock()
			select {
			case t.more <- struct{}{}:
			default:
			}
			return nil
		}
		space := ts.space
		ts.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return pyErr(sdk.CodeTimeout, "task %s is not reading its messages", p.ID)
		}
		ts.mu.Lock()
		if ts.ended[p.ID] {
			ts.mu.Unlock()
			return pyErr(sdk.CodeInternal, "task %s has finished; it takes no more messages", p.ID)
		}
		t = ts.slot(p.ID)
	}
}

func (ts *tasks) cancelAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, t := range ts.byID {
		t.cancelled = true
		if t.cancel != nil {
			t.cancel()
		}
	}
}

// Log appends a line to the task's log.
func (t *task) Log(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.logPath == "" {
		return
	}
	if t.logFile == nil {
		err := os.MkdirAll(filepath.Dir(t.logPath), 0o755)
		if err == nil {
			t.logFile, err = os.OpenFile(t.logPath, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
		}
		if err != nil {
			t.log.Warn("task log", "task", t.id, "error", err)
			t.logPath = ""
			return
		}
		t.logSize, _ = t.logFile.Seek(0, io.SeekEnd)
	}
	line = strings.TrimRight(line, "\n")
	if len(line) > MaxTaskLogBytes/4 {
		line = line[:MaxTaskLogBytes/4] + " [line cut]"
	}
	if t.logSize+int64(len(line))+1 > MaxTaskLogBytes {
		t.shrinkLog()
	}
	n, err := t.logFile.WriteString(line + "\n")
	t.logSize += int64(n)
	if err != nil {
		t.log.Warn("task log", "task", t.id, "error", err)
	}
}

// shrinkLog keeps the newer half of the log file, from a line start.
// t.mu is held.
func (t *task) shrinkLog() {
	keep := make([]byte, MaxTaskLogBytes/2)
	n, _ := t.logFile.ReadAt(keep, t.logSize-int64(len(keep)))
	keep = keep[:n]
	if i := bytes.IndexByte(keep, '\n'); i >= 0 {
		keep = keep[i+1:]
	}
	if err := t.logFile.Truncate(0); err != nil {
		t.log.Warn("task log", "task", t.id, "error", err)
		return
	}
	n1, _ := t.logFile.WriteString(taskLogDropped)
	n2, _ := t.logFile.Write(keep)
	t.logSize = int64(n1 + n2)
}

// Progress appends a progress line to the task's log.
func (t *task) Progress(progress, total float64, message string) {
	t.Log(progressLine(progress, total, message))
}

// progressLine is "[3/10] (30%) message", or "progress: 3 message" without
// a total.
func progressLine(progress, total float64, message string) string {
	if message != "" {
		message = " " + message
	}
	if total > 0 {
		return fmt.Sprintf("[%g/%g] (%.0f%%)%s", progress, total, 100*progress/total, message)
	}
	return fmt.Sprintf("progress: %g%s", progress, message)
}
