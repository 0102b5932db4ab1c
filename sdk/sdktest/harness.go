package sdktest

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/parselbox/parselbox/internal/wire"
	"github.com/parselbox/parselbox/sdk"
)

// NewHarness serves b in the test's process over a real gRPC connection and
// returns a client of it. The connection is closed when the test ends.
func NewHarness(t testing.TB, b sdk.BridgeServer) *Client {
	t.Helper()
	server, ok := sdk.ServeConfig(b).Plugins[sdk.PluginName].(plugin.GRPCPlugin)
	if !ok {
		t.Fatalf("sdktest: sdk.ServeConfig has no gRPC plugin %q", sdk.PluginName)
	}
	ps := plugin.PluginSet{sdk.PluginName: &harnessPlugin{server: server, client: &wire.Plugin{}}}
	conn, srv := plugin.TestPluginGRPCConn(t, false, ps)
	t.Cleanup(func() {
		_ = conn.Close() // also stops srv, through go-plugin's controller
		select {
		case <-srv.DoneCh:
		case <-time.After(5 * time.Second):
			t.Errorf("sdktest: the in-process bridge server did not stop")
		}
	})
	raw, err := conn.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("sdktest: dispensing the bridge: %v", err)
	}
	return &Client{rpc: raw.(*wire.Client)}
}

// harnessPlugin joins the bridge side (sdk) and the host side (wire) of the
// plugin, as go-plugin's in-process test connection needs one plugin set for
// both.
type harnessPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server plugin.GRPCPlugin
	client plugin.GRPCPlugin
}

func (p *harnessPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	return p.server.GRPCServer(broker, s)
}

func (p *harnessPlugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return p.client.GRPCClient(ctx, broker, conn)
}

var _ plugin.GRPCPlugin = (*harnessPlugin)(nil)
