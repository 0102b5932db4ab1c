package bridges

import (
	"errors"

	"github.com/parselbox/parselbox/sdk"
)

var (
	// ErrBridgeShutdown reports that a bridge's process is gone: it crashed,
	// was killed, or the manager has been closed. gRPC Unavailable from a
	// plugin maps to it. Errors that wrap it are also a *sdk.ToolError with
	// sdk.CodeUnavailable (errors.As), so that the sandbox raises a
	// ConnectionError.
	ErrBridgeShutdown = errors.New("bridge is shut down")
	// ErrInvalidConfig reports a bridge configuration that the manager or
	// the bridge itself rejected.
	ErrInvalidConfig = errors.New("invalid configuration")
	// ErrPluginNotFound reports that no binary was found for a plugin name.
	ErrPluginNotFound = errors.New("plugin not found")
	// ErrChecksumMismatch reports that a plugin binary does not have the
	// configured sha256.
	ErrChecksumMismatch = errors.New("sha256 mismatch")
	// ErrIncompatible reports a plugin built for another version of the
	// bridge protocol (or of go-plugin's).
	ErrIncompatible = errors.New("incompatible plugin protocol version")
	// ErrClosed reports a call of a closed Manager.
	ErrClosed = errors.New("plugin manager is closed")
)

// unavailableError is the error of a call to a bridge whose process is gone.
// It wraps ErrBridgeShutdown, a *sdk.ToolError with sdk.CodeUnavailable (both
// carrying the same message), and the cause.
type unavailableError struct {
	msg   string
	cause error
}

func (e *unavailableError) Error() string { return e.msg }

func (e *unavailableError) Unwrap() []error {
	errs := []error{ErrBridgeShutdown, &sdk.ToolError{Code: sdk.CodeUnavailable, Message: e.msg}}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}
