package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/parselbox/parselbox/sdk"
)

// Plugin is the host side of the go-plugin plugin named sdk.PluginName: it
// dispenses a *Client.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Options configure the dispensed clients.
	Options ClientOptions
}

// PluginSet returns the plugin set with which a host starts bridge plugins.
func PluginSet(opts ClientOptions) plugin.PluginSet {
	return plugin.PluginSet{sdk.PluginName: &Plugin{Options: opts}}
}

// GRPCServer fails: bridges are served by sdk.Serve.
func (p *Plugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return errNoServer }

// GRPCClient returns a *Client over conn. ctx is done when the plugin's
// process has exited.
func (p *Plugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(ctx, conn, broker, p.Options), nil
}

var _ plugin.GRPCPlugin = (*Plugin)(nil)
