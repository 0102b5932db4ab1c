package wire

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// oldServer is a bridge built before the Run RPC (and so before Calls).
type oldServer struct{ *server }

func (oldServer) Run(context.Context, *bridgev1.CallStart) (*bridgev1.CallResult, error) {
	return nil, status.Error(codes.Unimplemented, "method Run not implemented")
}

func (oldServer) Calls(bridgev1.Bridge_CallsServer) error {
	return status.Error(codes.Unimplemented, "method Calls not implemented")
}

type oldPlugin struct{ Plugin }

func (p *oldPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	bridgev1.RegisterBridgeServer(s, oldServer{newServer(p.Impl, broker, hclog.NewNullLogger())})
	return nil
}

type echoBridge struct{ calls int }

func (*echoBridge) Describe(context.Context) (*protocol.Description, error) {
	return &protocol.Description{}, nil
}
func (*echoBridge) Configure(context.Context, *protocol.ConfigureRequest) error { return nil }
func (b *echoBridge) CallTool(_ context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	b.calls++
	return &protocol.CallToolResult{Content: req.Arguments}, nil
}

// A host calls a bridge that does not implement Run through the stream.
func TestRunFallsBackToCall(t *testing.T) {
	t.Parallel()
	b := &echoBridge{}
	conn, _ := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{PluginName: &oldPlugin{Plugin{Impl: b}}})
	t.Cleanup(func() { _ = conn.Close() })
	raw, err := conn.Dispense(PluginName)
	if err != nil {
		t.Fatal(err)
	}
	c := raw.(*Client)
	for range 2 {
		res, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "x", Arguments: json.RawMessage(`{"a":1}`)})
		if err != nil || string(res.Content) != `{"a":1}` {
			t.Fatalf("CallTool = %+v, %v", res, err)
		}
	}
	if !c.noRun.Load() || b.calls != 2 {
		t.Errorf("noRun = %v, calls = %d", c.noRun.Load(), b.calls)
	}
}
