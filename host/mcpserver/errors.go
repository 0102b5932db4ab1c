package mcpserver

import (
	"errors"
	"fmt"
)

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

// errRefusedDraining is ErrDraining as a client that would open a session
// gets it.
var errRefusedDraining = fmt.Errorf("parselbox: %w (it is shutting down): start the session again, on another host", ErrDraining)

// denial is a refused tool call; Python sees its text in a PermissionError.
type denial string

func (d denial) Error() string { return string(d) }
