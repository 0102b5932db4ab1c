// Package wire is the bridge protocol (proto/parselbox/bridge/v1) over
// hashicorp/go-plugin gRPC, both halves: the bridge side that serves a
// protocol.BridgeServer (sdk.Serve uses it), the host side Client that
// implements protocol.BridgeServer over a plugin's connection (host/bridges
// and sdk/sdktest use it), the host's callback service that bridges reach
// through go-plugin's broker, and every conversion between the generated
// types and those of package protocol. Nothing else sees generated code.
//
// Typed errors cross as they are: a *protocol.ToolError,
// *protocol.ConfigError or *protocol.DeclineError returned on one side is
// returned on the other, carried in the gRPC status (for a call on the
// shared Calls stream, in the call's CallsResponse). errors.go maps
// them once to a call's outcome, and an outcome to its gRPC status.
//
//	// bridge side (sdk.Serve)
//	plugin.Serve(wire.ServeConfig(bridge, logger))
//
//	// host side
//	client := plugin.NewClient(&plugin.ClientConfig{
//		HandshakeConfig:  wire.Handshake,
//		Plugins:          wire.PluginSet(wire.ClientOptions{}),
//		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
//		Cmd:              exec.Command(path),
//	})
//	conn, _ := client.Client()
//	raw, _ := conn.Dispense(wire.PluginName)
//	bridge := raw.(*wire.Client) // a protocol.BridgeServer
//
// See package protocol for which packages may import which.
package wire
