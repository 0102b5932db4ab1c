package sandbox

import "errors"

var (
	// ErrNoRuntime means the Deno + Pyodide runtime was not found.
	ErrNoRuntime = errors.New("sandbox runtime not found")
	// ErrClosed is returned by a sandbox that was closed.
	ErrClosed = errors.New("sandbox closed")
	// ErrExited means the sandbox process ended while a request was pending.
	ErrExited = errors.New("sandbox process exited")

	errExitedBeforeReady = errors.New("sandbox exited before becoming ready")
	// errSnapshotUnusable: the process was given the snapshot and ended
	// before it said that the snapshot was restored.
	errSnapshotUnusable = errors.New("the Pyodide memory snapshot did not load")
)

// Error types of failures that the host reports in Result.Error, next to
// the Python exception types that the sandbox reports itself.
const (
	// ErrorTypeTimeout: the execution did not stop when interrupted at its
	// deadline, so the process was killed and restarted (state lost).
	ErrorTypeTimeout = "TimeoutError"
	// ErrorTypeCrash: the sandbox process died (killed, out of memory, a
	// fatal runtime error), or was killed because an interrupted execution
	// did not stop within the grace period, and was restarted (state lost).
	ErrorTypeCrash = "SandboxCrashed"
	// ErrorTypeResultTooLarge: the execution's result was over
	// max_result_size (or max_message_size) and was not returned.
	ErrorTypeResultTooLarge = "ResultTooLarge"
)

// RemoteError is an error a Handler returns to make the sandbox raise a
// specific Python exception: Type is the name of a Python builtin exception
// ("PermissionError", "ValueError", ...); an unknown name raises RuntimeError.
type RemoteError struct {
	Type    string
	Message string
}

func (e *RemoteError) Error() string { return e.Type + ": " + e.Message }
