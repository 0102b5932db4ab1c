package wire_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/parselbox/parselbox/internal/wire"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// pair joins the bridge side (sdk) and this package's host side in one
// plugin, for go-plugin's in-process connection.
type pair struct {
	plugin.NetRPCUnsupportedPlugin
	server, client plugin.GRPCPlugin
}

func (p *pair) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	return p.server.GRPCServer(b, s)
}
func (p *pair) GRPCClient(ctx context.Context, b *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return p.client.GRPCClient(ctx, b, c)
}

// connect serves b in-process and returns a client with opts, and the
// server (to break the connection).
func connect(t *testing.T, b sdk.BridgeServer, opts wire.ClientOptions) (*wire.Client, *plugin.GRPCServer) {
	t.Helper()
	server := sdk.ServeConfig(b).Plugins[sdk.PluginName].(plugin.GRPCPlugin)
	conn, srv := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{
		sdk.PluginName: &pair{server: server, client: &wire.Plugin{Options: opts}},
	})
	t.Cleanup(func() { _ = conn.Close() })
	raw, err := conn.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*wire.Client), srv
}

// stubborn has a tool that ignores cancellation until release is closed.
func stubborn(release <-chan struct{}) *sdk.Bridge {
	b := sdk.NewBridge(&sdk.Info{Name: "stubborn"}, &sdk.Options{Logger: hclog.NewNullLogger()})
	sdk.AddTool(b, &sdk.Tool{Name: "ignore"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (string, error) {
		req.Log("started")
		<-release
		return "done", nil
	})
	return b
}

// TestCancelGrace: a bridge that does not answer a cancel is abandoned
// after the grace period with a cancelled result.
func TestCancelGrace(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	c, _ := connect(t, stubborn(release), wire.ClientOptions{CancelGrace: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	rec := &sdktest.Recorder{}
	done := make(chan struct{})
	var res *sdk.CallToolResult
	var err error
	go func() {
		defer close(done)
		res, err = c.CallTool(ctx, &sdk.CallToolRequest{Name: "ignore", Events: rec})
	}()
	if !rec.WaitFor("started", done) {
		t.Fatalf("call ended early: %+v, %v", res, err)
	}
	cancel()
	<-done
	if err != nil || !res.IsError || res.Error.Code != sdk.CodeCancelled ||
		!strings.Contains(res.Error.Message, "did not answer the cancel within 50ms") {
		t.Fatalf("abandoned call = %+v, %v", res, err)
	}
}

// TestBrokenConnection: a call in flight when the bridge's server goes away
// fails with ErrUnavailable.
func TestBrokenConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	c, srv := connect(t, stubborn(release), wire.ClientOptions{})
	rec := &sdktest.Recorder{}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "ignore", Events: rec})
	}()
	if !rec.WaitFor("started", done) {
		t.Fatalf("call ended early: %v", err)
	}
	srv.Stop()
	<-done
	if !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("call over a broken connection = %v, want ErrUnavailable", err)
	}
	if _, err := c.Describe(t.Context()); !errors.Is(err, wire.ErrUnavailable) {
		t.Errorf("Describe over a broken connection = %v, want ErrUnavailable", err)
	}
}

// TestCancelledBeforeTheCall returns the context's error without calling.
func TestCancelledBeforeTheCall(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, stubborn(nil), wire.ClientOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.CallTool(ctx, &sdk.CallToolRequest{Name: "ignore"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool with a cancelled context = %v", err)
	}
}
