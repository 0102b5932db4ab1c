package mcpserver

import "errors"

var (
	// ErrClosed is returned by a Server that was closed.
	ErrClosed = errors.New("mcp server closed")
	// ErrTooManySessions refuses a session beyond Options.MaxSessions.
	ErrTooManySessions = errors.New("too many sessions")
	// ErrDraining refuses a new session while the server drains.
	ErrDraining = errors.New("draining: this host takes no new sessions")
	// ErrNeedToken refuses to serve HTTP beyond loopback without a token.
	ErrNeedToken = errors.New("serving beyond loopback needs an auth token")
)

// denial is a refused tool call; Python sees its text in a PermissionError.
type denial string

func (d denial) Error() string { return string(d) }
