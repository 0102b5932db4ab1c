package sdk

import (
	"context"
	"encoding/json"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// hostClient is the bridge side of the host's callback service: a HostClient
// over the connection that go-plugin's broker opens to the host.
type hostClient struct {
	rpc bridgev1.HostClient
}

// CallTool implements HostClient. A failure that the host reports as typed
// is returned as a *ToolError.
func (h *hostClient) CallTool(ctx context.Context, path string, arguments json.RawMessage) (*CallToolResult, error) {
	if len(arguments) == 0 {
		arguments = emptyObject
	}
	resp, err := h.rpc.CallTool(ctx, &bridgev1.CallToolRequest{Path: path, Arguments: arguments})
	if err != nil {
		return nil, fromStatus(err)
	}
	if resp.GetResult() == nil {
		return &CallToolResult{Content: nullJSON}, nil
	}
	return resultFromPB(resp.GetResult()), nil
}

var _ HostClient = (*hostClient)(nil)
