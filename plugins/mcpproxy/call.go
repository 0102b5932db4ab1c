package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parselbox/parselbox/sdk"
)

// handler runs one of the server's tools.
func (p *proxy) handler(e *entry) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args, err := arguments(req.Arguments, e.required)
		if err != nil {
			return nil, err
		}
		s, err := p.current(ctx)
		if err != nil {
			return nil, err
		}
		res, err := s.callTool(ctx, e.mcpName, args, req)
		if err != nil {
			return nil, p.callError(ctx, s, e.mcpName, err)
		}
		content, err := resultValue(e.mcpName, res)
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: content}, nil
	}
}

// arguments checks that the arguments are an object that has the required
// ones (the server checks the rest).
func arguments(raw json.RawMessage, required []string) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "arguments must be a JSON object")
	}
	for _, name := range required {
		if _, ok := obj[name]; !ok {
			return nil, sdk.Errorf(sdk.CodeInvalidArgument, "missing required argument %q", name)
		}
	}
	return raw, nil
}

// callTool calls the tool. A task call (ns.tool.task()) asks the server
// for progress notifications, and gets them and the server's log
// notifications in its log, up to its result.
func (s *session) callTool(ctx context.Context, name string, args json.RawMessage, req *sdk.CallToolRequest) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if req.TaskID == "" {
		return s.cs.CallTool(ctx, params)
	}
	c := &call{token: fmt.Sprintf("pbx-%d", s.next.Add(1)), req: req}
	params.SetProgressToken(c.token)
	if s.info.ProtocolVersion >= newProtocol {
		params.Meta[mcp.MetaKeyLogLevel] = logLevel
	}
	s.mu.Lock()
	s.calls[c.token] = c
	s.mu.Unlock()
	res, err := s.cs.CallTool(ctx, params)
	if err == nil {
		// The client returns the result at once but handles notifications
		// in order on another goroutine: let those sent before the result
		// reach the log first.
		s.obs.settle(settleTimeout, c.token, logKey)
	}
	s.mu.Lock()
	delete(s.calls, c.token)
	s.mu.Unlock()
	s.obs.forget(c.token)
	return res, err
}

// callError turns the failure of a tools/call into the error Python sees.
func (p *proxy) callError(ctx context.Context, s *session, tool string, err error) error {
	name := s.cfg.Name
	if ctx.Err() != nil {
		return ctx.Err() // CancelledError, or TimeoutError for a deadline
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		switch we.Code {
		case jsonrpc.CodeInvalidParams:
			return sdk.Errorf(sdk.CodeInvalidArgument, "%s", we.Message)
		case jsonrpc.CodeMethodNotFound:
			return sdk.Errorf(sdk.CodeNotFound, "MCP server %q: %s", name, we.Message)
		}
		return sdk.Errorf(sdk.CodeInternal, "MCP server %q: %s", name, we.Message)
	}
	// Not an answer from the server: is the connection gone?
	var exited <-chan struct{}
	if s.proc != nil {
		exited = s.proc.exited
	}
	select {
	case <-s.done:
	case <-exited:
	case <-time.After(300 * time.Millisecond):
		return sdk.Errorf(sdk.CodeInternal, "MCP server %q: calling tool %q: %s", name, tool, safeURLs(err.Error()))
	}
	go s.close()
	s.closing.Store(true)
	return sdk.Errorf(sdk.CodeUnavailable, "MCP server %q stopped while running tool %q (%s); it is started again on the next call",
		name, tool, s.how())
}

// resultValue is the Python value of a tool's result:
//   - isError: a RuntimeError with the server's text;
//   - structuredContent: that value, except that {"result": x} is x;
//   - no content: None;
//   - one text block: the text, or the value it holds when it is a JSON
//     object or array;
//   - anything else: a list of the content blocks as MCP writes them
//     ({"type": "text", "text": ...}, {"type": "image", "mimeType": ...,
//     "data": ...}, ...), with image and audio data and resource blobs as
//     bytes.
func resultValue(tool string, res *mcp.CallToolResult) (json.RawMessage, error) {
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok && strings.TrimSpace(t.Text) != "" {
				texts = append(texts, t.Text)
			}
		}
		if len(texts) == 0 {
			return nil, sdk.Errorf(sdk.CodeInternal, "tool %q failed (the server gave no message)", tool)
		}
		return nil, sdk.Errorf(sdk.CodeInternal, "%s", strings.Join(texts, "\n"))
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, sdk.Errorf(sdk.CodeInternal, "tool %q: structured result: %v", tool, err)
		}
		var wrapped map[string]json.RawMessage
		if json.Unmarshal(b, &wrapped) == nil && len(wrapped) == 1 && wrapped["result"] != nil {
			return wrapped["result"], nil
		}
		return b, nil
	}
	switch {
	case len(res.Content) == 0:
		return json.RawMessage("null"), nil
	case len(res.Content) == 1:
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			return textValue(t.Text), nil
		}
	}
	blocks := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		v, err := blockValue(c)
		if err != nil {
			return nil, sdk.Errorf(sdk.CodeInternal, "tool %q: content block: %v", tool, err)
		}
		blocks = append(blocks, v)
	}
	return json.Marshal(blocks)
}

// textValue is a text block's value: a JSON object or array as the value it
// holds (many servers return JSON as text), anything else as the string.
// Text that merely looks like a number or a boolean stays a string.
func textValue(text string) json.RawMessage {
	t := bytes.TrimSpace([]byte(text))
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return t
	}
	b, _ := json.Marshal(text)
	return b
}

// blockValue is a content block as MCP writes it, with its base64 fields
// ("data" of images and audio, "blob" of resources) in the sandbox's form
// of bytes, {"__b64__": ...}.
func blockValue(c mcp.Content) (any, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	asBytes := func(m map[string]any, key string) {
		if s, ok := m[key].(string); ok {
			m[key] = map[string]any{"__b64__": s}
		}
	}
	switch m["type"] {
	case "image", "audio":
		asBytes(m, "data")
	case "resource":
		if r, ok := m["resource"].(map[string]any); ok {
			asBytes(r, "blob")
		}
	}
	return m, nil
}
