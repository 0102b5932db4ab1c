package host

import (
	"context"
	"time"

	"github.com/parselbox/parselbox/host/router"
	"github.com/parselbox/parselbox/host/sandbox"
)

// Observer is told what a sandbox does, for metrics (package host/metrics
// is one): executions with their duration and outcome, tool calls by
// bridge and outcome, and restarts of the sandbox process by cause. It
// sees no code, arguments or results. Its methods must be quick and safe
// for concurrent use: several sandboxes may share one Observer.
type Observer interface {
	// Executed: an execution ended. outcome is one of the Outcome*
	// constants.
	Executed(d time.Duration, outcome string)
	// ToolCalled: a tool call of the sandbox ended; outcome is "ok",
	// "error", "refused" or "cancelled". Discovery (sbx.*) is not told.
	ToolCalled(bridge, outcome string, d time.Duration)
	// Restarted: the sandbox process ended unexpectedly and is restarted;
	// cause is "timeout", "interrupt", "memory", "runaway", "fatal", "wedged"
	// (the interpreter could no longer run code), "protocol" or "crash" (it
	// died of itself).
	Restarted(cause string)
}

// The outcomes of an execution that Observer.Executed is told.
const (
	OutcomeOK      = "ok"      // the code ran to its end
	OutcomeRaised  = "raised"  // the code raised an exception
	OutcomeTimeout = "timeout" // the code ran past its timeout
	OutcomeCrashed = "crashed" // the sandbox died under it (state lost)
	OutcomeFailed  = "failed"  // the host could not run it
)

// observed hands the router's records to an Observer.
type observed struct{ obs Observer }

func (o observed) BeginExecution(ctx context.Context, _ *router.Execution) context.Context {
	return ctx
}

func (o observed) ToolCall(_ context.Context, c *router.CallRecord) {
	o.obs.ToolCalled(c.Bridge, c.Outcome, c.Duration)
}

func (o observed) EndExecution(_ context.Context, e *router.ExecutionRecord) {
	outcome := OutcomeOK
	switch {
	case e.Outcome == "ok":
	case e.ErrorType == sandbox.ErrorTypeTimeout:
		outcome = OutcomeTimeout
	case e.ErrorType == sandbox.ErrorTypeCrash:
		outcome = OutcomeCrashed
	case e.ErrorType == "":
		outcome = OutcomeFailed
	default:
		outcome = OutcomeRaised
	}
	o.obs.Executed(e.Duration, outcome)
}

// recorders records to each of rs in turn.
type recorders []router.Recorder

func (rs recorders) BeginExecution(ctx context.Context, e *router.Execution) context.Context {
	for _, r := range rs {
		ctx = r.BeginExecution(ctx, e)
	}
	return ctx
}

func (rs recorders) ToolCall(ctx context.Context, c *router.CallRecord) {
	for _, r := range rs {
		r.ToolCall(ctx, c)
	}
}

func (rs recorders) EndExecution(ctx context.Context, e *router.ExecutionRecord) {
	for _, r := range rs {
		r.EndExecution(ctx, e)
	}
}

var (
	_ router.Recorder = observed{}
	_ router.Recorder = recorders(nil)
)
