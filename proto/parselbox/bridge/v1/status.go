package bridgev1

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ToolErrorStatus returns a gRPC status error that carries a ToolError in its
// details. Its gRPC code is Unknown whatever the ToolError's code, so that a
// failure reported by a bridge is never mistaken for a transport failure
// (Unavailable, Canceled) of the connection.
func ToolErrorStatus(code ErrorCode, message string) error {
	message = strings.ToValidUTF8(message, "\uFFFD") // protobuf strings must be UTF-8
	st := status.New(codes.Unknown, message)
	if withDetails, err := st.WithDetails(&ToolError{Code: code, Message: message}); err == nil {
		st = withDetails
	}
	return st.Err()
}

// ToolErrorFromStatus returns the ToolError carried by a gRPC status error,
// if it carries one.
func ToolErrorFromStatus(err error) (*ToolError, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, false
	}
	for _, d := range st.Details() {
		if te, ok := d.(*ToolError); ok {
			return te, true
		}
	}
	return nil, false
}
