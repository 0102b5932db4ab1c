package wire

import (
	"context"
	"errors"
	"os"
	"runtime"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/parselbox/parselbox/internal/protocol"
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

// LogLevelEnv names the environment variable in which the host passes its
// log level ("trace", "debug", "info", "warn", "error") to a bridge.
const LogLevelEnv = "PARSELBOX_BRIDGE_LOG_LEVEL"

// MaxMessageSize bounds one gRPC message (arguments, results, schemas) in
// both directions.
const MaxMessageSize = 64 << 20

// Plugin is the go-plugin plugin of a bridge, both halves: on the bridge's
// side it serves Impl (GRPCServer), on the host's it dispenses a *Client
// (GRPCClient). A test that joins both in one process (go-plugin's
// TestPluginGRPCConn) uses one Plugin for both.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Impl is the bridge served on the bridge's side.
	Impl protocol.BridgeServer
	// Logger receives the bridge side's reports of panics. nil: discarded.
	Logger hclog.Logger
	// Options configure the clients dispensed on the host's side.
	Options ClientOptions
}

// PluginSet returns the plugin set with which a host starts bridge plugins.
func PluginSet(opts ClientOptions) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &Plugin{Options: opts}}
}

// Window sizes of the plugin connection, in both directions. Fixed windows
// turn gRPC's bandwidth estimation off, which otherwise pings the other
// side along with the messages: a write, a read and a wakeup per call that
// a connection on one machine does not need.
const (
	streamWindow = 4 << 20
	connWindow   = 16 << 20
)

// DialOptions are the gRPC options with which a host dials a bridge
// (plugin.ClientConfig.GRPCDialOptions).
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(streamWindow), grpc.WithInitialConnWindowSize(connWindow)}
}

// ServeConfig returns the go-plugin configuration that serves impl as a
// bridge plugin, logging to logger. Serving it (plugin.Serve) also sets the
// bridge process's GOMAXPROCS (oneProcessor).
func ServeConfig(impl protocol.BridgeServer, logger hclog.Logger) *plugin.ServeConfig {
	return &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &Plugin{Impl: impl, Logger: logger}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			oneProcessor()
			opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize),
				grpc.InitialWindowSize(streamWindow), grpc.InitialConnWindowSize(connWindow),
				grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))))
			return plugin.DefaultGRPCServer(opts)
		},
		Logger: logger,
	}
}

// oneProcessor runs the bridge process's Go code on one processor
// (GOMAXPROCS=1) unless its environment sets GOMAXPROCS (the host passes it
// when the bridge's env names it). A bridge mostly waits on the host, the
// network or subprocesses. With one processor, a call that arrives wakes one
// thread, which reads it, runs the handler and writes the result; with
// more, each handoff between gRPC's goroutines (reader, stream worker,
// writer) may wake the thread of another processor. Measured from Python on
// a 2-core machine, paired with the same plugin at GOMAXPROCS=2: a call's
// round trip took 0.07-0.15 ms less under a load of 11-17 (4 of 4 runs),
// and no measurable difference (-0.03 to +0.02 ms) under a load of 3-6.
// Calls still run concurrently; only the parallelism of Go code is bounded.
func oneProcessor() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// GRPCServer registers the Bridge service over Impl.
func (p *Plugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errNoServer
	}
	logger := p.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	bridgev1.RegisterBridgeServer(s, newServer(p.Impl, broker, logger))
	return nil
}

// GRPCClient returns a *Client over conn. ctx is done when the plugin's
// process has exited.
func (p *Plugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewClient(ctx, conn, broker, p.Options), nil
}

// errNoServer is returned by GRPCServer without an Impl.
var errNoServer = errors.New("wire: Plugin.Impl is nil: there is no bridge to serve")

var _ plugin.GRPCPlugin = (*Plugin)(nil)
