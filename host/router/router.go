package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/protocol"
	"github.com/parselbox/parselbox/sdk"
)

// Call is a tool call from the sandbox, as hooks see it.
type Call struct {
	// Path is the tool's full dotted path: "namespace.tool".
	Path string
	// Arguments are the named arguments as a JSON object.
	Arguments json.RawMessage
	// TaskID is set for background calls (ns.tool.task()).
	TaskID string
}

// Hooks observe and may refuse tool calls. A PreToolCall error refuses the
// call: Python sees a PermissionError with the error's text.
type Hooks interface {
	PreToolCall(ctx context.Context, call *Call) error
	PostToolCall(ctx context.Context, call *Call, result json.RawMessage) error
}

// Options configure a Router.
type Options struct {
	Logger hclog.Logger
	// TaskDir is the host directory for task logs (the workspace's
	// .parselbox/tasks, which Python reads as /workspace/.parselbox/tasks).
	TaskDir string
	// Hooks, if set, see every tool call.
	Hooks Hooks
	// Guide returns the guide text for help() and sbx.help().
	Guide func() string
	// Info returns what sbx.info() reports besides the namespaces.
	Info func() map[string]any
	// Policies say which tools of a namespace (by its name) the sandbox
	// may call, and how often per execution. A tool a policy refuses is
	// absent from discovery, and a call to it is a PermissionError that
	// names the rule.
	Policies map[string]Policy
	// Recorder, if set, keeps the audit trail of executions and tool calls.
	Recorder Recorder
}

// Router routes the sandbox's tool calls to bridges. It serves the
// sandbox's requests (it is a sandbox.Handler) and answers the discovery
// calls (help, dir, sbx.*) from the bridges' descriptions.
type Router struct {
	opts Options
	log  hclog.Logger

	mu         sync.RWMutex
	namespaces map[string]*namespace
	order      []*namespace // in the order added

	policies map[string]Policy // by namespace, for Add

	tasks tasks
	exec  atomic.Pointer[Execution] // the running execution, if any
}

// namespace is one bridge, by the name it has in Python.
type namespace struct {
	name   string
	kind   string
	bridge sdk.BridgeServer
	// dynamic bridges may change their tools (an MCP server's list_changed):
	// their catalog is described again when stale. Other bridges are
	// described once.
	dynamic bool
	// plugin: a plugin bridge (not an MCP server, not a Go value); kind
	// becomes the plugin's own name.
	plugin bool
	// builtin is the router's own sbx: its calls are discovery, not tool
	// calls, and hooks do not see them.
	builtin bool
	// secrets returns the bridge's redactor, nil when the host knows no
	// secrets of it.
	secrets func() *sdk.Redactor
	// policy limits the tools the sandbox may call (nil: all of them).
	policy *Policy

	mu  sync.Mutex // serializes refreshes
	cat atomic.Pointer[catalog]
}

// catalog is what a bridge described, indexed.
type catalog struct {
	desc   *sdk.Description
	at     time.Time
	tools  map[string]*sdk.ToolInfo // by the tool's own name
	alias  map[string]string        // Python path → the tool's own name
	nsDocs map[string]string        // nested namespace path → description
	// denied are the tools the namespace's policy refuses, by their own
	// name and their Python path: why. They are in no other index, so
	// discovery does not show them.
	denied map[string]string
}

// newCatalog indexes what a bridge described, with red's secrets removed
// from every text the sandbox may see (help, schemas, search), and the
// tools that the policy of namespace ns refuses set apart.
func newCatalog(d *sdk.Description, red *sdk.Redactor, ns string, policy *Policy) *catalog {
	if red != nil {
		d = d.Clone()
		d.Description = red.Redact(d.Description)
		for i := range d.Namespaces {
			d.Namespaces[i].Description = red.Redact(d.Namespaces[i].Description)
		}
		for i := range d.Tools {
			t := &d.Tools[i]
			t.Description = red.Redact(t.Description)
			t.InputSchema, t.OutputSchema = red.RedactJSON(t.InputSchema), red.RedactJSON(t.OutputSchema)
		}
	}
	c := &catalog{
		desc: d, at: time.Now(),
		tools:  map[string]*sdk.ToolInfo{},
		alias:  map[string]string{},
		nsDocs: map[string]string{},
		denied: map[string]string{},
	}
	for i := range d.Tools {
		t := &d.Tools[i]
		py := sdk.PythonName(t.Name)
		if why := policy.refusal(ns, t.ReadOnly, t.Name, py); why != "" {
			c.denied[t.Name], c.denied[py] = why, why
			continue
		}
		c.tools[t.Name] = t
		// Two names that look the same in Python ("a-b" and "a_b"): the
		// first in name order keeps the Python name; the other is still
		// callable by its own name.
		if prev, taken := c.alias[py]; !taken || t.Name < prev {
			c.alias[py] = t.Name
		}
	}
	for _, n := range d.Namespaces {
		c.nsDocs[sdk.PythonName(n.Path)] = n.Description
	}
	return c
}

// Staleness of a dynamic bridge's catalog: discovery describes it again
// after discoveryAge; a call to a tool it does not know, after missAge.
// (Variables, so that tests can shorten them.)
var (
	discoveryAge = 2 * time.Second
	missAge      = 500 * time.Millisecond
)

// catalog returns the bridge's catalog, described again first if the bridge
// is dynamic and the catalog older than maxAge. A failed refresh keeps the
// old catalog.
func (ns *namespace) catalog(ctx context.Context, maxAge time.Duration) *catalog {
	c := ns.cat.Load()
	if !ns.dynamic || time.Since(c.at) < maxAge {
		return c
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if c = ns.cat.Load(); time.Since(c.at) < maxAge {
		return c // refreshed while we waited
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d, err := ns.bridge.Describe(ctx)
	if err != nil {
		return c
	}
	c = newCatalog(d, ns.redactor(), ns.name, ns.policy)
	ns.cat.Store(c)
	return c
}

// redactor returns the bridge's current redactor (nil: no secrets known).
func (ns *namespace) redactor() *sdk.Redactor {
	if ns.secrets == nil {
		return nil
	}
	return ns.secrets()
}

// Secrets is implemented by bridges whose secrets the host knows (the
// plugin manager's bridges: what their configuration passes them, and what
// they report from Configure). The router removes them from everything the
// bridge sends to the sandbox: results, errors, log lines, progress, task
// logs and help.
type Secrets interface {
	Redactor() *sdk.Redactor
}

// New returns a router with the built-in sbx namespace.
func New(opts Options) *Router {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	r := &Router{opts: opts, log: opts.Logger.Named("router"), namespaces: map[string]*namespace{}, policies: map[string]Policy{}}
	maps.Copy(r.policies, opts.Policies)
	r.tasks.init(opts.TaskDir, r.log)
	_ = r.add(context.Background(), &namespace{name: "sbx", kind: "namespace", bridge: newToolkit(r), builtin: true})
	return r
}

// SetPolicy sets the policy of the namespace name, which applies when it is
// added (as Options.Policies do).
func (r *Router) SetPolicy(name string, p Policy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.policies[name] = p
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Add describes a bridge and makes it the namespace name. kind labels it in
// sbx.info() and sbx.search(): "go" (in-process), "mcp", or "plugin", which
// is shown as the bridge's own name ("http", "shell"). MCP bridges, whose
// servers may change their tools, are described again when stale. A bridge
// that implements Secrets has its secrets removed from everything it sends
// to the sandbox.
func (r *Router) Add(ctx context.Context, name, kind string, b sdk.BridgeServer) error {
	if !identifier.MatchString(name) {
		return fmt.Errorf("namespace %q is not a Python identifier", name)
	}
	ns := &namespace{name: name, kind: kind, bridge: b, dynamic: kind == "mcp", plugin: kind == "plugin"}
	r.mu.RLock()
	if p, ok := r.policies[name]; ok {
		ns.policy = &p
	}
	r.mu.RUnlock()
	if s, ok := b.(Secrets); ok {
		ns.secrets = s.Redactor
	}
	return r.add(ctx, ns)
}

func (r *Router) add(ctx context.Context, ns *namespace) error {
	d, err := ns.bridge.Describe(ctx)
	if err != nil {
		return fmt.Errorf("describing bridge %q: %s", ns.name, ns.redactor().Redact(err.Error()))
	}
	if ns.kind == "plugin" && d.Name != "" {
		ns.kind = d.Name // "http", "shell", "greeter": more telling than "plugin"
	}
	ns.cat.Store(newCatalog(d, ns.redactor(), ns.name, ns.policy))
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.namespaces[ns.name]; dup {
		return fmt.Errorf("namespace %q is defined twice", ns.name)
	}
	r.namespaces[ns.name] = ns
	r.order = append(r.order, ns)
	return nil
}

// list returns the namespaces in the order added.
func (r *Router) list() []*namespace {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Bridge returns the bridge of a namespace, nil if there is none.
func (r *Router) Bridge(name string) sdk.BridgeServer {
	if ns := r.namespace(name); ns != nil {
		return ns.bridge
	}
	return nil
}

// namespace returns the namespace name, nil if there is none.
func (r *Router) namespace(name string) *namespace {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namespaces[name]
}

// NamespaceInfo is what the sandbox needs to create a namespace object.
type NamespaceInfo struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// Namespaces lists the namespaces for the sandbox, in the order added.
func (r *Router) Namespaces() []NamespaceInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]NamespaceInfo, 0, len(r.order))
	for _, ns := range r.order {
		out = append(out, NamespaceInfo{Name: ns.name, Kind: ns.kind})
	}
	return out
}

// ServeSandbox implements sandbox.Handler.
func (r *Router) ServeSandbox(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "call":
		var p callParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, pyErr(sdk.CodeInvalidArgument, "bad call: %v", err)
		}
		return r.call(ctx, &p)
	case "task":
		var p taskParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, pyErr(sdk.CodeInvalidArgument, "bad task request: %v", err)
		}
		return nil, r.tasks.control(ctx, &p)
	case "dir", "help":
		var p pathParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, pyErr(sdk.CodeInvalidArgument, "bad %s request: %v", method, err)
		}
		if method == "dir" {
			return r.dir(ctx, p.Path)
		}
		return r.help(ctx, p.Path, p.Full)
	default:
		return nil, &sandbox.RemoteError{Type: "NotImplementedError", Message: fmt.Sprintf("the host serves no %q requests", method)}
	}
}

// pathParams are those of dir(path) and help(path, full=False): full asks
// help for a namespace's whole description (an MCP server's instructions).
type pathParams struct {
	Path string `json:"path"`
	Full bool   `json:"full"`
}

// lookup splits a Python path into its namespace and the rest.
func (r *Router) lookup(path string) (*namespace, string, error) {
	root, rest, _ := strings.Cut(path, ".")
	ns := r.namespace(root)
	if ns == nil {
		return nil, "", pyErr(sdk.CodeNotFound, "'%s' not found", root)
	}
	return ns, rest, nil
}

// tool finds the tool at a Python path. A dynamic bridge that does not know
// it is described again first, in case its tools changed.
func (r *Router) tool(ctx context.Context, path string) (*namespace, *sdk.ToolInfo, error) {
	ns, rest, err := r.lookup(path)
	if err != nil {
		return nil, nil, err
	}
	c := ns.cat.Load()
	t := c.find(rest)
	if t == nil && ns.dynamic {
		c = ns.catalog(ctx, missAge)
		t = c.find(rest)
	}
	if t == nil {
		if why, ok := c.denied[rest]; ok {
			return ns, nil, pyErr(sdk.CodePermission, "%s: %s", path, why)
		}
		// A namespace with no tools at all (an MCP server that did not
		// start) says why: its description does.
		if len(c.tools) == 0 && c.desc != nil && c.desc.Description != "" {
			return ns, nil, pyErr(sdk.CodeNotFound, "Tool '%s' not found: %s", path, c.desc.Description)
		}
		return ns, nil, pyErr(sdk.CodeNotFound, "Tool '%s' not found", path)
	}
	return ns, t, nil
}

// find returns the tool at a path within the bridge: its own name first,
// then its Python name; "" is the namespace itself, which a callable
// namespace has.
func (c *catalog) find(rest string) *sdk.ToolInfo {
	if t, ok := c.tools[rest]; ok {
		return t
	}
	if name, ok := c.alias[rest]; ok {
		return c.tools[name]
	}
	return nil
}

// pyErr is an error of the router's that the sandbox raises as the Python
// exception of code (see protocol.Codes).
func pyErr(code sdk.ErrorCode, format string, args ...any) error {
	return &sandbox.RemoteError{Type: code.Python(), Message: fmt.Sprintf(format, args...)}
}

// pythonError maps a tool's typed failure to the Python exception (see
// protocol.Codes), with red's secrets removed from its message.
func pythonError(e *sdk.ToolError, red *sdk.Redactor) error {
	return &sandbox.RemoteError{Type: e.Code.Python(), Message: red.Redact(e.Message)}
}

// Close cancels running tasks.
func (r *Router) Close() error {
	r.tasks.cancelAll()
	return nil
}

var (
	_ sandbox.Handler = (*Router)(nil)
	_ sdk.HostClient  = (*Router)(nil)
)

// CallTool calls a tool by its full dotted path with JSON arguments, for
// bridges that call back into the host (sdk.HostClient). Hooks apply as to
// calls from the sandbox.
func (r *Router) CallTool(ctx context.Context, path string, arguments json.RawMessage) (*sdk.CallToolResult, error) {
	var kwargs map[string]json.RawMessage
	if len(arguments) > 0 {
		if err := json.Unmarshal(arguments, &kwargs); err != nil {
			return nil, fmt.Errorf("arguments of %s: %w", path, err)
		}
	}
	content, err := r.call(ctx, &callParams{Path: path, Kwargs: kwargs})
	if err != nil {
		if re, ok := errors.AsType[*sandbox.RemoteError](err); ok {
			code := protocol.CodeFromPython(re.Type)
			return &sdk.CallToolResult{Content: protocol.NullJSON, IsError: true, Error: &sdk.ToolError{Code: code, Message: re.Message}}, nil
		}
		return nil, err
	}
	return &sdk.CallToolResult{Content: content}, nil
}
