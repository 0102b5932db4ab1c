package wire

import (
	"context"
	"encoding/json"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// The Host service: bridges call back into the host through go-plugin's
// broker. hostServer is its host side, hostClient its bridge side.

// hostServer serves the host's callbacks to a bridge by delegating to a
// protocol.HostClient.
type hostServer struct {
	bridgev1.UnimplementedHostServer
	host protocol.HostClient
}

// CallTool implements bridgev1.HostServer. An error of the host's becomes a
// status carrying a ToolError.
func (s *hostServer) CallTool(ctx context.Context, req *bridgev1.CallToolRequest) (*bridgev1.CallToolResponse, error) {
	res, err := s.host.CallTool(ctx, req.GetPath(), json.RawMessage(req.GetArguments()))
	if err != nil {
		return nil, errorStatus(err)
	}
	return &bridgev1.CallToolResponse{Result: resultToPB(res)}, nil
}

// hostClient is a protocol.HostClient over the connection that go-plugin's
// broker opens from the bridge to the host.
type hostClient struct {
	rpc bridgev1.HostClient
}

// CallTool implements protocol.HostClient. A failure that the host reports
// typed is returned as a *protocol.ToolError.
func (h *hostClient) CallTool(ctx context.Context, path string, arguments json.RawMessage) (*protocol.CallToolResult, error) {
	resp, err := h.rpc.CallTool(ctx, &bridgev1.CallToolRequest{Path: path, Arguments: object(arguments)})
	if err != nil {
		if typed, ok := typedError(err); ok {
			return nil, typed
		}
		return nil, err
	}
	return resultFromPB(resp.GetResult()), nil // a missing result is null
}

var (
	_ bridgev1.HostServer = (*hostServer)(nil)
	_ protocol.HostClient = (*hostClient)(nil)
)
