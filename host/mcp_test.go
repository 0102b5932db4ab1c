package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMCPNamespace(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"github":       "github",
		"my-server":    "my_server",
		"-my.server-":  "my_server",
		"__x__":        "x",
		"a b":          "a_b",
		"café":         "caf",
		"1password":    "1password", // refused by New: starts with a digit
		"---":          "",
		"Server_2.0":   "Server_2_0",
		"a-é-b":        "a___b",
		"@scope/thing": "scope_thing",
	} {
		if got := MCPNamespace(name); got != want {
			t.Errorf("MCPNamespace(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestMCPBridges checks how the MCP servers of a Config become bridges:
// an mcp.json (in file order, other clients' keys ignored, disabled
// entries left out, relative commands resolved against its directory) and
// mcp_server entries.
func TestMCPBridges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{
  "theme": "dark",
  "mcpServers": {
    "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"K": "v"}, "autoApprove": ["echo"]},
    "local-tool": {"command": "./bin/tool"},
    "remote": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer x"}},
    "off": {"command": "nope", "disabled": true}
  }
}`), 0o644)
	cache := t.TempDir()
	s := &Sandbox{cfg: Config{
		CacheDir:   cache,
		MCP:        path,
		MCPServers: map[string]MCPServer{"legacy": {Type: "sse", URL: "http://127.0.0.1:1/sse"}},
		Bridges:    map[string]BridgeConfig{"other": {Plugin: "x"}},
	}}
	all, mcp, err := s.pluginBridges()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]BridgeConfig{
		"everything": {Plugin: MCPPlugin, Config: map[string]any{
			"name": "everything", "type": "stdio", "command": "npx",
			"args": []any{"-y", "@modelcontextprotocol/server-everything"}, "env": map[string]any{"K": "v"},
			"home": filepath.Join(cache, "mcp-home", "everything")}},
		"local_tool": {Plugin: MCPPlugin, Config: map[string]any{
			"name": "local-tool", "type": "stdio", "command": filepath.Join(dir, "bin/tool"),
			"home": filepath.Join(cache, "mcp-home", "local_tool")}},
		"remote": {Plugin: MCPPlugin, Config: map[string]any{
			"name": "remote", "type": "http", "url": "https://h/mcp", "headers": map[string]any{"Authorization": "Bearer x"}}},
		"legacy": {Plugin: MCPPlugin, Config: map[string]any{
			"name": "legacy", "type": "sse", "url": "http://127.0.0.1:1/sse"}},
	}
	if d := cmp.Diff(want, mcp); d != "" {
		t.Errorf("MCP bridges (-want +got):\n%s", d)
	}
	if len(all) != 5 || all["other"].Plugin != "x" {
		t.Errorf("all bridges: %v", all)
	}
}

func TestMCPConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		file    string // mcp.json; none when empty
		servers map[string]MCPServer
		bridges map[string]BridgeConfig
		want    string
	}{
		"missing file":     {servers: nil, want: "reading MCP servers: open"},
		"no mcpServers":    {file: `{"servers": {}}`, want: `mcp.json: no "mcpServers" key`},
		"not an object":    {file: `[1]`, want: `mcp.json:1: the file must hold a JSON object`},
		"servers not obj":  {file: "{\n\"mcpServers\": []}", want: `mcp.json:2: mcpServers: must be an object`},
		"syntax":           {file: "{\"mcpServers\": {\n\"a\": {\"command\": }}}", want: `mcp.json:2: invalid character '}'`},
		"truncated":        {file: `{"mcpServers": {"a": {`, want: `unexpected end of JSON input`},
		"trailing":         {file: `{"mcpServers": {}} {}`, want: `unexpected data after the JSON object`},
		"duplicate":        {file: "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"a\": {\"command\": \"y\"}}}", want: `mcp.json:3: mcpServers "a": duplicate server (first on line 2)`},
		"wrong type":       {file: "{\"mcpServers\": {\n\"a\": {\"command\": \"x\", \"env\": {\"K\": 1}}}}", want: `mcp.json:2: mcpServers "a": env: must be an object of strings, got a number`},
		"entry not object": {file: "{\"mcpServers\": {\n\"a\": \"npx\"}}", want: `mcp.json:2: mcpServers "a": must be an object`},
		"no command":       {file: "{\"mcpServers\": {\n\"a\": {\"args\": [\"x\"]}}}", want: `mcp.json:2: mcpServers "a": needs a "command" (a stdio server) or a "url" (an http server)`},
		"bad url":          {file: `{"mcpServers": {"a": {"url": "ws://h"}}}`, want: `mcp.json:1: mcpServers "a".url: must be an http:// or https:// URL, got "ws://h"`},
		"keyword":          {servers: map[string]MCPServer{"class": {Command: "x"}}, want: `mcp_server "class": the namespace "class" is a Python keyword`},
		"digit":            {servers: map[string]MCPServer{"1password": {Command: "x"}}, want: `mcp_server "1password": the name must make a Python namespace (its letters, digits and _, not starting with a digit), got "1password"`},
		"empty name":       {servers: map[string]MCPServer{"--": {Command: "x"}}, want: `mcp_server "--": the name must make a Python namespace (its letters, digits and _, not starting with a digit), got ""`},
		"clash":            {file: `{"mcpServers": {"a-b": {"command": "x"}}}`, servers: map[string]MCPServer{"a_b": {Command: "y"}}, want: `mcp_server "a_b": the namespace "a_b" is also that of mcpServers "a-b" in /`},
		"bridge clash":     {servers: map[string]MCPServer{"gh": {Command: "x"}}, bridges: map[string]BridgeConfig{"gh": {Plugin: "x"}}, want: `mcp_server "gh": the namespace "gh" is also a bridge`},
		"bad env":          {servers: map[string]MCPServer{"a": {Command: "x", Env: map[string]string{"A=B": "c"}}}, want: `mcp_server "a".env "A=B": variable name must be letters, digits and _, not starting with a digit`},
		"bad type":         {servers: map[string]MCPServer{"a": {Type: "ws", URL: "ws://h"}}, want: `mcp_server "a".type: must be "stdio", "http" or "sse", got "ws"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{MCPServers: tc.servers, Bridges: tc.bridges}
			if tc.file != "" || name == "missing file" {
				cfg.MCP = filepath.Join(dir, strings.ReplaceAll(name, " ", "_"), "mcp.json")
				if tc.file != "" {
					os.MkdirAll(filepath.Dir(cfg.MCP), 0o755)
					os.WriteFile(cfg.MCP, []byte(tc.file), 0o644)
				}
			}
			_, _, err := (&Sandbox{cfg: cfg}).pluginBridges()
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a ConfigError containing %q", err, tc.want)
			}
		})
	}
}
