package wire

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// Every conversion between the protocol's Go types (package protocol) and
// its generated ones, for both sides; errors.go has the errors'.

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

// object is raw, or {} for none: the JSON of absent arguments or
// configuration.
func object(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(`{}`)
	}
	return raw
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

func configErrorToPB(e *protocol.ConfigError) *bridgev1.ConfigError {
	return &bridgev1.ConfigError{Key: validUTF8(e.Key), Message: validUTF8(e.Message)}
}

func configErrorFromPB(e *bridgev1.ConfigError) *protocol.ConfigError {
	return &protocol.ConfigError{Key: e.GetKey(), Message: e.GetMessage()}
}

// validUTF8 replaces invalid UTF-8, which protobuf string fields refuse (a
// log line or message with raw bytes would otherwise fail the whole call).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
