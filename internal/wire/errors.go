package wire

import "errors"

// ErrUnavailable reports that the connection to a bridge is gone: its
// process crashed, was killed or has stopped (gRPC Unavailable, or the
// plugin's process has exited). The host restarts such a bridge.
var ErrUnavailable = errors.New("bridge unavailable")

// errNoServer is returned by Plugin.GRPCServer: the host side serves no
// bridge.
var errNoServer = errors.New("wire: the host side of a bridge serves nothing; use sdk.Serve in the bridge")
