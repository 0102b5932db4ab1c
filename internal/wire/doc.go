// Package wire is the host side of the bridge protocol
// (proto/parselbox/bridge/v1): the go-plugin plugin that dispenses a Client,
// the Client that implements sdk.BridgeServer over a plugin's gRPC
// connection, and the host's callback service that bridges reach through
// go-plugin's broker. It converts between the protocol's types and the sdk
// types, so that neither the host nor bridge authors see generated code.
//
// The bridge side of the protocol lives in package sdk (sdk.Serve), because
// sdk cannot import this package without an import cycle. Package
// host/bridges starts plugin processes and uses this package to talk to them;
// package sdk/sdktest uses it to test bridges.
//
//	client, _ := plugin.NewClient(&plugin.ClientConfig{
//		HandshakeConfig:  sdk.Handshake,
//		Plugins:          wire.PluginSet(wire.ClientOptions{}),
//		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
//		Cmd:              exec.Command(path),
//	}).Client()
//	raw, _ := client.Dispense(sdk.PluginName)
//	bridge := raw.(*wire.Client) // an sdk.BridgeServer
package wire
