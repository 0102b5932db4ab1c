package router

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// toolkit is the built-in sbx namespace: discovery over every other
// namespace. The router calls it directly with Python's arguments.
type toolkit struct{ r *Router }

var toolkitTools = []sdk.ToolInfo{
	{Name: "help", Description: "The guide to this sandbox: how to run code, find and call tools, run tasks."},
	{Name: "info", Description: "What this sandbox has: namespaces, globals, mounts, network and limits. Start here.",
		OutputSchema: json.RawMessage(`{"type":"object"}`)},
	{Name: "search", Description: "Find tools across all namespaces by a regular expression (or plain text) matched against path, description and parameters.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`),
		Params:      []string{"pattern"}},
	{Name: "inspect", Description: "Details of tools or namespaces by dotted name: description, parameters (JSON Schema) and output.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}}}}`),
		Params:      []string{"names"}},
	{Name: "preview", Description: "A structure-preserving summary of large or nested data: lists keep 2 items, long strings are cut, keys are kept.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"data":{}},"required":["data"]}`),
		Params:      []string{"data"}},
}

func (t *toolkit) Describe(context.Context) (*sdk.Description, error) {
	return &sdk.Description{Name: "sbx", Description: "Discovery tools for this sandbox.", Tools: toolkitTools}, nil
}

func (t *toolkit) Configure(context.Context, *sdk.ConfigureRequest) error { return nil }

// CallTool serves callers outside the sandbox (arguments by name).
func (t *toolkit) CallTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	var kw map[string]json.RawMessage
	if len(req.Arguments) > 0 {
		if err := json.Unmarshal(req.Arguments, &kw); err != nil {
			return nil, err
		}
	}
	v, err := t.call(ctx, req.Name, nil, kw)
	if err != nil {
		return &sdk.CallToolResult{IsError: true, Error: &sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: err.Error()}}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.CallToolResult{Content: b}, nil
}

func (t *toolkit) call(ctx context.Context, name string, args []json.RawMessage, kwargs map[string]json.RawMessage) (any, error) {
	r := t.r
	arg := func(key string) (json.RawMessage, bool) {
		if v, ok := kwargs[key]; ok {
			return v, true
		}
		if len(args) > 0 {
			return args[0], true
		}
		return nil, false
	}
	switch name {
	case "help":
		if r.opts.Guide == nil {
			return "", nil
		}
		return r.opts.Guide(), nil
	case "info":
		return r.info(), nil
	case "search":
		raw, _ := arg("pattern")
		var pattern string
		if len(raw) > 0 && json.Unmarshal(raw, &pattern) != nil {
			return nil, pyErr("TypeError", "sbx.search(pattern): pattern must be a string")
		}
		return r.search(ctx, pattern), nil
	case "inspect":
		var names []string
		list := args
		if v, ok := kwargs["names"]; ok {
			list = []json.RawMessage{v}
		}
		for _, a := range list {
			var one string
			var many []string
			switch {
			case json.Unmarshal(a, &one) == nil:
				names = append(names, one)
			case json.Unmarshal(a, &many) == nil:
				names = append(names, many...)
			default:
				return nil, pyErr("TypeError", "sbx.inspect(*names): names are strings or namespace objects")
			}
		}
		return r.inspect(ctx, names), nil
	case "preview":
		raw, ok := arg("data")
		if !ok {
			return nil, pyErr("TypeError", "sbx.preview(data): missing data")
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, pyErr("ValueError", "sbx.preview: %v", err)
		}
		return Preview(v), nil
	}
	return nil, pyErr("AttributeError", "Tool 'sbx.%s' not found", name)
}

// info is sbx.info(): the host's facts plus the namespaces.
func (r *Router) info() map[string]any {
	out := map[string]any{}
	if r.opts.Info != nil {
		for k, v := range r.opts.Info() {
			out[k] = v
		}
	}
	ctx, _ := out["context"].(map[string]any)
	if ctx == nil {
		ctx = map[string]any{}
		out["context"] = ctx
	}
	var names []string
	for _, n := range r.Namespaces() {
		names = append(names, fmt.Sprintf("%s.* (%s)", n.Name, n.Kind))
	}
	ctx["namespaces"] = names
	return out
}

// search is sbx.search(pattern): tools whose path, description or
// parameters match, grouped by namespace. The pattern is a case-insensitive
// regular expression, or plain text when it does not compile.
func (r *Router) search(ctx context.Context, pattern string) map[string][]map[string]string {
	out := map[string][]map[string]string{}
	if strings.TrimSpace(pattern) == "" {
		return out
	}
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(pattern))
	}
	r.mu.RLock()
	order := append([]string(nil), r.order...)
	r.mu.RUnlock()
	for _, name := range order {
		if name == "sbx" {
			continue
		}
		r.mu.RLock()
		ns := r.namespaces[name]
		r.mu.RUnlock()
		key := fmt.Sprintf("%s (%s)", name, ns.kind)
		c := ns.catalog(ctx, discoveryAge)
		for _, py := range slices.Sorted(maps.Keys(c.alias)) {
			t := c.tools[c.alias[py]]
			path := joinPath(name, py)
			hay := path + " " + t.Description + " " + strings.Join(t.Params, " ") + " " + t.Name
			if re.MatchString(hay) {
				out[key] = append(out[key], map[string]string{"path": path, "description": firstChars(t.Description, 120)})
			}
		}
	}
	return out
}

// inspect is sbx.inspect(*names).
func (r *Router) inspect(ctx context.Context, names []string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		ns, rest, err := r.lookup(n)
		if err != nil {
			continue // unknown namespaces are left out
		}
		c := ns.catalog(ctx, discoveryAge)
		if name, ok := c.alias[rest]; ok {
			out[n] = toolDoc(c.tools[name])
			continue
		}
		tools, subs := c.children(rest)
		if len(tools)+len(subs) == 0 {
			out[n] = map[string]string{"error": fmt.Sprintf("'%s' not found", n)}
			continue
		}
		if tools == nil {
			tools = []string{}
		}
		if subs == nil {
			subs = []string{}
		}
		out[n] = map[string]any{"methods": tools, "namespaces": subs}
	}
	return out
}

func firstChars(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Preview summarizes data keeping its shape: lists keep their first 2 items
// and say how many more there are, strings over 200 characters are cut,
// dicts keep every key, and anything nested deeper than 4 levels is elided.
func Preview(v any) any { return preview(v, 0) }

func preview(v any, depth int) any {
	if depth > 4 {
		return "...(max depth reached)"
	}
	switch x := v.(type) {
	case []any:
		n := len(x)
		keep := min(n, 2)
		out := make([]any, 0, keep+1)
		for _, e := range x[:keep] {
			out = append(out, preview(e, depth+1))
		}
		if n > keep {
			more := n - keep
			out = append(out, fmt.Sprintf("...(%d more item%s)", more, plural(more)))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = preview(e, depth+1)
		}
		return out
	case string:
		if r := []rune(x); len(r) > 200 {
			return string(r[:200]) + "..."
		}
		return x
	default:
		return v
	}
}

var _ sdk.BridgeServer = (*toolkit)(nil)
