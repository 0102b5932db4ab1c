package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/protocol"
	"github.com/parselbox/parselbox/sdk"
)

// callParams is a tool call from Python: ns.a.b(*args, **kwargs).
type callParams struct {
	Path   string                     `json:"path"`
	Args   []json.RawMessage          `json:"args"`
	Kwargs map[string]json.RawMessage `json:"kwargs"`
	TaskID string                     `json:"task_id"`
}

// call runs a tool call and returns its result as the bridge encoded it,
// with the bridge's secrets removed; every byte of it, of its error and of
// what it logs (a task's log) passes the bridge's redactor here, whoever
// the caller is (the sandbox, or a bridge calling back into the host).
func (r *Router) call(ctx context.Context, p *callParams) (json.RawMessage, error) {
	e := r.current()
	var rec *CallRecord // only when there is a Recorder: most calls have none
	if r.opts.Recorder != nil {
		rec = &CallRecord{Tool: p.Path, TaskID: p.TaskID, Start: time.Now()}
		rec.Bridge, _, _ = strings.Cut(p.Path, ".")
		if e != nil {
			rec.ExecutionID, rec.Session = e.ID, e.Session
		}
	}
	res, err := r.route(ctx, p, rec)
	if rec != nil && rec.Bridge != "sbx" {
		r.record(e, rec, err)
	}
	return res, err
}

// record hands a finished call to the recorder.
func (r *Router) record(e *Execution, rec *CallRecord, err error) {
	rec.Duration = time.Since(rec.Start)
	var re *sandbox.RemoteError
	switch {
	case err == nil:
		rec.Outcome = "ok"
	case errors.As(err, &re):
		rec.ErrorType, rec.Error = re.Type, re.Message
		switch {
		case rec.Outcome == "refused":
		case re.Type == sdk.CodeCancelled.Python():
			rec.Outcome = "cancelled"
		default:
			rec.Outcome = "error"
		}
	default:
		rec.Outcome, rec.Error = "error", err.Error()
	}
	rec.Tool, rec.Error = recordedText(rec.Tool), recordedText(rec.Error)
	ctx := context.Background()
	if e != nil {
		ctx = e.ctx
		rec.Seq = int(e.calls.Add(1))
	}
	r.opts.Recorder.ToolCall(ctx, rec)
}

// recordedText bounds a string of the guest's choosing (a tool path, an
// error's message) in a record as arguments are: longer ones are kept as
// their start, and say how long they were.
func recordedText(s string) string {
	if len(s) <= maxRecordedArgs {
		return s
	}
	return strings.ToValidUTF8(s[:maxRecordedArgs], "") + fmt.Sprintf("... (%d bytes)", len(s))
}

// maxRecordedArgs bounds the arguments kept in a call's record; longer
// ones are kept as the start of their JSON text.
const maxRecordedArgs = 16 << 10

func recordedArgs(args json.RawMessage, red *sdk.Redactor) json.RawMessage {
	args = red.RedactJSON(args)
	if len(args) <= maxRecordedArgs {
		return args
	}
	head := strings.ToValidUTF8(string(args[:maxRecordedArgs]), "")
	b, _ := json.Marshal(map[string]any{"truncated": true, "bytes": len(args), "head": head})
	return b
}

// route resolves, checks and runs a call, filling in rec as it learns
// (rec is nil when calls are not recorded).
func (r *Router) route(ctx context.Context, p *callParams, rec *CallRecord) (json.RawMessage, error) {
	ns, tool, err := r.tool(ctx, p.Path)
	if ns == nil && rec != nil {
		// Not a namespace: the path's first part is the guest's own
		// making, not a bridge (nor a label of the metrics).
		rec.Bridge = ""
	}
	if err != nil {
		return nil, r.refuse(p, rec, err)
	}
	red := ns.redactor()
	args, err := bindArgs(tool, p.Args, p.Kwargs)
	if err != nil {
		return nil, r.refuse(p, rec, pyErr(sdk.CodeInvalidArgument, "%s: %v", p.Path, err))
	}
	call := &Call{Path: joinPath(ns.name, tool.Name), Arguments: args, TaskID: p.TaskID}
	if rec != nil {
		rec.Tool = call.Path
		if !ns.builtin {
			rec.Arguments = recordedArgs(args, red)
		}
	}
	if e := r.current(); e != nil && !ns.builtin {
		if err := e.budget.take(ns.name, ns.policy); err != nil {
			return nil, r.refuse(p, rec, err)
		}
	}
	if h := r.opts.Hooks; h != nil && !ns.builtin {
		if err := h.PreToolCall(ctx, call); err != nil {
			return nil, r.refuse(p, rec, pyErr(sdk.CodePermission, "%v", err))
		}
	}
	req := &sdk.CallToolRequest{Name: tool.Name, Arguments: args, TaskID: p.TaskID}
	var events sdk.EventSink
	if p.TaskID != "" {
		t, tctx, err := r.tasks.begin(ctx, p.TaskID)
		if err != nil {
			return nil, err
		}
		defer r.tasks.end(t)
		ctx = tctx
		events, req.Inbox = t, t.inbox
	}
	if e := r.current(); e != nil && e.progress != nil && !ns.builtin {
		// The execution's front end shows the call's lines as they come.
		events = toolEvents{sink: e.progress, path: call.Path, next: events}
	}
	if events != nil {
		req.Events = red.RedactEvents(events)
	}
	res, err := ns.bridge.CallTool(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, pyErr(sdk.CodeCancelled, "%s was cancelled", call.Path)
		}
		if te, ok := errors.AsType[*sdk.ToolError](err); ok {
			return nil, pythonError(te, red)
		}
		return nil, pyErr(sdk.CodeUnavailable, "bridge %q: %s", ns.name, red.Redact(err.Error()))
	}
	if res.IsError {
		te := res.Error
		if te == nil {
			te = &sdk.ToolError{Code: sdk.CodeInternal, Message: string(res.Content)}
		}
		return nil, pythonError(te, red)
	}
	content := res.Content
	if len(content) == 0 {
		content = protocol.NullJSON
	}
	content = red.RedactJSON(content)
	if h := r.opts.Hooks; h != nil && !ns.builtin {
		if err := h.PostToolCall(ctx, call, content); err != nil {
			return nil, pyErr(sdk.CodePermission, "%v", err)
		}
	}
	return content, nil
}

// refuse returns err, that of a call stopped before it ran: its task is
// forgotten, and a PermissionError is recorded as a refusal (rec is nil
// when calls are not recorded).
func (r *Router) refuse(p *callParams, rec *CallRecord, err error) error {
	if re, ok := errors.AsType[*sandbox.RemoteError](err); ok && re.Type == sdk.CodePermission.Python() && rec != nil {
		rec.Outcome = "refused"
	}
	r.tasks.forget(p.TaskID)
	return err
}

// bindArgs maps positional arguments onto the tool's parameters in order
// (the remaining ones onto a variadic last parameter, as a list), merges
// the keyword arguments and returns the JSON object of arguments, keys
// sorted and values compact, written in one pass over the values as Python
// encoded them. Bytes from Python ({"__b64__": s}) become base64 strings,
// the JSON form of []byte in Go.
func bindArgs(tool *sdk.ToolInfo, args []json.RawMessage, kwargs map[string]json.RawMessage) (json.RawMessage, error) {
	fixed := len(tool.Params)
	if tool.Variadic && fixed > 0 {
		fixed--
	} else if len(args) > fixed {
		return nil, fmt.Errorf("takes %d positional argument%s but %d %s given (%s)",
			fixed, plural(fixed), len(args), were(len(args)), strings.Join(tool.Params, ", "))
	}
	obj := make(map[string]json.RawMessage, len(args)+len(kwargs))
	for i, a := range args[:min(len(args), fixed)] {
		obj[tool.Params[i]] = a
	}
	if rest := args[min(len(args), fixed):]; len(rest) > 0 {
		list := []byte("[")
		for i, a := range rest {
			if i > 0 {
				list = append(list, ',')
			}
			list = append(list, a...)
		}
		obj[tool.Params[fixed]] = append(list, ']')
	}
	for k, v := range kwargs {
		if _, dup := obj[k]; dup {
			return nil, fmt.Errorf("got multiple values for argument %q", k)
		}
		obj[k] = v
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(obj)) {
		if i > 0 {
			buf.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		buf.Write(name)
		buf.WriteByte(':')
		if err := json.Compact(&buf, obj[k]); err != nil {
			return nil, fmt.Errorf("argument %q is not JSON: %v", k, err)
		}
	}
	buf.WriteByte('}')
	out := buf.Bytes()
	if bytes.Contains(out, b64Marker) {
		out = b64Value.ReplaceAll(out, []byte(`"$1"`))
	}
	return out, nil
}

var (
	b64Marker = []byte(`{"` + sdk.BytesKey + `":`)
	// b64Value matches Python's bytes in compact JSON. It cannot match
	// inside a JSON string, where the quote after "{" would be escaped.
	b64Value = regexp.MustCompile(`\{"` + sdk.BytesKey + `":"([A-Za-z0-9+/=]*)"\}`)
)

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

// joinPath is the dotted path of name under prefix: a tool's full path
// (a callable namespace's tool is named ""), or a path under a nested
// namespace ("" is the namespace itself).
func joinPath(prefix, name string) string {
	switch {
	case name == "":
		return prefix
	case prefix == "":
		return name
	}
	return prefix + "." + name
}
