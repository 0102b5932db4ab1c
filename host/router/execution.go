package router

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

	r      *Router
	ctx    context.Context
	budget budget
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
	e := &Execution{ID: id, Session: session, r: r, ctx: ctx}
	r.exec.Store(e)
	return e
}

// End ends the execution: later calls belong to no execution.
func (e *Execution) End() {
	e.r.exec.CompareAndSwap(e, nil)
}

// current is the running execution, nil between executions.
func (r *Router) current() *Execution { return r.exec.Load() }
