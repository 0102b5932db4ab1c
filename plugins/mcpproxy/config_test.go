package main

import (
	"testing"

	"github.com/parselbox/parselbox/sdk"
)

// A stdio server gets the private HOME (and npm cache) the host made for
// it, unless its entry sets them.
func TestEnvironHome(t *testing.T) {
	t.Parallel()
	c := &serverConfig{Command: "/usr/bin/npx", Home: "/cache/mcp-home/files"}
	diff(t, "environ", []string{
		"HOME=/cache/mcp-home/files",
		"PARSELBOX_MCP_PROBE=1",
		"PATH=/usr/bin:" + sdk.DefaultPath,
		"npm_config_cache=/cache/mcp-home/files/.npm",
	}, c.environ())
	c.Env = map[string]string{"HOME": "/home/me", "npm_config_cache": "/tmp/npm"}
	diff(t, "environ with the entry's own", []string{
		"HOME=/home/me",
		"PARSELBOX_MCP_PROBE=1",
		"PATH=/usr/bin:" + sdk.DefaultPath,
		"npm_config_cache=/tmp/npm",
	}, c.environ())
}
