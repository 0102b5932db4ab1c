package router

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// children lists what is directly under a Python path prefix of a
// namespace ("" is the namespace itself): tools and nested namespaces.
func (c *catalog) children(prefix string) (tools, subs []string) {
	seenSub := map[string]bool{}
	for py := range c.alias {
		rest := py
		if prefix != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(py, prefix+"."); !ok {
				continue
			}
		}
		if head, _, nested := strings.Cut(rest, "."); nested {
			if !seenSub[head] {
				seenSub[head] = true
				subs = append(subs, head)
			}
		} else if rest != "" {
			tools = append(tools, rest)
		}
	}
	sort.Strings(tools)
	sort.Strings(subs)
	return tools, subs
}

func (r *Router) dir(ctx context.Context, path string) ([]string, error) {
	ns, rest, err := r.lookup(path)
	if err != nil {
		return nil, err
	}
	tools, subs := ns.catalog(ctx, discoveryAge).children(rest)
	names := append(append(make([]string, 0, len(tools)+len(subs)), tools...), subs...)
	sort.Strings(names)
	return names, nil
}

// help answers help(ns.path): a tool's {description, parameters, output},
// or the tree of what is under a namespace.
func (r *Router) help(ctx context.Context, path string) (any, error) {
	ns, rest, err := r.lookup(path)
	if err != nil {
		return nil, err
	}
	c := ns.catalog(ctx, discoveryAge)
	if name, ok := c.alias[rest]; ok {
		if tools, subs := c.children(rest); len(tools)+len(subs) == 0 {
			return toolDoc(c.tools[name]), nil
		}
	}
	tools, subs := c.children(rest)
	doc := c.desc.Description
	if rest != "" {
		doc = c.nsDocs[rest]
	}
	if len(tools)+len(subs) == 0 {
		// A bridge with no tools may say why (an MCP server that is down).
		if rest == "" && doc != "" {
			return "Description: " + doc + "\n\nNo tools.", nil
		}
		return "No documentation for '" + path + "'", nil
	}
	var b strings.Builder
	if doc != "" {
		b.WriteString("Description: " + doc + "\n\n")
	}
	b.WriteString("Methods:\n")
	c.writeTree(&b, rest, "")
	return strings.TrimRight(b.String(), "\n"), nil
}

// writeTree renders the tools (first) and namespaces under prefix.
func (c *catalog) writeTree(b *strings.Builder, prefix, indent string) {
	tools, subs := c.children(prefix)
	n := len(tools) + len(subs)
	i := 0
	for _, t := range tools {
		i++
		b.WriteString(indent + connector(i == n) + t + "()\n")
	}
	for _, s := range subs {
		i++
		b.WriteString(indent + connector(i == n) + s + "\n")
		child := s
		if prefix != "" {
			child = prefix + "." + s
		}
		next := indent + "│   "
		if i == n {
			next = indent + "    "
		}
		c.writeTree(b, child, next)
	}
}

func connector(last bool) string {
	if last {
		return "└── "
	}
	return "├── "
}

// toolDoc is what help(ns.tool) and sbx.inspect return for a tool.
func toolDoc(t *sdk.ToolInfo) map[string]any {
	doc := map[string]any{
		"description": t.Description,
		"parameters":  rawOrEmptyObject(t.InputSchema),
		"output":      cleanOutput(t.OutputSchema),
	}
	return doc
}

func rawOrEmptyObject(s json.RawMessage) any {
	if len(s) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// cleanOutput simplifies an output schema for reading: "x-" keys go, and a
// schema whose only property is "result" becomes that property's schema.
func cleanOutput(s json.RawMessage) any {
	if len(s) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(s, &m); err != nil {
		return s
	}
	for k := range m {
		if strings.HasPrefix(k, "x-") {
			delete(m, k)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok && len(props) == 1 {
		if res, ok := props["result"]; ok {
			return res
		}
	}
	return m
}
