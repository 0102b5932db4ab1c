package main

import (
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Of two tools that the sandbox shows under one Python name, the first is
// kept: "import" is shown as import_ (a keyword gets a "_"), as is
// "import_"; "a-b" and "a_b" are both a_b.
func TestSamePythonName(t *testing.T) {
	p := newProxy(hclog.NewNullLogger())
	s := &session{p: p, obs: newObserver()}
	var tools []*mcp.Tool
	for _, name := range []string{"import", "import_", "a-b", "a_b", "c"} {
		tools = append(tools, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}})
	}
	p.setTools(s, tools)
	d, err := p.Bridge.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range d.Tools {
		got = append(got, tool.Name)
	}
	diff(t, "the tools kept", []string{"import", "a-b", "c"}, got)
}
