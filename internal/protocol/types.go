package protocol

import (
	"context"
	"encoding/json"
	"slices"
)

// BridgeServer is what the host talks to. It is implemented by a bridge
// (sdk.Bridge), by the host-side gRPC proxy of a plugin process, and by the
// host's plugin manager, so that the host routes a call the same way
// wherever the bridge lives.
type BridgeServer interface {
	// Describe lists the bridge's namespaces and tools.
	Describe(ctx context.Context) (*Description, error)
	// Configure hands the bridge its configuration block, once, before any
	// call. The bridge decodes and validates it, and reports the secrets it
	// holds with req.AddSecrets; an error (a *ConfigError naming the key) is
	// reported by the host as `bridge "NAME": invalid configuration: ...`.
	Configure(ctx context.Context, req *ConfigureRequest) error
	// CallTool runs one tool. A tool that fails returns a result with IsError
	// set (the model sees it as an exception); an error return means the call
	// could not be made at all (the bridge is gone, the request is malformed).
	CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)
}

// Shutdowner is implemented by bridges that want to clean up before their
// process is stopped. It is called best-effort.
type Shutdowner interface {
	Shutdown(ctx context.Context) error
}

// Description is the answer to Describe.
type Description struct {
	// Name and Version identify the bridge implementation.
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Description is the bridge's doc text, shown by help(ns).
	Description string `json:"description,omitempty"`
	// Namespaces lists nested namespaces by dotted path ("files",
	// "files.remote") with their descriptions. A namespace that holds tools
	// but is not listed here exists anyway, without a description.
	Namespaces []NamespaceInfo `json:"namespaces,omitempty"`
	// Tools lists every tool by its dotted path relative to the bridge's
	// namespace: "greet", "files.read". A tool named "" is the namespace
	// itself, which is then callable (ns(...) in Python).
	Tools []ToolInfo `json:"tools"`
}

// Clone returns a deep copy of d.
func (d *Description) Clone() *Description {
	if d == nil {
		return nil
	}
	out := *d
	out.Namespaces = slices.Clone(d.Namespaces)
	out.Tools = make([]ToolInfo, len(d.Tools))
	for i, t := range d.Tools {
		out.Tools[i] = t.Clone()
	}
	return &out
}

// NamespaceInfo describes a nested namespace.
type NamespaceInfo struct {
	Path        string `json:"path"`
	Description string `json:"description,omitempty"`
}

// ToolInfo describes one tool.
type ToolInfo struct {
	// Name is the tool's dotted path within the bridge. It may contain
	// characters that are not valid in a Python identifier; the sandbox
	// exposes those with "_" in their place.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments: an object schema whose
	// properties are the parameters. A parameter's "default" is what the
	// tool gets when the caller leaves it out.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// OutputSchema is the JSON Schema of the result, if known.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Params lists the parameter names in declaration order; positional
	// arguments from Python map onto them in this order.
	Params []string `json:"params,omitempty"`
	// Variadic reports that the last of Params takes the remaining
	// positional arguments, as a list.
	Variadic bool `json:"variadic,omitempty"`
	// ReadOnly reports that the tool changes nothing outside itself (an MCP
	// tool's readOnlyHint). A host may keep only such tools.
	ReadOnly bool `json:"read_only,omitempty"`
}

// Clone returns a deep copy of t.
func (t ToolInfo) Clone() ToolInfo {
	t.InputSchema = slices.Clone(t.InputSchema)
	t.OutputSchema = slices.Clone(t.OutputSchema)
	t.Params = slices.Clone(t.Params)
	return t
}

// ConfigureRequest carries a bridge's configuration to it, and the secrets
// the bridge finds there back to the host.
type ConfigureRequest struct {
	// Config is the bridge's `config` block from the host's configuration
	// file, as JSON. It is "{}" when the block is absent.
	Config json.RawMessage
	// Host, when the host offers it, lets the bridge call back into the host
	// (see HostClient). It is nil for bridges tested in isolation.
	Host HostClient

	secrets []string
}

// AddSecrets reports values that the host must keep out of everything the
// sandbox sees: the credentials in the configuration (a token, the value
// of an Authorization header, a URL's password). The host removes them, in
// their common encodings too, from every result, error, log line and
// progress message of the bridge. Empty values are ignored. A bridge calls
// it during Configure (sdk.DecodeConfig does it for every sdk.Secret); it
// is not safe for concurrent use.
func (r *ConfigureRequest) AddSecrets(values ...string) {
	for _, v := range values {
		if v != "" && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
}

// Secrets returns the values reported with AddSecrets: after Configure
// returns, the caller reads what the bridge reported.
func (r *ConfigureRequest) Secrets() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.secrets)
}

// HostClient is the host's side of callbacks from a bridge.
type HostClient interface {
	// CallTool calls a tool of any namespace configured in the host, by its
	// full dotted path ("otherbridge.tool"), with JSON arguments.
	CallTool(ctx context.Context, path string, arguments json.RawMessage) (*CallToolResult, error)
}

// CallToolRequest is one call of a tool.
//
// On the host side, the caller fills Name, Arguments and TaskID, and may set
// Events to receive the call's log lines and progress and Inbox to send
// messages into the running call. A tool reads them through the methods
// Log, Progress and Messages, which work the same whether the bridge runs in
// the host's process or in a plugin.
type CallToolRequest struct {
	// Name is the tool's dotted path within the bridge.
	Name string
	// Arguments is a JSON object of named arguments ("{}" for none).
	Arguments json.RawMessage
	// TaskID is set when the call runs as a background task (ns.tool.task()).
	TaskID string

	// Events receives what the tool reports while it runs. May be nil.
	Events EventSink
	// Inbox delivers messages sent into the running call (task.send()), in
	// order. May be nil. It is never closed by the host: stop reading when
	// the call's context is done.
	Inbox <-chan json.RawMessage
}

// EventSink receives the log lines and progress of a running call.
type EventSink interface {
	Log(line string)
	Progress(progress, total float64, message string)
}

// Log appends a line to the call's log (a task's log, shown by task.tail()).
// It is a no-op when nobody listens.
func (r *CallToolRequest) Log(line string) {
	if r != nil && r.Events != nil {
		r.Events.Log(line)
	}
}

// Progress reports progress of the call; total is 0 when unknown.
func (r *CallToolRequest) Progress(progress, total float64, message string) {
	if r != nil && r.Events != nil {
		r.Events.Progress(progress, total, message)
	}
}

// Messages returns the channel of messages sent into the running call, in
// the order they were sent. It returns nil (a channel that never delivers)
// when the call accepts none.
func (r *CallToolRequest) Messages() <-chan json.RawMessage {
	if r == nil {
		return nil
	}
	return r.Inbox
}

// CallToolResult is the outcome of a call.
type CallToolResult struct {
	// Content is the result as JSON ("null" for none). Bytes are an object
	// {"__b64__": "<base64>"} (BytesKey), which the sandbox turns into
	// Python bytes.
	Content json.RawMessage
	// IsError reports that the tool failed; Error says how.
	IsError bool
	Error   *ToolError
}

// BytesKey is the key of the one-key JSON object {"__b64__": "<base64>"}
// that stands for bytes in arguments and results: Python bytes arrive so,
// and a result holding one becomes Python bytes in the sandbox.
const BytesKey = "__b64__"

// NullJSON is the JSON of "no value".
var NullJSON = json.RawMessage("null")
