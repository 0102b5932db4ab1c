package sdk

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// The bridge side's conversions between the sdk types and the protocol's.
// The host side's are in package internal/wire (which imports this package,
// so they cannot share code without putting protocol types on the SDK's
// surface).

func describeToPB(d *Description) *bridgev1.DescribeResponse {
	if d == nil {
		return &bridgev1.DescribeResponse{}
	}
	out := &bridgev1.DescribeResponse{
		Name:        d.Name,
		Version:     d.Version,
		Description: d.Description,
		Namespaces:  make([]*bridgev1.Namespace, 0, len(d.Namespaces)),
		Tools:       make([]*bridgev1.Tool, 0, len(d.Tools)),
	}
	for _, ns := range d.Namespaces {
		out.Namespaces = append(out.Namespaces, &bridgev1.Namespace{Path: ns.Path, Description: ns.Description})
	}
	for _, t := range d.Tools {
		out.Tools = append(out.Tools, &bridgev1.Tool{
			Name:         t.Name,
			Description:  t.Description,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
			Params:       t.Params,
		})
	}
	return out
}

func resultToPB(r *CallToolResult) *bridgev1.CallResult {
	out := &bridgev1.CallResult{Content: r.Content, IsError: r.IsError}
	if len(out.Content) == 0 {
		out.Content = nullJSON
	}
	if r.Error != nil {
		out.Error = &bridgev1.ToolError{Code: bridgev1.CodeFromSlug(string(r.Error.Code)), Message: validUTF8(r.Error.Message)}
	}
	return out
}

// validUTF8 replaces invalid UTF-8, which protobuf string fields refuse (a
// log line or message with raw bytes would otherwise fail the whole call).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func resultFromPB(r *bridgev1.CallResult) *CallToolResult {
	out := &CallToolResult{Content: json.RawMessage(r.GetContent()), IsError: r.GetIsError()}
	if len(out.Content) == 0 {
		out.Content = nullJSON
	}
	if e := r.GetError(); e != nil {
		out.Error = &ToolError{Code: ErrorCode(e.GetCode().Slug()), Message: e.GetMessage()}
	}
	return out
}

// toStatus turns an error returned by a bridge into a gRPC status carrying a
// ToolError (see ErrorResult for the codes).
func toStatus(err error) error {
	te := ErrorResult(err).Error
	return bridgev1.ToolErrorStatus(bridgev1.CodeFromSlug(string(te.Code)), te.Message)
}

// fromStatus turns the error of an RPC to the host into a *ToolError when it
// carries one.
func fromStatus(err error) error {
	if te, ok := bridgev1.ToolErrorFromStatus(err); ok {
		return &ToolError{Code: ErrorCode(te.GetCode().Slug()), Message: te.GetMessage()}
	}
	return err
}
