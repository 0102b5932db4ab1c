package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

// protocolMRTR is the first MCP version in which a server must not send
// the client requests of its own while it serves one: it asks for input by
// returning InputRequests, and the client calls again with the answers
// (multi round trip, SEP-2322).
const protocolMRTR = "2026-07-28"

// approvalKey names the input request of an approval.
const approvalKey = "approve"

// approvalSchema is the form the user answers: allow or not, and why.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"allow":{"type":"boolean","title":"Allow","description":"Allow this tool call","default":true},` +
	`"reason":{"type":"string","title":"Reason","description":"Why not (shown to the agent)"}}}`)

// approver is the PreToolCall hook of the sandboxes of a server started
// with Options.Elicit: it asks the client of the session that holds the
// sandbox to approve each call.
type approver struct {
	host.NopHook
	sess atomic.Pointer[session]
}

func (a *approver) bind(s *session) { a.sess.Store(s) }

func (a *approver) PreToolCall(ctx context.Context, call *host.ToolCall) error {
	s := a.sess.Load()
	if s == nil {
		return denial("Denied: " + call.Path + " was called by a sandbox no MCP session holds")
	}
	return s.approve(ctx, call)
}

// ask is a tool call waiting for approval.
type ask struct {
	call   *host.ToolCall
	params *mcp.ElicitParams
	reply  chan error      // buffered: the first answer wins
	gone   context.Context // done when the call stops waiting
	once   sync.Once
}

func (a *ask) answer(err error) {
	a.once.Do(func() { a.reply <- err })
}

// suspension is an execution waiting, in a tool call, for the client to
// call again with the answer to an approval (multi round trip).
type suspension struct {
	ex  *execution
	ask *ask
}

// canElicit reports whether the client of a request can answer
// elicitations: per request on the sessionless protocol, per session
// before.
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}

// approve asks the client to approve a call the sandbox makes during an
// execution, and waits for the answer. A refusal is an error, which Python
// sees as a PermissionError with its text.
func (s *session) approve(ctx context.Context, call *host.ToolCall) error {
	s.mu.Lock()
	ex := s.running
	s.mu.Unlock()
	if ex == nil {
		// A background task calling after its execution ended: there is
		// no request in progress to ask through.
		return denial(fmt.Sprintf("Denied: %s was called outside of an execute_code call, so the user cannot be asked to approve it", call.Path))
	}
	if !ex.canElicit {
		s.warnNoElicit.Do(func() {
			s.log.Warn("the MCP client cannot answer elicitations: tool calls run without approval (--elicit has no effect)")
		})
		return nil
	}
	gone, stop := context.WithCancel(ctx)
	defer stop()
	a := &ask{call: call, params: elicitParams(call), reply: make(chan error, 1), gone: gone}
	select {
	case ex.asks <- a:
	case <-ex.done:
		return denial("Denied: the execution ended before " + call.Path + " was approved")
	case <-ctx.Done():
		return denial("Denied: " + call.Path + " was interrupted before it was approved")
	}
	var expired <-chan time.Time // never, without a timeout
	if d := s.opts.Settings.ApprovalTimeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	}
	select {
	case err := <-a.reply:
		if err != nil {
			s.log.Info("tool call refused", logTool, call.Path, logReason, err)
		}
		return err
	case <-ctx.Done():
		return denial("Denied: " + call.Path + " was interrupted while waiting for approval")
	case <-expired:
		return denial(fmt.Sprintf("Denied: no answer to the approval of %s within %s", call.Path, s.opts.Settings.ApprovalTimeout))
	}
}

// elicitParams is the approval request for a call: a readable question,
// then the call as JSON.
func elicitParams(call *host.ToolCall) *mcp.ElicitParams {
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	const maxArgs = 2000
	event := map[string]any{"hook": "pre_tool_call", "tool": call.Path, "arguments": args}
	if len(args) > maxArgs {
		event["arguments"] = string(args[:maxArgs]) + "...(truncated)"
	}
	if call.TaskID != "" {
		event["task_id"] = call.TaskID
	}
	return &mcp.ElicitParams{
		Mode:            "form",
		Message:         fmt.Sprintf("Parselbox: allow the sandbox to call %s?\n%s", call.Path, marshal(event)),
		RequestedSchema: approvalSchema,
	}
}

// decide reads the user's answer: accept (with allow not false) approves;
// anything else refuses.
func decide(path string, res *mcp.ElicitResult) error {
	if res == nil {
		return denial("Denied: the user did not answer the approval of " + path)
	}
	if res.Action != "accept" {
		return denial(fmt.Sprintf("Denied: the user declined the call to %s (%s)", path, res.Action))
	}
	if allow, ok := res.Content["allow"].(bool); ok && !allow {
		if reason, _ := res.Content["reason"].(string); reason != "" {
			return denial("Denied: " + reason)
		}
		return denial("Denied: the user did not allow the call to " + path)
	}
	return nil
}

// suspend parks an execution that waits for an approval and returns the
// request state the client echoes when it calls again.
func (s *session) suspend(ex *execution, a *ask) string {
	state := rand.Text()
	s.mu.Lock()
	s.suspended[state] = &suspension{ex: ex, ask: a}
	s.mu.Unlock()
	return state
}

// resume continues a suspended execution with the client's answer. (If
// the approval timed out meanwhile, the execution went on without it, and
// this call gets its result.)
func (s *session) resume(ctx context.Context, req *mcp.CallToolRequest, state string) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	sp := s.suspended[state]
	delete(s.suspended, state)
	s.mu.Unlock()
	if sp == nil {
		return toolResult(failure("this approval is no longer awaited (it timed out, or a newer call replaced it); " +
			"run the code again")), nil
	}
	res, _ := req.Params.InputResponses[approvalKey].(*mcp.ElicitResult)
	sp.ask.answer(decide(sp.ask.call.Path, res))
	return s.await(ctx, req, sp.ex, func() {})
}

// abandonSuspended refuses the approvals still waiting for the client's
// next call, when the client makes a new call instead: their executions
// end and the new one can run.
func (s *session) abandonSuspended() {
	s.mu.Lock()
	suspended := s.suspended
	s.suspended = map[string]*suspension{}
	s.mu.Unlock()
	for _, sp := range suspended {
		sp.ask.answer(denial("Denied: the client made a new call instead of answering the approval of " + sp.ask.call.Path))
	}
}
