package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parselbox/parselbox/sdk"
)

// setTools makes the server's tools (from session s) the bridge's: new and
// changed ones are added, vanished ones removed. nil removes them all.
func (p *proxy) setTools(s *session, tools []*mcp.Tool) {
	p.toolsMu.Lock()
	defer p.toolsMu.Unlock()
	want := map[string]bool{}
	byPython := map[string]string{}
	for _, t := range tools {
		name := toolName(t.Name)
		if name == "" {
			p.log.Warn("skipping a tool without a usable name", "tool", t.Name)
			continue
		}
		py := sdk.PythonName(name) // as the sandbox shows it
		if other, dup := byPython[py]; dup {
			p.log.Warn("skipping a tool whose Python name another tool has", "tool", t.Name, "other", other, "python_name", py)
			continue
		}
		byPython[py] = t.Name
		tool, e := describeTool(s, name, t)
		want[name] = true
		if old := p.tools[name]; old != nil && old.schemas == e.schemas && old.mcpName == e.mcpName {
			continue // unchanged
		}
		p.tools[name] = e
		p.Bridge.AddTool(tool, p.handler(e))
	}
	for name := range p.tools {
		if !want[name] {
			delete(p.tools, name)
			p.Bridge.RemoveTool(name)
		}
	}
}

// describeTool is the bridge's declaration of an MCP tool: its schemas as
// the server wrote them (the raw JSON that the observer kept, so that the
// order of the input properties, which is the order of positional
// arguments, survives), and its description.
func describeTool(s *session, name string, t *mcp.Tool) (*sdk.Tool, *entry) {
	raw, _ := s.obs.schemasOf(t.Name)
	in := objectSchema(raw.Input, t.InputSchema)
	if in == nil {
		s.p.log.Warn("the tool's input schema is not a JSON object schema; taking any arguments", "tool", t.Name)
		in = json.RawMessage(`{"type":"object"}`)
	}
	out := objectSchema(raw.Output, t.OutputSchema)
	desc := cmp.Or(strings.TrimSpace(t.Description), t.Title)
	var required struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(in, &required)
	// readOnlyHint is a hint of the server's: the host may keep only such
	// tools (allow_read_only), trusting the server it was configured with.
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	sig, _ := json.Marshal([]any{desc, in, out, readOnly})
	return &sdk.Tool{Name: name, Description: desc, InputSchema: in, OutputSchema: out, ReadOnly: readOnly},
		&entry{mcpName: t.Name, required: required.Required, schemas: string(sig)}
}

// objectSchema returns the schema as JSON if it is an object whose
// "properties", if any, are an object: raw when the server's JSON was kept,
// else the decoded form (whose properties are then in alphabetical order).
func objectSchema(raw json.RawMessage, decoded any) json.RawMessage {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		if decoded == nil {
			return nil
		}
		var err error
		if b, err = json.Marshal(decoded); err != nil {
			return nil
		}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil || top == nil {
		return nil
	}
	if props, ok := top["properties"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(props, &m) != nil {
			return nil
		}
	}
	return b
}

// toolName is the name under which the bridge offers an MCP tool: the
// server's name with every ".", space and control character replaced by
// "_" (a dot would make a nested namespace). The sandbox then shows any
// character that cannot be in a Python identifier as "_":
// get-sum is ns.get_sum.
func toolName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, name)
}
