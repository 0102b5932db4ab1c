// Package bridges is the host's plugin manager: it starts bridge plugins
// (separate processes built with package sdk) through hashicorp/go-plugin
// over gRPC, and gives the host each bridge as an sdk.BridgeServer.
//
//	m := bridges.NewManager(bridges.Options{Logger: logger, PluginDirs: dirs, Host: callbacks})
//	defer m.Close(context.Background())
//	greeter, err := m.Start(ctx, "greeter", bridges.Config{Plugin: "greeter"})
//	if err != nil {
//		return err // e.g. `bridge "greeter": invalid configuration: ...`
//	}
//	d, err := greeter.Describe(ctx)
//	res, err := greeter.CallTool(ctx, &sdk.CallToolRequest{Name: "greet", Arguments: args})
//
// A plugin named "greeter" is the binary parselbox-bridge-greeter, found
// first in the directory of the running executable, then in the plugin
// directories; a plugin containing a slash is a path. The binary can be
// pinned by sha256. It is looked up (and checked) again at every start, so
// swapping it needs no rebuild of the host.
//
// Each plugin runs in its own process group (sdk/procgroup), is SIGKILLed
// by the kernel if the host dies (Pdeathsig, Linux), gets none of the host's
// environment but the variables its configuration names, and talks to the
// host over unix sockets in a private 0700 directory (internal/wire speaks
// the protocol). Only the gRPC protocol is accepted. Its stderr (hclog
// JSON) is re-levelled under the host's logger. Manager.Pid and the
// bridge's Pid give its process id.
//
// A bridge knows its secrets: the values of the variables passed to it
// (SecretEnv), Config.Secrets, and what the plugin
// reports from Configure (sdk.ConfigureRequest.AddSecrets). Its Redactor
// holds them; the host's router removes them from everything the bridge
// sends to the sandbox. A configuration the plugin rejects is an error
// wrapping ErrInvalidConfig and a *sdk.ConfigError naming the key.
//
// A plugin that crashes fails the calls in flight with an error naming the
// bridge (wrapping ErrBridgeShutdown, and a *sdk.ToolError with
// sdk.CodeUnavailable); the next call starts a new process and configures
// it again, with a capped exponential backoff when it keeps crashing.
// Close shuts every bridge down gracefully (sdk.Shutdowner), then stops its
// process, killing it when the deadline passes.
package bridges
