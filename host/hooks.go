package host

import (
	"context"
	"encoding/json"

	"github.com/parselbox/parselbox/host/router"
)

// Hook observes a sandbox's executions and tool calls. Embed NopHook and
// override what you need. Hooks run in order. An error from PreExecute
// refuses the execution (its result says "Blocked by hook: ..."); an error
// from PreToolCall refuses the call, which Python sees as a PermissionError
// carrying the hook's message.
type Hook interface {
	PreExecute(ctx context.Context, code string) error
	PostExecute(ctx context.Context, code string, result *Result) error
	PreToolCall(ctx context.Context, call *ToolCall) error
	PostToolCall(ctx context.Context, call *ToolCall, result json.RawMessage) error
}

// ToolCall is a call from the sandbox to a tool: its full dotted Path, its
// Arguments as a JSON object, and the TaskID of a background call.
type ToolCall = router.Call

// NopHook implements Hook with methods that do nothing.
type NopHook struct{}

func (NopHook) PreExecute(context.Context, string) error                       { return nil }
func (NopHook) PostExecute(context.Context, string, *Result) error             { return nil }
func (NopHook) PreToolCall(context.Context, *ToolCall) error                   { return nil }
func (NopHook) PostToolCall(context.Context, *ToolCall, json.RawMessage) error { return nil }

// hookList runs the tool-call hooks in order for the router.
type hookList []Hook

func (hs hookList) PreToolCall(ctx context.Context, call *router.Call) error {
	for _, h := range hs {
		if err := h.PreToolCall(ctx, call); err != nil {
			return err
		}
	}
	return nil
}

func (hs hookList) PostToolCall(ctx context.Context, call *router.Call, result json.RawMessage) error {
	for _, h := range hs {
		if err := h.PostToolCall(ctx, call, result); err != nil {
			return err
		}
	}
	return nil
}

var (
	_ Hook         = NopHook{}
	_ router.Hooks = hookList(nil)
)
