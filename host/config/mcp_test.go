package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host"
)

// TestValidateMCP checks the MCP servers of a Config built in Go.
func TestValidateMCP(t *testing.T) {
	t.Parallel()
	c := &host.Config{
		MCP: "/etc/parselbox/mcp.json",
		MCPServers: map[string]host.MCPServer{
			"ok-stdio": {Command: "npx", Args: []string{"-y", "x"}, Env: map[string]string{"K": "v"}},
			"ok-http":  {URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
			"ok-sse":   {Type: "sse", URL: "http://127.0.0.1:1/sse"},
			"empty":    {},
			"mixed":    {Type: "http", URL: "https://h", Args: []string{"x"}},
			"_":        {Command: "a"},
		},
	}
	err := Validate(c)
	var got []string
	if err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			got = append(got, e.Error())
		}
	}
	want := []string{
		`mcp_server "_": the name must make a Python namespace (its letters, digits and _, not starting with a digit), got ""`,
		`mcp_server "empty": needs a "command" (a stdio server) or a "url" (an http server)`,
		`mcp_server "mixed".args: is for stdio servers; this one is http`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}
