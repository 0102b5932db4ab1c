package host

import "context"

// Hook observes a sandbox's executions and tool calls. Embed NopHook and
// override what you need. Hooks run in order; an error from a Pre hook
// refuses the execution or call: a refused call reaches Python as a
// PermissionError carrying the hook's message.
type Hook interface {
	PreExecute(ctx context.Context, code string) error
	PostExecute(ctx context.Context, code string, result *Result) error
	PreToolCall(ctx context.Context, call *ToolCall) error
	PostToolCall(ctx context.Context, call *ToolCall, result any) error
}

// NopHook implements Hook with methods that do nothing.
type NopHook struct{}

func (NopHook) PreExecute(context.Context, string) error           { return nil }
func (NopHook) PostExecute(context.Context, string, *Result) error { return nil }
func (NopHook) PreToolCall(context.Context, *ToolCall) error       { return nil }
func (NopHook) PostToolCall(context.Context, *ToolCall, any) error { return nil }

// ToolCall is a call from the sandbox to a tool.
type ToolCall struct {
	// Path is the tool's full dotted path: "namespace.tool".
	Path string
	// Arguments are the named arguments, as JSON.
	Arguments []byte
	// TaskID is set for background calls (ns.tool.task()).
	TaskID string
}

var _ Hook = NopHook{}
