package wire

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// ErrUnavailable reports that the connection to a bridge is gone: its
// process crashed, was killed or has stopped (gRPC Unavailable, or the
// plugin's process has exited). The host restarts such a bridge.
var ErrUnavailable = errors.New("bridge unavailable")

// errorKinds is the one table of the errors that cross the protocol typed.
// A row is one kind: its Go type and its two encodings, as a gRPC status
// (what Run, Call, the unary RPCs and the host's CallTool answer) and as
// the outcome of a call on the Calls stream (what Run would have
// answered, bridge.proto says). An error of a kind returned on one side is
// returned on the other as it was, whichever way it went.
//
// Going out, the rows are tried in order; the last, a ToolError, takes
// any error (protocol.AsToolError). protocol.Codes is the table of a
// ToolError's codes, their protocol values and Python exceptions. The
// status code is Unknown unless a row needs another, so that a failure
// that a bridge reports is never mistaken for a transport failure
// (Unavailable, Canceled) of the connection.
var errorKinds = []errorKind{
	kind[*protocol.DeclineError]{
		name: "decline",
		as:   errorsAs[*protocol.DeclineError],
		status: func(e *protocol.DeclineError) *status.Status {
			return status.New(codes.FailedPrecondition, validUTF8(e.Reason))
		},
		ofStatus: func(st *status.Status) (*protocol.DeclineError, bool) {
			if st.Code() != codes.FailedPrecondition || len(st.Details()) > 0 {
				return nil, false
			}
			return &protocol.DeclineError{Reason: st.Message()}, true
		},
		outcome: func(e *protocol.DeclineError) *bridgev1.CallsResponse {
			return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_Declined{Declined: validUTF8(e.Reason)}}
		},
		ofOutcome: func(out *bridgev1.CallsResponse) (*protocol.DeclineError, bool) {
			o, ok := out.GetOutcome().(*bridgev1.CallsResponse_Declined)
			if !ok {
				return nil, false
			}
			return &protocol.DeclineError{Reason: o.Declined}, true
		},
	},
	kind[*protocol.ConfigError]{
		name: "config error",
		as:   errorsAs[*protocol.ConfigError],
		status: func(e *protocol.ConfigError) *status.Status {
			return withDetail(status.New(codes.Unknown, validUTF8(e.Error())), configErrorToPB(e))
		},
		ofStatus: func(st *status.Status) (*protocol.ConfigError, bool) {
			d, ok := detail[*bridgev1.ConfigError](st)
			if !ok {
				return nil, false
			}
			return configErrorFromPB(d), true
		},
		outcome: func(e *protocol.ConfigError) *bridgev1.CallsResponse {
			return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_ConfigError{ConfigError: configErrorToPB(e)}}
		},
		ofOutcome: func(out *bridgev1.CallsResponse) (*protocol.ConfigError, bool) {
			o, ok := out.GetOutcome().(*bridgev1.CallsResponse_ConfigError)
			if !ok {
				return nil, false
			}
			return configErrorFromPB(o.ConfigError), true
		},
	},
	kind[*protocol.ToolError]{
		name: "tool error",
		as:   func(err error) (*protocol.ToolError, bool) { return protocol.AsToolError(err), true },
		status: func(e *protocol.ToolError) *status.Status {
			return withDetail(status.New(codes.Unknown, validUTF8(e.Message)), toolErrorToPB(e))
		},
		ofStatus: func(st *status.Status) (*protocol.ToolError, bool) {
			d, ok := detail[*bridgev1.ToolError](st)
			if !ok {
				return nil, false
			}
			return toolErrorFromPB(d), true
		},
		outcome: func(e *protocol.ToolError) *bridgev1.CallsResponse {
			return &bridgev1.CallsResponse{Outcome: &bridgev1.CallsResponse_Error{Error: toolErrorToPB(e)}}
		},
		ofOutcome: func(out *bridgev1.CallsResponse) (*protocol.ToolError, bool) {
			o, ok := out.GetOutcome().(*bridgev1.CallsResponse_Error)
			if !ok {
				return nil, false
			}
			return toolErrorFromPB(o.Error), true
		},
	},
}

// errorStatus is the gRPC status that carries err typed (see errorKinds),
// as an error: what an RPC of a bridge, or of the host's callback service,
// returns for err.
func errorStatus(err error) error {
	st, _ := kindOf(err).statusOf(err)
	return st.Err()
}

// typedError returns the error that a status carries typed (see
// errorKinds), if it carries one.
func typedError(err error) (error, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, false
	}
	for _, k := range errorKinds {
		if typed, ok := k.errorOfStatus(st); ok {
			return typed, true
		}
	}
	return nil, false
}

// outcomeToPB is the CallsResponse of call id that ended with res or err:
// what Run answers, as a message.
func outcomeToPB(id uint64, res *protocol.CallToolResult, err error) *bridgev1.CallsResponse {
	if err == nil {
		return &bridgev1.CallsResponse{Id: id, Outcome: &bridgev1.CallsResponse_Result{Result: resultToPB(res)}}
	}
	out, _ := kindOf(err).outcomeOf(err)
	out.Id = id
	return out
}

// outcomeFromPB is the result or error of a CallsResponse, as the client
// returns them for a Run.
func outcomeFromPB(out *bridgev1.CallsResponse) (*protocol.CallToolResult, error) {
	for _, k := range errorKinds {
		if typed, ok := k.errorOfOutcome(out); ok {
			return nil, typed
		}
	}
	return resultFromPB(out.GetResult()), nil
}

// kindOf is the row of errorKinds that err goes out as.
func kindOf(err error) errorKind {
	for _, k := range errorKinds {
		if k.is(err) {
			return k
		}
	}
	return errorKinds[len(errorKinds)-1] // not reached: the last takes any error
}

// errorKind is a row of errorKinds, whatever its Go type.
type errorKind interface {
	kindName() string
	is(err error) bool
	statusOf(err error) (*status.Status, bool)
	outcomeOf(err error) (*bridgev1.CallsResponse, bool)
	errorOfStatus(st *status.Status) (error, bool)
	errorOfOutcome(out *bridgev1.CallsResponse) (error, bool)
}

// kind is the row of the errors of type E.
type kind[E error] struct {
	name string
	// as returns err's error of this kind, if it has one (in its chain).
	as func(err error) (E, bool)
	// status and outcome are the encodings of an error of this kind;
	// ofStatus and ofOutcome decode them, and report false for another
	// kind's.
	status    func(E) *status.Status
	ofStatus  func(*status.Status) (E, bool)
	outcome   func(E) *bridgev1.CallsResponse // the outcome only, without an id
	ofOutcome func(*bridgev1.CallsResponse) (E, bool)
}

func (k kind[E]) kindName() string { return k.name }

func (k kind[E]) is(err error) bool {
	_, ok := k.as(err)
	return ok
}

func (k kind[E]) statusOf(err error) (*status.Status, bool) {
	e, ok := k.as(err)
	if !ok {
		return nil, false
	}
	return k.status(e), true
}

func (k kind[E]) outcomeOf(err error) (*bridgev1.CallsResponse, bool) {
	e, ok := k.as(err)
	if !ok {
		return nil, false
	}
	return k.outcome(e), true
}

func (k kind[E]) errorOfStatus(st *status.Status) (error, bool) {
	e, ok := k.ofStatus(st)
	if !ok {
		return nil, false
	}
	return e, true
}

func (k kind[E]) errorOfOutcome(out *bridgev1.CallsResponse) (error, bool) {
	e, ok := k.ofOutcome(out)
	if !ok {
		return nil, false
	}
	return e, true
}

// errorsAs is errors.As for an error type E.
func errorsAs[E error](err error) (E, bool) {
	var e E
	ok := errors.As(err, &e)
	return e, ok
}

// withDetail returns st with d in its details (st alone if d does not
// encode, which a generated message always does).
func withDetail(st *status.Status, d protoadapt.MessageV1) *status.Status {
	if with, err := st.WithDetails(d); err == nil {
		return with
	}
	return st
}

// detail returns the first detail of st of type D.
func detail[D proto.Message](st *status.Status) (D, bool) {
	for _, d := range st.Details() {
		if d, ok := d.(D); ok {
			return d, true
		}
	}
	var zero D
	return zero, false
}
