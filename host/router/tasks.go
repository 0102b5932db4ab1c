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
type tasks struct {
	dir string
	log hclog.Logger

	mu    sync.Mutex
	byID  map[string]*task
	ended map[string]bool // finished tasks, so late sends are not kept
}

// task is one background call. It is the call's sdk.EventSink: log lines
// and progress go to its log file, which Python's task.tail() reads.
type task struct {
	id        string
	inbox     chan json.RawMessage
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

// inboxSize bounds the messages waiting for a running call; a sender blocks
// (the sandbox's send() waits) when the bridge does not read them.
const inboxSize = 256

func (ts *tasks) init(dir string, log hclog.Logger) {
	ts.dir, ts.log = dir, log
	ts.byID = map[string]*task{}
	ts.ended = map[string]bool{}
}

var taskIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// slot returns the task with this id, creating it. ts.mu must be held.
func (ts *tasks) slot(id string) *task {
	t := ts.byID[id]
	if t == nil {
		t = &task{id: id, inbox: make(chan json.RawMessage, inboxSize), log: ts.log}
		if ts.dir != "" {
			safe := cmp.Or(taskIDChars.ReplaceAllString(id, "_"), "task")
			t.logPath = filepath.Join(ts.dir, safe+".log")
		}
		ts.byID[id] = t
	}
	return t
}

// begin registers the call of task id and returns the context it runs in.
func (ts *tasks) begin(ctx context.Context, id string) (*task, context.Context, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.slot(id)
	if t.started {
		return nil, nil, pyErr(sdk.CodeInvalidArgument, "task %q is already running", id)
	}
	t.started = true
	ctx, t.cancel = context.WithCancel(ctx)
	if t.cancelled {
		t.cancel()
	}
	return t, ctx, nil
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
// task): later sends to it fail.
func (ts *tasks) forget(id string) {
	if id == "" {
		return
	}
	ts.mu.Lock()
	delete(ts.byID, id)
	ts.ended[id] = true
	ts.mu.Unlock()
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
	switch p.Op {
	case "cancel":
		t.cancelled = true
		if t.cancel != nil {
			t.cancel()
		}
		ts.mu.Unlock()
		return nil
	case "send":
		ts.mu.Unlock()
		msg := p.Message
		if len(msg) == 0 {
			msg = json.RawMessage("null")
		}
		select {
		case t.inbox <- msg:
			return nil
		case <-ctx.Done():
			return pyErr(sdk.CodeTimeout, "task %s is not reading its messages", p.ID)
		}
	default:
		ts.mu.Unlock()
		return pyErr(sdk.CodeInvalidArgument, "unknown task operation %q", p.Op)
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
