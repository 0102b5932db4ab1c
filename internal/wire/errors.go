package wire

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// ErrUnavailable reports that the connection to a bridge is gone: its
// process crashed, was killed or has stopped (gRPC Unavailable, or the
// plugin's process has exited). The host restarts such a bridge.
var ErrUnavailable = errors.New("bridge unavailable")

// The errors that cross the protocol typed are the failed outcomes of a
// call on the Calls stream (bridge.proto): a decline, a ConfigError, or a
// ToolError, which any other error becomes (protocol.AsToolError; the
// table of its codes and their Python exceptions is protocol.Codes).
// errorOutcome and outcomeError are the one mapping between the Go errors
// and those outcomes. The unary RPCs (Run, Configure, ...), the Call
// stream and the host's callback service answer the same outcome as a gRPC
// status: outcomeStatus and statusOutcome are that encoding.

// errorOutcome is the CallsResponse, without an id, of a call that
// failed with err.
func errorOutcome(err error) *bridgev1.CallsResponse {
	var de *protocol.DeclineError
	var ce *protocol.ConfigError
	switch {
	case errors.As(err, &de):
		return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_Declined{Declined: validUTF8(de.Reason)}}
	case errors.As(err, &ce):
		return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_ConfigError{ConfigError: configErrorToPB(ce)}}
	default:
		return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_Error{Error: toolErrorToPB(protocol.AsToolError(err))}}
	}
}

// outcomeError is the error of a failed outcome, or nil for a result (or
// no outcome).
func outcomeError(out *bridgev1.CallsResponse) error {
	switch o := out.GetOutcome().(type) {
	case *bridgev1.CallsResponse_Declined:
		return &protocol.DeclineError{Reason: o.Declined}
	case *bridgev1.CallsResponse_ConfigError:
		return configErrorFromPB(o.ConfigError)
	case *bridgev1.CallsResponse_Error:
		return toolErrorFromPB(o.Error)
	}
	return nil
}

// outcomeStatus is a failed outcome as a gRPC status: a decline is
// FailedPrecondition with its reason, an error is Unknown with the error
// as the status's detail. Never the code of a transport failure
// (Unavailable, Canceled), for which a bridge's failure must not be
// mistaken.
func outcomeStatus(out *bridgev1.CallsResponse) *status.Status {
	var st *status.Status
	var err error
	switch o := out.GetOutcome().(type) {
	case *bridgev1.CallsResponse_Declined:
		return status.New(codes.FailedPrecondition, o.Declined)
	case *bridgev1.CallsResponse_ConfigError:
		st, err = status.New(codes.Unknown, outcomeError(out).Error()).WithDetails(o.ConfigError)
	case *bridgev1.CallsResponse_Error:
		st, err = status.New(codes.Unknown, o.Error.GetMessage()).WithDetails(o.Error)
	default:
		return status.New(codes.Unknown, "no failed outcome")
	}
	if err != nil { // not reached: a generated message always encodes
		return status.New(codes.Unknown, err.Error())
	}
	return st
}

// statusOutcome is the failed outcome a status carries, if it carries one.
func statusOutcome(st *status.Status) (*bridgev1.CallsResponse, bool) {
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *bridgev1.ConfigError:
			return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_ConfigError{ConfigError: d}}, true
		case *bridgev1.ToolError:
			return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_Error{Error: d}}, true
		}
	}
	if st.Code() == codes.FailedPrecondition && len(st.Details()) == 0 {
		return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_Declined{Declined: st.Message()}}, true
	}
	return nil, false
}

// errorStatus is the gRPC status that carries err typed, as an error: what
// an RPC of a bridge, or of the host's callback service, returns for err.
func errorStatus(err error) error {
	return outcomeStatus(errorOutcome(err)).Err()
}

// typedError returns the error that a status carries typed, if it carries
// one.
func typedError(err error) (error, bool) {
	st, _ := status.FromError(err) // Unknown, without details, for any other error
	out, ok := statusOutcome(st)
	if !ok {
		return nil, false
	}
	return outcomeError(out), true
}

// outcomeToPB is the CallsResponse of call id that ended with res or err:
// what Run answers, as a message.
func outcomeToPB(id uint64, res *protocol.CallToolResult, err error) *bridgev1.CallsResponse {
	if err == nil {
		return &bridgev1.CallsResponse{Id: id, Outcome: &bridgev1.CallsResponse_Result{Result: resultToPB(res)}}
	}
	out := errorOutcome(err)
	out.Id = id
	return out
}

// outcomeFromPB is the result or error of a CallsResponse, as the client
// returns them for a Run.
func outcomeFromPB(out *bridgev1.CallsResponse) (*protocol.CallToolResult, error) {
	if err := outcomeError(out); err != nil {
		return nil, err
	}
	return resultFromPB(out.GetResult()), nil
}
