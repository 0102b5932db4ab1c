package host_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host"
)

// problems is what Validate found in c: the text of each *KeyError, in
// order.
func problems(t *testing.T, c *host.Config) []string {
	t.Helper()
	err := c.Validate()
	if err == nil {
		return nil
	}
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ke *host.KeyError
		if !errors.As(e, &ke) || ke.ConfigKey() != ke.Key {
			t.Errorf("problem %#v: want a *host.KeyError", e)
		}
		got = append(got, e.Error())
	}
	return got
}

// TestValidate checks a Config built in Go: problems come back as
// *KeyError values naming the key, in a stable order.
func TestValidate(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		cfg  host.Config
		want []string // Error() of each problem
	}{
		"zero Config":                  {host.Config{}, nil},
		"defaults and no-limit values": {host.Config{Timeout: -1, Mounts: map[string]host.Mount{"d": {Source: "/d"}}}, nil},
		"every check": {
			host.Config{
				Files:      []string{"a", ""},
				PluginDirs: []string{""},
				Mounts: map[string]host.Mount{
					"ok":     {Source: "/ok", Mode: "rw"},
					"a/../b": {Source: "/b"},
					"m":      {Mode: "x"},
				},
				AllowNet: []string{"h:1", "h"},
				Memory:   -1,
				Env:      map[string]string{"OK": "", "B-AD": ""},
				Globals:  map[string]any{"def": 1},
				Bridges: map[string]host.BridgeConfig{
					"b": {SHA256: "00"},
					"c": {Plugin: "c", Env: []string{"X", "1Y"}},
				},
			},
			[]string{
				`files[1]: must not be empty`,
				`plugin_dirs[0]: must not be empty`,
				`mount "a/../b": target must be a relative path such as "data" or "data/sub", without empty, "." or ".." parts`,
				`mount "m": missing key "source"`,
				`mount "m".mode: must be "ro" or "rw", got "x"`,
				`allow_net[1]: must be "host:port" with a port from 1 to 65535, got "h"`,
				`memory: must be a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit), got -1`,
				`env "B-AD": variable name must be letters, digits and _, not starting with a digit`,
				`globals "def": name must not be a Python keyword`,
				`bridge "b": missing key "plugin"`,
				`bridge "b".sha256: must be 64 hex digits, got "00"`,
				`bridge "c".env[1]: variable name must be letters, digits and _, not starting with a digit`,
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := problems(t, &tt.cfg)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

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
	got := problems(t, c)
	want := []string{
		`mcp_server "_": the name must make a Python namespace (its letters, digits and _, not starting with a digit), got ""`,
		`mcp_server "empty": needs a "command" (a stdio server) or a "url" (an http server)`,
		`mcp_server "mixed".args: is for stdio servers; this one is http`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
}
