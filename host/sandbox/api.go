package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// APIAnswer is the answer of an @api handler (runner/features/api.ts).
type APIAnswer struct {
	// Status is the HTTP status: 200, 400 (invalid JSON body), 404 (no
	// handler), 500 (the handler raised, timed out, or answered no JSON).
	Status int `json:"status"`
	// Body is the JSON answer: the handler's value, or {"error", ...}.
	Body json.RawMessage `json:"body"`
	// Stdout and Stderr are what the handler printed when no execution was
	// running (one that runs takes it).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
}

// API sends one request of the served app (host/serve) to the @api router
// in the sandbox: the protocol's api method, not an execution. It runs
// beside a running execution (interleaved where either waits), does not
// wait for one, and takes nothing from its result: the files the handler
// writes are in the files of the execution running or of the next one.
// Timeout bounds the handler (zero or less: no limit): at the deadline the
// runner answers 500 and cancels it; the host gives up Grace later. request
// is JSON (serve.Request).
func (s *Supervisor) API(ctx context.Context, request json.RawMessage, timeout time.Duration) (*APIAnswer, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout+s.opts.Grace,
			fmt.Errorf("the sandbox did not answer within %s", fmtSeconds(timeout+s.opts.Grace)))
		defer cancel()
	}
	p, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	params := struct {
		Request json.RawMessage `json:"request"`
		Timeout float64         `json:"timeout,omitempty"`
	}{request, max(timeout, 0).Seconds()}
	raw, err := p.request(ctx, "api", params)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("sandbox api: %w", err)
	}
	var a APIAnswer
	if err := json.Unmarshal(raw, &a); err != nil || a.Status < 100 || a.Status > 599 {
		return nil, fmt.Errorf("sandbox api: a malformed answer: %.200s", raw)
	}
	if len(a.Body) == 0 {
		a.Body = json.RawMessage("null")
	}
	return &a, nil
}
