package wire

import (
	"encoding/json"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
	"github.com/parselbox/parselbox/sdk"
)

// The host side's conversions between the protocol's types and the sdk
// types. The bridge side's are in package sdk (unexported).

var nullJSON = json.RawMessage("null")

func describeFromPB(d *bridgev1.DescribeResponse) *sdk.Description {
	out := &sdk.Description{
		Name:        d.GetName(),
		Version:     d.GetVersion(),
		Description: d.GetDescription(),
		Tools:       make([]sdk.ToolInfo, 0, len(d.GetTools())),
	}
	for _, ns := range d.GetNamespaces() {
		out.Namespaces = append(out.Namespaces, sdk.NamespaceInfo{Path: ns.GetPath(), Description: ns.GetDescription()})
	}
	for _, t := range d.GetTools() {
		out.Tools = append(out.Tools, sdk.ToolInfo{
			Name:         t.GetName(),
			Description:  t.GetDescription(),
			InputSchema:  rawOrNil(t.GetInputSchema()),
			OutputSchema: rawOrNil(t.GetOutputSchema()),
			Params:       t.GetParams(),
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

func resultFromPB(r *bridgev1.CallResult) *sdk.CallToolResult {
	out := &sdk.CallToolResult{Content: json.RawMessage(r.GetContent()), IsError: r.GetIsError()}
	if len(out.Content) == 0 {
		out.Content = nullJSON
	}
	if e := r.GetError(); e != nil {
		out.Error = &sdk.ToolError{Code: sdk.ErrorCode(e.GetCode().Slug()), Message: e.GetMessage()}
	}
	return out
}

func resultToPB(r *sdk.CallToolResult) *bridgev1.CallResult {
	out := &bridgev1.CallResult{Content: r.Content, IsError: r.IsError}
	if len(out.Content) == 0 {
		out.Content = nullJSON
	}
	if r.Error != nil {
		out.Error = &bridgev1.ToolError{Code: bridgev1.CodeFromSlug(string(r.Error.Code)), Message: r.Error.Message}
	}
	return out
}
