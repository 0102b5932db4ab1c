package router

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync/atomic"
	"time"
)

// Execution is one run of code in the sandbox, as the router sees it: the
// tool calls made between Begin and End count against the namespaces'
// budgets (Policy.MaxCalls) and are recorded under its id.
type Execution struct {
	// ID identifies the execution in the audit trail.
	ID string
	// Session is the front end's session the execution belongs to (an MCP
	// session id), if any.
	Session string
	// Start is when it began.
	Start time.Time

	r      *Router
	ctx    context.Context // carries the recorder's span, if any
	budget budget
	calls  atomic.Int64
	// progress passes sbx.progress() and the bridges' lines on to the
	// front end (WithProgress); nil when nobody listens.
	progress *progressSink
}

// NewExecutionID returns a fresh random execution id.
func NewExecutionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "ex_" + hex.EncodeToString(b[:])
}

// Begin starts an execution: until End, the sandbox's tool calls belong to
// it. The sandbox runs one execution at a time, and so does the router: a
// Begin before the previous End replaces it. An empty id gets a fresh one.
func (r *Router) Begin(ctx context.Context, id, session string) *Execution {
	if id == "" {
		id = NewExecutionID()
	}
	e := &Execution{ID: id, Session: session, Start: time.Now(), r: r, ctx: ctx, progress: newProgressSink(ctx)}
	if rec := r.opts.Recorder; rec != nil {
		e.ctx = rec.BeginExecution(context.WithoutCancel(ctx), e)
	}
	r.exec.Store(e)
	return e
}

// End ends the execution with its outcome ("ok", or "error" with the
// error's type and message): later calls belong to no execution.
func (e *Execution) End(outcome, errType, message string) {
	e.r.exec.CompareAndSwap(e, nil)
	e.progress.stop() // tasks that outlive it report to nobody
	if rec := e.r.opts.Recorder; rec != nil {
		rec.EndExecution(e.ctx, &ExecutionRecord{
			ExecutionID: e.ID, Session: e.Session, Start: e.Start, Duration: time.Since(e.Start),
			Outcome: outcome, ErrorType: recordedText(errType), Error: recordedText(message), ToolCalls: int(e.calls.Load()),
		})
	}
}

// current is the running execution, nil between executions.
func (r *Router) current() *Execution { return r.exec.Load() }

// Recorder keeps the audit trail (package host/audit): every execution,
// and every tool call with its arguments, redacted of the bridge's
// secrets. Discovery (sbx.*) is not recorded.
type Recorder interface {
	// BeginExecution returns the context its tool calls are recorded in
	// (an OpenTelemetry span's).
	BeginExecution(ctx context.Context, e *Execution) context.Context
	// ToolCall records a finished call, in the context BeginExecution
	// returned (context.Background() outside executions).
	ToolCall(ctx context.Context, c *CallRecord)
	// EndExecution records the end of an execution.
	EndExecution(ctx context.Context, e *ExecutionRecord)
}

// ExecutionRecord is an execution, ended.
type ExecutionRecord struct {
	ExecutionID string
	Session     string
	Start       time.Time
	Duration    time.Duration
	// Outcome is "ok" or "error" (ErrorType and Error say which).
	Outcome   string
	ErrorType string
	Error     string
	// ToolCalls counts the calls recorded for it.
	ToolCalls int
}

// CallRecord is one tool call, finished.
type CallRecord struct {
	// ExecutionID and Session are the execution's; empty for a call made
	// between executions (by a bridge calling back into the host).
	ExecutionID string
	Session     string
	// Seq numbers the execution's calls from 1, in the order they began.
	Seq int
	// Bridge is the namespace; Tool the tool's full path ("ns.tool").
	Bridge string
	Tool   string
	// TaskID is set for background calls (.task()).
	TaskID   string
	Start    time.Time
	Duration time.Duration
	// Outcome is "ok", "error" (the tool or its bridge failed), "refused"
	// (a policy, the budget or a hook refused it) or "cancelled".
	Outcome   string
	ErrorType string // the Python exception
	Error     string // its message, redacted
	// Arguments are the call's JSON arguments, redacted of the bridge's
	// secrets; nil when the call did not get as far as binding them.
	Arguments json.RawMessage
}
