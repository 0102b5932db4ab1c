package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// Every conversion between the protocol's Go types (package protocol) and
// its generated ones, for both sides.

func describeToPB(d *protocol.Description) *bridgev1.DescribeResponse {
	if d == nil {
		return &bridgev1.DescribeResponse{}
	}
	out := &bridgev1.DescribeResponse{
		Name:        d.Name,
		Version:     d.Version,
		Description: validUTF8(d.Description),
		Namespaces:  make([]*bridgev1.Namespace, 0, len(d.Namespaces)),
		Tools:       make([]*bridgev1.Tool, 0, len(d.Tools)),
	}
	for _, ns := range d.Namespaces {
		out.Namespaces = append(out.Namespaces, &bridgev1.Namespace{Path: ns.Path, Description: validUTF8(ns.Description)})
	}
	for _, t := range d.Tools {
		out.Tools = append(out.Tools, &bridgev1.Tool{
			Name:         t.Name,
			Description:  validUTF8(t.Description),
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Params:       t.Params,
			Variadic:     t.Variadic,
			ReadOnly:     t.ReadOnly,
		})
	}
	return out
}

func describeFromPB(d *bridgev1.DescribeResponse) *protocol.Description {
	out := &protocol.Description{
		Name:        d.GetName(),
		Version:     d.GetVersion(),
		Description: d.GetDescription(),
		Tools:       make([]protocol.ToolInfo, 0, len(d.GetTools())),
	}
	for _, ns := range d.GetNamespaces() {
		out.Namespaces = append(out.Namespaces, protocol.NamespaceInfo{Path: ns.GetPath(), Description: ns.GetDescription()})
	}
	for _, t := range d.GetTools() {
		out.Tools = append(out.Tools, protocol.ToolInfo{
			Name:         t.GetName(),
			Description:  t.GetDescription(),
			InputSchema:  rawOrNil(t.GetInputSchema()),
			OutputSchema: rawOrNil(t.GetOutputSchema()),
			Params:       t.GetParams(),
			Variadic:     t.GetVariadic(),
			ReadOnly:     t.GetReadOnly(),
		})
	}
	return out
}

func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

func resultToPB(r *protocol.CallToolResult) *bridgev1.CallResult {
	if r == nil {
		return &bridgev1.CallResult{Content: protocol.NullJSON}
	}
	out := &bridgev1.CallResult{Content: r.Content, IsError: r.IsError}
	if len(out.Content) == 0 {
		out.Content = protocol.NullJSON
	}
	if r.Error != nil {
		out.Error = toolErrorToPB(r.Error)
	}
	return out
}

func resultFromPB(r *bridgev1.CallResult) *protocol.CallToolResult {
	out := &protocol.CallToolResult{Content: json.RawMessage(r.GetContent()), IsError: r.GetIsError()}
	if len(out.Content) == 0 {
		out.Content = protocol.NullJSON
	}
	if e := r.GetError(); e != nil {
		out.Error = toolErrorFromPB(e)
	}
	return out
}

func toolErrorToPB(e *protocol.ToolError) *bridgev1.ToolError {
	return &bridgev1.ToolError{Code: e.Code.Proto(), Message: validUTF8(e.Message)}
}

func toolErrorFromPB(e *bridgev1.ToolError) *protocol.ToolError {
	return &protocol.ToolError{Code: protocol.CodeFromProto(e.GetCode()), Message: e.GetMessage()}
}

// validUTF8 replaces invalid UTF-8, which protobuf string fields refuse (a
// log line or message with raw bytes would otherwise fail the whole call).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// errorStatus turns an error of a bridge (or of the host's callback
// service) into a gRPC status carrying it typed: a *protocol.ConfigError as
// a ConfigError detail, anything else as a ToolError (see
// protocol.AsToolError for its code). The status code is Unknown whatever
// the error, so that a failure reported by a bridge is never mistaken for a
// transport failure (Unavailable, Canceled) of the connection.
func errorStatus(err error) error {
	var de *protocol.DeclineError
	if errors.As(err, &de) {
		return status.New(codes.FailedPrecondition, validUTF8(de.Reason)).Err()
	}
	var ce *protocol.ConfigError
	if errors.As(err, &ce) {
		st := status.New(codes.Unknown, validUTF8(ce.Error()))
		if d, e := st.WithDetails(&bridgev1.ConfigError{Key: validUTF8(ce.Key), Message: validUTF8(ce.Message)}); e == nil {
			st = d
		}
		return st.Err()
	}
	te := protocol.AsToolError(err)
	st := status.New(codes.Unknown, validUTF8(te.Message))
	if d, e := st.WithDetails(toolErrorToPB(te)); e == nil {
		st = d
	}
	return st.Err()
}

// outcomeToPB is the CallsResponse of call id that ended with res or err:
// what Run answers, as a message (errorStatus's cases).
func outcomeToPB(id uint64, res *protocol.CallToolResult, err error) *bridgev1.CallsResponse {
	out := &bridgev1.CallsResponse{Id: id}
	var de *protocol.DeclineError
	var ce *protocol.ConfigError
	switch {
	case err == nil:
		out.Outcome = &bridgev1.CallsResponse_Result{Result: resultToPB(res)}
	case errors.As(err, &de):
		out.Outcome = &bridgev1.CallsResponse_Declined{Declined: validUTF8(de.Reason)}
	case errors.As(err, &ce):
		out.Outcome = &bridgev1.CallsResponse_ConfigError{ConfigError: &bridgev1.ConfigError{Key: validUTF8(ce.Key), Message: validUTF8(ce.Message)}}
	default:
		out.Outcome = &bridgev1.CallsResponse_Error{Error: toolErrorToPB(protocol.AsToolError(err))}
	}
	return out
}

// outcomeFromPB is the result or error of a CallsResponse, as the client
// returns them for a Run (typedError's and rpcError's cases).
func outcomeFromPB(out *bridgev1.CallsResponse) (*protocol.CallToolResult, error) {
	switch o := out.GetOutcome().(type) {
	case *bridgev1.CallsResponse_Error:
		return nil, toolErrorFromPB(o.Error)
	case *bridgev1.CallsResponse_Declined:
		return nil, &protocol.DeclineError{Reason: o.Declined}
	case *bridgev1.CallsResponse_ConfigError:
		return nil, &protocol.ConfigError{Key: o.ConfigError.GetKey(), Message: o.ConfigError.GetMessage()}
	}
	return resultFromPB(out.GetResult()), nil
}

// typedError returns the error that a status carries typed (a
// *protocol.ConfigError or a *protocol.ToolError), if it carries one.
func typedError(err error) (error, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, false
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *bridgev1.ConfigError:
			return &protocol.ConfigError{Key: d.GetKey(), Message: d.GetMessage()}, true
		case *bridgev1.ToolError:
			return toolErrorFromPB(d), true
		}
	}
	return nil, false
}
