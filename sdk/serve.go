package sdk

import (
	"context"
	"errors"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// Handshake is the go-plugin handshake shared by the host and every bridge.
// ProtocolVersion is the version of the bridge protocol
// (parselbox.bridge.v1); a host and a bridge built against different
// versions refuse each other at start with a message that says so. The magic
// cookie only keeps people from running a bridge binary by hand by mistake;
// it is no security measure.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  bridgev1.ProtocolVersion,
	MagicCookieKey:   "PARSELBOX_BRIDGE_PLUGIN",
	MagicCookieValue: "7c1e4a52d0b94f3f9a86-parselbox-bridge",
}

// PluginName is the name under which a bridge plugin is dispensed.
const PluginName = "bridge"

// LogLevelEnv names the environment variable in which the host passes its log
// level ("trace", "debug", "info", "warn", "error") to a bridge; the default
// logger of a Bridge logs at that level.
const LogLevelEnv = "PARSELBOX_BRIDGE_LOG_LEVEL"

// maxMessageSize bounds one gRPC message (arguments, results, schemas).
const maxMessageSize = 64 << 20

// Serve serves b as a bridge plugin over go-plugin gRPC and returns when the
// host stops it. Call it from main and do nothing else there: stdout
// carries the plugin handshake, and logs go to stderr as JSON lines that the
// host re-levels under its own logger. A binary started by hand (not by a
// parselbox host) prints a notice and exits with status 1.
func Serve(b BridgeServer) {
	plugin.Serve(ServeConfig(b))
}

// ServeConfig returns the go-plugin configuration with which Serve serves b.
// Bridges that need to adjust it (for example to run in go-plugin's test
// mode) call plugin.Serve with it themselves.
func ServeConfig(b BridgeServer) *plugin.ServeConfig {
	logger := loggerOf(b)
	return &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &bridgePlugin{impl: b, logger: logger}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(maxMessageSize), grpc.MaxSendMsgSize(maxMessageSize))
			return plugin.DefaultGRPCServer(opts)
		},
		Logger: logger,
	}
}

func loggerOf(b BridgeServer) hclog.Logger {
	if l, ok := b.(interface{ Logger() hclog.Logger }); ok && l.Logger() != nil {
		return l.Logger()
	}
	return newStderrLogger("")
}

// bridgePlugin is the bridge side of the go-plugin plugin: it serves impl.
// The host side is in package internal/wire.
type bridgePlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl   BridgeServer
	logger hclog.Logger
}

// GRPCServer registers the Bridge service.
func (p *bridgePlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	bridgev1.RegisterBridgeServer(s, newGRPCServer(p.impl, broker, p.logger))
	return nil
}

// GRPCClient is not used on the bridge side.
func (p *bridgePlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("sdk: a bridge does not dispense clients")
}

var _ plugin.GRPCPlugin = (*bridgePlugin)(nil)
