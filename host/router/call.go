package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// callParams is a tool call from Python: ns.a.b(*args, **kwargs).
type callParams struct {
	Path   string                     `json:"path"`
	Args   []json.RawMessage          `json:"args"`
	Kwargs map[string]json.RawMessage `json:"kwargs"`
	TaskID string                     `json:"task_id"`
}

func (r *Router) call(ctx context.Context, p *callParams) (any, error) {
	ns, tool, err := r.tool(ctx, p.Path)
	if err != nil {
		if p.TaskID != "" {
			r.tasks.abandon(p.TaskID)
		}
		return nil, err
	}
	if t, ok := ns.bridge.(*toolkit); ok {
		// sbx takes its arguments as Python gave them (sbx.inspect(*names)).
		return t.call(ctx, tool.Name, p.Args, p.Kwargs)
	}
	args, err := bindArgs(tool, p.Args, p.Kwargs)
	if err != nil {
		if p.TaskID != "" {
			r.tasks.abandon(p.TaskID)
		}
		return nil, pyErr("ValueError", "%s: %v", p.Path, err)
	}
	call := &Call{Path: joinPath(ns.name, tool.Name), Arguments: args, TaskID: p.TaskID}
	if h := r.opts.Hooks; h != nil {
		if err := h.PreToolCall(ctx, call); err != nil {
			if p.TaskID != "" {
				r.tasks.abandon(p.TaskID)
			}
			return nil, pyErr("PermissionError", "%v", err)
		}
	}
	req := &sdk.CallToolRequest{Name: tool.Name, Arguments: args, TaskID: p.TaskID}
	if p.TaskID != "" {
		t, tctx, err := r.tasks.begin(ctx, p.TaskID)
		if err != nil {
			return nil, err
		}
		defer r.tasks.end(t)
		ctx = tctx
		req.Events, req.Inbox = t, t.inbox
	}
	res, err := ns.bridge.CallTool(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, pyErr("CancelledError", "%s was cancelled", call.Path)
		}
		var te *sdk.ToolError
		if errors.As(err, &te) {
			return nil, pythonError(te)
		}
		return nil, pyErr("ConnectionError", "bridge %q: %v", ns.name, err)
	}
	if res.IsError {
		te := res.Error
		if te == nil {
			te = &sdk.ToolError{Code: sdk.CodeInternal, Message: string(res.Content)}
		}
		return nil, pythonError(te)
	}
	content := res.Content
	if len(content) == 0 {
		content = json.RawMessage("null")
	}
	if h := r.opts.Hooks; h != nil {
		if err := h.PostToolCall(ctx, call, content); err != nil {
			return nil, pyErr("PermissionError", "%v", err)
		}
	}
	return content, nil
}

// bindArgs maps positional arguments onto the tool's parameters in order,
// merges the keyword arguments and returns the JSON object of arguments.
// Bytes from Python ({"__b64__": s}) become base64 strings, the JSON form
// of []byte in Go.
func bindArgs(tool *sdk.ToolInfo, args []json.RawMessage, kwargs map[string]json.RawMessage) (json.RawMessage, error) {
	if len(args) > len(tool.Params) {
		return nil, fmt.Errorf("takes %d positional argument%s but %d %s given (%s)",
			len(tool.Params), plural(len(tool.Params)), len(args), were(len(args)), strings.Join(tool.Params, ", "))
	}
	obj := make(map[string]json.RawMessage, len(args)+len(kwargs))
	for i, a := range args {
		obj[tool.Params[i]] = a
	}
	for k, v := range kwargs {
		if _, dup := obj[k]; dup {
			return nil, fmt.Errorf("got multiple values for argument %q", k)
		}
		obj[k] = v
	}
	for k, v := range obj {
		obj[k] = unwrapBytes(v)
	}
	return json.Marshal(obj)
}

var b64Marker = []byte(`"__b64__"`)

// unwrapBytes replaces {"__b64__": s} by s, anywhere in v.
func unwrapBytes(v json.RawMessage) json.RawMessage {
	if !bytes.Contains(v, b64Marker) {
		return v
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return v
	}
	out, err := json.Marshal(replaceBytes(x))
	if err != nil {
		return v
	}
	return out
}

func replaceBytes(x any) any {
	switch v := x.(type) {
	case map[string]any:
		if s, ok := v["__b64__"].(string); ok && len(v) == 1 {
			return s
		}
		for k, e := range v {
			v[k] = replaceBytes(e)
		}
	case []any:
		for i, e := range v {
			v[i] = replaceBytes(e)
		}
	}
	return x
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// joinPath is a tool's full path; a callable namespace's tool is named "".
func joinPath(ns, tool string) string {
	if tool == "" {
		return ns
	}
	return ns + "." + tool
}
