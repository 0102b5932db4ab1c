package protocol

import (
	"context"
	"errors"
	"fmt"
	"slices"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// ErrorCode classifies a tool failure.
type ErrorCode string

// The codes; Codes lists each with its protocol value and the Python
// exception it raises in the sandbox.
const (
	CodeInternal        ErrorCode = "internal"         // RuntimeError
	CodeInvalidArgument ErrorCode = "invalid_argument" // ValueError
	CodePermission      ErrorCode = "permission"       // PermissionError
	CodeTimeout         ErrorCode = "timeout"          // TimeoutError
	CodeNotFound        ErrorCode = "not_found"        // AttributeError (unknown tool)
	CodeCancelled       ErrorCode = "cancelled"        // asyncio.CancelledError
	CodeUnavailable     ErrorCode = "unavailable"      // ConnectionError (bridge down)
)

// CodeInfo is one row of the error table.
type CodeInfo struct {
	Code  ErrorCode
	Proto bridgev1.ErrorCode
	// Python is the exception the sandbox raises: a builtin name, or
	// "CancelledError" for asyncio.CancelledError.
	Python string
	// Aliases are other Python exceptions that map back to Code.
	Aliases []string
}

// Codes is the one table of error codes: the Go code, its value in the
// protocol, and the Python exception. Everything that converts a code looks
// here; the first row is what anything unknown becomes.
var Codes = []CodeInfo{
	{CodeInternal, bridgev1.ErrorCode_ERROR_CODE_INTERNAL, "RuntimeError", nil},
	{CodeInvalidArgument, bridgev1.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "ValueError", []string{"TypeError"}},
	{CodePermission, bridgev1.ErrorCode_ERROR_CODE_PERMISSION, "PermissionError", nil},
	{CodeTimeout, bridgev1.ErrorCode_ERROR_CODE_TIMEOUT, "TimeoutError", nil},
	{CodeNotFound, bridgev1.ErrorCode_ERROR_CODE_NOT_FOUND, "AttributeError", nil},
	{CodeCancelled, bridgev1.ErrorCode_ERROR_CODE_CANCELLED, "CancelledError", nil},
	{CodeUnavailable, bridgev1.ErrorCode_ERROR_CODE_UNAVAILABLE, "ConnectionError", nil},
}

// info returns the row of c; CodeInternal's for an unknown code.
func (c ErrorCode) info() *CodeInfo {
	for i := range Codes {
		if Codes[i].Code == c {
			return &Codes[i]
		}
	}
	return &Codes[0]
}

// Proto returns the code's protocol value (INTERNAL for an unknown code).
func (c ErrorCode) Proto() bridgev1.ErrorCode { return c.info().Proto }

// Python returns the Python exception the code raises in the sandbox
// (RuntimeError for an unknown code).
func (c ErrorCode) Python() string { return c.info().Python }

// CodeFromProto returns the code of a protocol value; CodeInternal for an
// unknown or unspecified one.
func CodeFromProto(p bridgev1.ErrorCode) ErrorCode {
	for _, ci := range Codes {
		if ci.Proto == p {
			return ci.Code
		}
	}
	return CodeInternal
}

// CodeFromPython returns the code of a Python exception's name;
// CodeInternal for any other exception.
func CodeFromPython(name string) ErrorCode {
	for _, ci := range Codes {
		if ci.Python == name || slices.Contains(ci.Aliases, name) {
			return ci.Code
		}
	}
	return CodeInternal
}

// ToolError is a tool's failure, typed so that the sandbox can raise the
// matching Python exception.
type ToolError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

func (e *ToolError) Error() string { return e.Message }

// Errorf returns a *ToolError with the given code; a tool handler returns it
// to fail with that code. Any other error from a handler is CodeInternal.
func Errorf(code ErrorCode, format string, args ...any) error {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsToolError returns the *ToolError for err: a *ToolError anywhere in
// err's chain keeps its code (CodeInternal when it has none),
// context.Canceled becomes CodeCancelled, context.DeadlineExceeded
// CodeTimeout, and anything else CodeInternal. The message is err's.
func AsToolError(err error) *ToolError {
	te := &ToolError{Code: CodeInternal, Message: err.Error()}
	var typed *ToolError
	switch {
	case errors.As(err, &typed):
		if typed.Code != "" {
			te.Code = typed.Code
		}
	case errors.Is(err, context.Canceled):
		te.Code = CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		te.Code = CodeTimeout
	}
	return te
}

// ErrorResult returns the failed result for err (see AsToolError).
func ErrorResult(err error) *CallToolResult {
	return &CallToolResult{Content: NullJSON, IsError: true, Error: AsToolError(err)}
}

// ConfigError is a bridge's configuration that does not fit: Key is the
// dotted path of the offending key inside the bridge's `config` block
// ("timeout", "headers.Authorization", "servers[2].url"; "" for the block
// as a whole), Message says what is wrong without repeating the key. It
// crosses the protocol as it is, so that the host can point at the line of
// the configuration file that holds the key.
type ConfigError struct {
	Key     string
	Message string
}

// ConfigKey is Key: the host's configuration loader finds the line of the
// file that set it through this method.
func (e *ConfigError) ConfigKey() string { return e.Key }

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return e.Message
	}
	return e.Key + ": " + e.Message
}

// DeclineError is a bridge's answer to Configure when it will not serve in
// this host at all, for a reason that is nobody's mistake (an MCP server
// that turns out to be this very Parselbox): the host leaves its namespace
// out, logs Reason, and goes on. It crosses the protocol as the gRPC code
// FailedPrecondition with Reason as the message.
type DeclineError struct {
	Reason string
}

func (e *DeclineError) Error() string { return "the bridge declined to serve: " + e.Reason }
