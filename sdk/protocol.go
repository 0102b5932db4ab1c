package sdk

import "github.com/parselbox/parselbox/internal/protocol"

// The protocol's types, as bridges and hosts use them (they are defined in
// package internal/protocol, which both sides of the wire share).
type (
	// BridgeServer is what the host talks to. It is implemented by *Bridge,
	// by the host-side gRPC proxy of a plugin process, and by the host's
	// plugin manager, so that the host routes a call the same way wherever
	// the bridge lives.
	BridgeServer = protocol.BridgeServer
	// Shutdowner is implemented by bridges that want to clean up before
	// their process is stopped. It is called best-effort.
	Shutdowner = protocol.Shutdowner
	// Description is the answer to Describe.
	Description = protocol.Description
	// NamespaceInfo describes a nested namespace.
	NamespaceInfo = protocol.NamespaceInfo
	// ToolInfo describes one tool.
	ToolInfo = protocol.ToolInfo
	// ConfigureRequest carries a bridge's configuration block to it, and
	// the secrets it holds back to the host (AddSecrets).
	ConfigureRequest = protocol.ConfigureRequest
	// HostClient is the host's side of callbacks from a bridge.
	HostClient = protocol.HostClient
	// CallToolRequest is one call of a tool.
	CallToolRequest = protocol.CallToolRequest
	// EventSink receives the log lines and progress of a running call.
	EventSink = protocol.EventSink
	// CallToolResult is the outcome of a call.
	CallToolResult = protocol.CallToolResult
	// ToolError is a tool's failure, typed so that the sandbox can raise the
	// matching Python exception.
	ToolError = protocol.ToolError
	// ErrorCode classifies a tool failure.
	ErrorCode = protocol.ErrorCode
	// ConfigError is a configuration that does not fit: Key is the dotted
	// path of the offending key inside the bridge's `config` block ("" for
	// the block as a whole), Message what is wrong with it. DecodeConfig
	// returns it; a bridge's Configure returns it for its own checks, and
	// the host reports it with the file and line of the key.
	ConfigError = protocol.ConfigError
	// DeclineError is what Decline returns.
	DeclineError = protocol.DeclineError
)

// Decline is what a bridge's Configure returns when the bridge will not
// serve in this host, for a reason that is no configuration mistake: the
// host leaves the bridge's namespace out (it does not show up in the
// sandbox), logs reason, and starts without it.
func Decline(reason string) error { return &protocol.DeclineError{Reason: reason} }

// The codes and the Python exceptions they become in the sandbox.
const (
	CodeInternal        = protocol.CodeInternal        // RuntimeError
	CodeInvalidArgument = protocol.CodeInvalidArgument // ValueError
	CodePermission      = protocol.CodePermission      // PermissionError
	CodeTimeout         = protocol.CodeTimeout         // TimeoutError
	CodeNotFound        = protocol.CodeNotFound        // AttributeError (unknown tool)
	CodeCancelled       = protocol.CodeCancelled       // asyncio.CancelledError
	CodeUnavailable     = protocol.CodeUnavailable     // ConnectionError (bridge down)
)

// BytesKey is the key of the one-key JSON object {"__b64__": "<base64>"}
// that stands for bytes: a result holding one becomes Python bytes in the
// sandbox, and Python bytes passed as an argument arrive as a base64 string
// (the JSON form of a []byte in Go).
const BytesKey = protocol.BytesKey

// Errorf returns a *ToolError with the given code; a tool handler returns it
// to fail with that code. Any other error from a handler is CodeInternal.
func Errorf(code ErrorCode, format string, args ...any) error {
	return protocol.Errorf(code, format, args...)
}

// ErrorResult returns the failed result for err: a *ToolError (anywhere in
// err's chain) keeps its code, context.Canceled becomes CodeCancelled,
// context.DeadlineExceeded CodeTimeout, and anything else CodeInternal. The
// message is err's.
func ErrorResult(err error) *CallToolResult { return protocol.ErrorResult(err) }
