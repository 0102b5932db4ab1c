package sdktest

import (
	"os/exec"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/parselbox/parselbox/internal/wire"
	"github.com/parselbox/parselbox/sdk"
)

// Start runs cmd, a bridge binary (or a test binary that serves a bridge),
// as a go-plugin subprocess the way a host does, and returns a client of it.
// The process inherits the test's environment; its logs go to t.Log. It is
// killed when the test ends.
func Start(t testing.TB, cmd *exec.Cmd) *Client {
	t.Helper()
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          wire.PluginSet(wire.ClientOptions{}),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  wire.DialOptions(),
		Logger:           Logger(t),
	})
	t.Cleanup(client.Kill)
	conn, err := client.Client()
	if err != nil {
		t.Fatalf("sdktest: starting %s: %v", cmd.Path, err)
	}
	raw, err := conn.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("sdktest: dispensing the bridge of %s: %v", cmd.Path, err)
	}
	c := &Client{rpc: raw.(*wire.Client)}
	if cmd.Process != nil {
		c.pid = cmd.Process.Pid
	}
	return c
}
