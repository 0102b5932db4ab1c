package wire

import (
	"context"
	"encoding/json"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
	"github.com/parselbox/parselbox/sdk"
)

// hostServer serves the host's callbacks (the Host service) to a bridge by
// delegating to an sdk.HostClient.
type hostServer struct {
	bridgev1.UnimplementedHostServer
	host sdk.HostClient
}

// CallTool implements bridgev1.HostServer. An error of the host's becomes a
// status carrying a ToolError (CodeInternal unless it is a *sdk.ToolError).
func (s *hostServer) CallTool(ctx context.Context, req *bridgev1.CallToolRequest) (*bridgev1.CallToolResponse, error) {
	res, err := s.host.CallTool(ctx, req.GetPath(), json.RawMessage(req.GetArguments()))
	if err != nil {
		te := sdk.ErrorResult(err).Error
		return nil, bridgev1.ToolErrorStatus(bridgev1.CodeFromSlug(string(te.Code)), te.Message)
	}
	if res == nil {
		res = &sdk.CallToolResult{}
	}
	return &bridgev1.CallToolResponse{Result: resultToPB(res)}, nil
}

var _ bridgev1.HostServer = (*hostServer)(nil)
