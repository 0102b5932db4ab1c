package wire

import "errors"

// ErrUnavailable reports that the connection to a bridge is gone: its
// process crashed, was killed or has stopped (gRPC Unavailable, or the
// plugin's process has exited). The host restarts such a bridge.
var ErrUnavailable = errors.New("bridge unavailable")
