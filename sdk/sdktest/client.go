package sdktest

import (
	"context"

	"github.com/parselbox/parselbox/internal/wire"
	"github.com/parselbox/parselbox/sdk"
)

// Client is a bridge under test, reached over gRPC as a host reaches it.
type Client struct {
	rpc *wire.Client
	pid int
}

// Describe implements sdk.BridgeServer.
func (c *Client) Describe(ctx context.Context) (*sdk.Description, error) {
	return c.rpc.Describe(ctx)
}

// Configure implements sdk.BridgeServer. When req.Host is set, the bridge
// can call it back (through go-plugin's broker, as with a real host).
func (c *Client) Configure(ctx context.Context, req *sdk.ConfigureRequest) error {
	return c.rpc.Configure(ctx, req)
}

// CallTool implements sdk.BridgeServer.
func (c *Client) CallTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	return c.rpc.CallTool(ctx, req)
}

// Shutdown implements sdk.Shutdowner: it runs the bridge's Shutdown.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.rpc.Shutdown(ctx)
}

// Pid returns the process id of a bridge started with Start, 0 for one
// served in-process by NewHarness.
func (c *Client) Pid() int { return c.pid }

var (
	_ sdk.BridgeServer = (*Client)(nil)
	_ sdk.Shutdowner   = (*Client)(nil)
)
