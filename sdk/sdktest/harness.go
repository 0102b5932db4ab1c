package sdktest

import (
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/parselbox/parselbox/internal/wire"
	"github.com/parselbox/parselbox/sdk"
)

// NewHarness serves b in the test's process over a real gRPC connection and
// returns a client of it. The connection is closed when the test ends.
func NewHarness(t testing.TB, b sdk.BridgeServer) *Client {
	t.Helper()
	p := &wire.Plugin{Impl: b, Logger: Logger(t)}
	conn, srv := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{sdk.PluginName: p})
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
