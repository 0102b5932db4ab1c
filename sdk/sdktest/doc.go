// Package sdktest tests bridges built with package sdk, over the same gRPC
// protocol that a parselbox host speaks to them.
//
// NewHarness serves a bridge in the test's process over a real gRPC
// connection (go-plugin's TestPluginGRPCConn); Start runs a bridge binary as
// a real plugin subprocess. Both return a *Client, which implements
// sdk.BridgeServer and sdk.Shutdowner like the host's proxy of a bridge.
//
// A bridge's own package tests itself as a subprocess by re-executing its
// test binary, which serves the bridge when a host started it:
//
//	func TestMain(m *testing.M) {
//		if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
//			main() // started by sdktest.Start: serve
//			return
//		}
//		os.Exit(m.Run())
//	}
//
//	func TestGreet(t *testing.T) {
//		exe, err := os.Executable()
//		if err != nil {
//			t.Fatal(err)
//		}
//		b := sdktest.Start(t, exec.Command(exe))
//		res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{
//			Name: "greet", Arguments: []byte(`{"name":"ada"}`),
//		})
//		// check res and err
//	}
package sdktest
