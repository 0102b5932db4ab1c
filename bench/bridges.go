package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/parselbox/parselbox/host"
)

// bridgeTargets are the lines of the table for the built-in bridges.
var bridgeTargets = []target{
	{"bridge_http_p50_ms", "call_plugin_p50_ms", "", nil},
	{"bridge_http_op_p50_ms", "call_plugin_p50_ms", "", nil},
	{"bridge_mcp_p50_ms", "call_plugin_p50_ms", "", nil},
}

// pingSpec is the OpenAPI document of the loopback API the HTTP bridge is
// measured against: one operation, GET /ping.
const pingSpec = `{"openapi": "3.0.3", "info": {"title": "ping", "version": "1"},
 "servers": [{"url": "%s"}],
 "paths": {"/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "ok",
   "content": {"application/json": {"schema": {"type": "object"}}}}}}}}}`

// bridgesConfig adds the built-in bridges measured: the HTTP bridge against
// a loopback API, and the MCP bridge against server-everything from the
// test fixtures. What is not built is left out, and said so.
func (b *bench) bridgesConfig(cfg *host.Config) (stop func()) {
	stop = func() {}
	bin, _ := filepath.Abs("bin")
	cfg.PluginDirs = append(cfg.PluginDirs, bin)
	if cfg.Bridges == nil {
		cfg.Bridges = map[string]host.BridgeConfig{}
	}
	if _, err := os.Stat(filepath.Join(bin, "parselbox-bridge-http")); err == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			url := "http://" + ln.Addr().String()
			mux := http.NewServeMux()
			mux.HandleFunc("GET /ping", func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"ok":true}`))
			})
			mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
				fmt.Fprintf(w, pingSpec, url)
			})
			srv := &http.Server{Handler: mux}
			go srv.Serve(ln)
			stop = func() { srv.Close() }
			cfg.Bridges["api"] = host.BridgeConfig{Plugin: "http", Config: map[string]any{"spec": url + "/openapi.json"}}
			b.bridges = append(b.bridges, "http")
		}
	} else {
		fmt.Fprintln(os.Stderr, "bench: the HTTP bridge is not built (make build)")
	}
	everything, _ := filepath.Abs("tests/fixtures/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	node, nodeErr := exec.LookPath("node")
	_, mcpErr := os.Stat(filepath.Join(bin, "parselbox-bridge-mcpproxy"))
	if _, err := os.Stat(everything); err == nil && nodeErr == nil && mcpErr == nil {
		cfg.MCPServers = map[string]host.MCPServer{"everything": {Command: node, Args: []string{everything, "stdio"}}}
		b.bridges = append(b.bridges, "mcp")
	} else {
		fmt.Fprintln(os.Stderr, "bench: the MCP bridge or its test server is not installed (make build fixtures)")
	}
	return stop
}

// measureBridges times sync calls through the built-in bridges.
func (b *bench) measureBridges(samples sampler) error {
	for _, br := range b.bridges {
		type call struct{ code, want string }
		var calls map[string]call
		switch br {
		case "http":
			calls = map[string]call{
				"bridge_http_p50_ms":    {"api.get('/ping')['data']", `{"ok": True}`},
				"bridge_http_op_p50_ms": {"api.ping()['data']", `{"ok": True}`},
			}
		case "mcp":
			calls = map[string]call{"bridge_mcp_p50_ms": {"everything.echo(message='x')", `"Echo: x"`}}
		}
		for key, c := range calls {
			v, err := samples("(lambda: "+c.code+")", c.want, b.execs)
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			b.add(key, percentile(v, 50))
		}
	}
	return nil
}
