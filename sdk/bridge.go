package sdk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/internal/protocol"
)

// Info identifies a bridge implementation.
type Info struct {
	// Name is the implementation's name ("greeter"); the host's namespace
	// for the bridge is chosen by the host's configuration, not by this.
	Name string
	// Version is the implementation's version ("v0.1.0").
	Version string
	// Description is the bridge's doc text, shown by help() on its namespace.
	Description string
}

// Options configure a Bridge. The zero value is ready to use.
type Options struct {
	// Configure, if set, receives the bridge's configuration block (as JSON)
	// once before any call, and again after the host restarts the bridge's
	// process. Returning an error rejects the configuration: the host reports
	// it as `bridge "NAME": invalid configuration: ...` and does not use the
	// bridge (return a *ConfigError, as DecodeConfig does, to name the key).
	// Tools added here with AddTool are part of the bridge's description
	// (the host asks for it after Configure). Without Configure, any
	// configuration is accepted and ignored.
	Configure func(ctx context.Context, req *ConfigureRequest) error
	// Shutdown, if set, is called best-effort before the bridge's process is
	// stopped, with a deadline.
	Shutdown func(ctx context.Context) error
	// Middleware wraps every call of the bridge, the first outermost: each
	// gets the next handler and returns the one that runs in its place
	// (logging, metrics, a bridge's own redaction). It sees every call,
	// unknown tools and arguments that do not fit included, and what the
	// call returns before it becomes a result (an error is turned into a
	// failed result after the middleware).
	Middleware []Middleware
	// Logger receives the bridge's own logs. nil: JSON lines on stderr at the
	// level the host asks for, which the host re-levels under its logger.
	// Never log to stdout: it carries the plugin handshake.
	Logger hclog.Logger
	// Namespace is the name the bridge has in the sandbox, for bridges that
	// know it (a host's in-process bridges): messages then name a tool by
	// its full path ("geo.teleport"). A plugin leaves it empty.
	Namespace string
}

// Middleware wraps the handler of every call of a bridge (see
// Options.Middleware).
type Middleware func(next ToolHandler) ToolHandler

// Bridge is a set of tools that a host calls: the one tool engine of
// parselbox. A plugin builds one with NewBridge, adds tools with AddTool,
// and serves it from main with Serve; the host registers its in-process Go
// values and its own discovery tools on one too. A Bridge is safe for
// concurrent use: tools may be added while calls run (for example by
// Options.Configure).
type Bridge struct {
	info   Info
	opts   Options
	logger hclog.Logger
	call   ToolHandler // dispatch wrapped in the middleware

	mu         sync.RWMutex
	tools      map[string]*registeredTool
	order      []string // tool names in the order they were added
	namespaces []NamespaceInfo
	host       HostClient
}

type registeredTool struct {
	info    ToolInfo
	handler ToolHandler
}

// NewBridge returns an empty bridge. opts may be nil.
func NewBridge(info *Info, opts *Options) *Bridge {
	b := &Bridge{tools: make(map[string]*registeredTool)}
	if info != nil {
		b.info = *info
	}
	if opts != nil {
		b.opts = *opts
	}
	b.logger = b.opts.Logger
	if b.logger == nil {
		b.logger = newStderrLogger(b.info.Name)
	}
	b.call = b.dispatch
	for i := len(b.opts.Middleware) - 1; i >= 0; i-- {
		b.call = b.opts.Middleware[i](b.call)
	}
	return b
}

// Logger returns the bridge's logger (Options.Logger, or the default one that
// writes JSON to stderr).
func (b *Bridge) Logger() hclog.Logger { return b.logger }

// Host returns the host's callback client from the latest Configure, or nil
// when the host offers none (or Configure has not run yet).
func (b *Bridge) Host() HostClient {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.host
}

// AddNamespace describes a nested namespace by its dotted path ("files",
// "files.remote"). Namespaces that hold tools exist without being added;
// adding one gives it a description (help(ns.files) in Python). Adding a path
// again replaces its description. AddNamespace panics if the path is not a
// valid dotted path or names a tool.
func (b *Bridge) AddNamespace(ns *NamespaceInfo) {
	if err := checkPath(ns.Path); err != nil {
		panic(fmt.Sprintf("sdk: AddNamespace: %v", err))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for tool := range b.tools {
		if tool != "" && (ns.Path == tool || strings.HasPrefix(ns.Path, tool+".")) {
			panic(fmt.Sprintf("sdk: AddNamespace %q: collides with tool %q (a name cannot be both a tool and a namespace)", ns.Path, tool))
		}
	}
	if i := slices.IndexFunc(b.namespaces, func(n NamespaceInfo) bool { return n.Path == ns.Path }); i >= 0 {
		b.namespaces[i].Description = ns.Description
		return
	}
	b.namespaces = append(b.namespaces, *ns)
}

// AddTool adds a tool whose schemas are given in t (InputSchema, and
// optionally OutputSchema and Params) and whose handler decodes the
// arguments itself; it is the building block for bridges whose tools are
// only known at run time (from an OpenAPI document, an MCP server, ...).
// Most bridges use the generic function AddTool, or AddFunc, instead.
// Adding a tool with the name of an existing one replaces it. AddTool panics
// if the name is not a valid dotted path, if it collides with a namespace (a
// tool "files" and a tool "files.read"), or if InputSchema is set but is not
// a JSON object.
func (b *Bridge) AddTool(t *Tool, h ToolHandler) {
	info, err := t.info()
	if err != nil {
		panic(fmt.Sprintf("sdk: AddTool %q: %v", t.Name, err))
	}
	if err := b.add(&registeredTool{info: info, handler: h}); err != nil {
		panic("sdk: " + err.Error())
	}
}

func (b *Bridge) add(rt *registeredTool) error {
	name := rt.info.Name
	b.mu.Lock()
	defer b.mu.Unlock()
	if name != "" {
		for other := range b.tools {
			if other != "" && other != name && (strings.HasPrefix(other, name+".") || strings.HasPrefix(name, other+".")) {
				return fmt.Errorf("AddTool %q: collides with tool %q (a name cannot be both a tool and a namespace)", name, other)
			}
		}
		for _, ns := range b.namespaces {
			if ns.Path == name || strings.HasPrefix(ns.Path, name+".") {
				return fmt.Errorf("AddTool %q: collides with namespace %q", name, ns.Path)
			}
		}
	}
	if _, ok := b.tools[name]; !ok {
		b.order = append(b.order, name)
	}
	b.tools[name] = rt
	return nil
}

// RemoveTool removes a tool; it reports whether there was one.
func (b *Bridge) RemoveTool(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.tools[name]; !ok {
		return false
	}
	delete(b.tools, name)
	b.order = slices.DeleteFunc(b.order, func(n string) bool { return n == name })
	return true
}

// Describe lists the bridge's namespaces and tools, tools in the order they
// were added. The result is the caller's to change.
func (b *Bridge) Describe(context.Context) (*Description, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	d := &Description{
		Name:        b.info.Name,
		Version:     b.info.Version,
		Description: b.info.Description,
		Namespaces:  append([]NamespaceInfo(nil), b.namespaces...),
		Tools:       make([]ToolInfo, 0, len(b.order)),
	}
	for _, name := range b.order {
		d.Tools = append(d.Tools, b.tools[name].info.Clone())
	}
	return d, nil
}

// Configure remembers req.Host (see Host) and runs Options.Configure.
func (b *Bridge) Configure(ctx context.Context, req *ConfigureRequest) error {
	b.mu.Lock()
	b.host = req.Host
	b.mu.Unlock()
	if b.opts.Configure == nil {
		return nil
	}
	return b.opts.Configure(ctx, req)
}

// CallTool runs the named tool through the middleware. Every failure of the
// tool is a result with IsError set and a typed Error: an unknown tool is
// CodeNotFound, arguments that do not fit are CodeInvalidArgument, a panic
// is CodeInternal ("panic: ..."; the bridge stays up), a call whose context
// is already done does not start (CodeCancelled or CodeTimeout), and an
// error returned by the handler keeps its code if it is a *ToolError
// (CodeInternal otherwise). CallTool returns an error only for a malformed
// request: nil, or arguments that are not a JSON object (a *ToolError with
// CodeInvalidArgument).
func (b *Bridge) CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
	if req == nil {
		return nil, errors.New("sdk: CallTool with a nil request")
	}
	res, err := b.call(ctx, req)
	if err != nil {
		var bad *malformedError
		if errors.As(err, &bad) {
			return nil, &ToolError{Code: CodeInvalidArgument, Message: bad.msg}
		}
		return ErrorResult(err), nil
	}
	if res == nil {
		return &CallToolResult{Content: protocol.NullJSON}, nil
	}
	if len(res.Content) == 0 {
		cp := *res
		cp.Content = protocol.NullJSON
		res = &cp
	}
	return res, nil
}

// dispatch finds and runs the tool; a panic fails the call.
func (b *Bridge) dispatch(ctx context.Context, req *CallToolRequest) (res *CallToolResult, err error) {
	b.mu.RLock()
	rt := b.tools[req.Name]
	b.mu.RUnlock()
	if rt == nil {
		return nil, Errorf(CodeNotFound, "%s", b.notFound(req.Name))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			b.logger.Error("tool panicked", "tool", req.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = nil, Errorf(CodeInternal, "panic: %v", r)
		}
	}()
	return rt.handler(ctx, req)
}

// path is the full dotted path of the tool named name, as messages show it.
func (b *Bridge) path(name string) string {
	switch {
	case b.opts.Namespace == "":
		return name
	case name == "":
		return b.opts.Namespace
	}
	return b.opts.Namespace + "." + name
}

// notFound says that there is no tool name and, when a tool's name differs
// from it only in case and "_" or "-" (Go's "GetWeather" for
// "get_weather"), which one was meant.
func (b *Bridge) notFound(name string) string {
	msg := fmt.Sprintf("tool %q not found", b.path(name))
	if name == "" {
		return msg
	}
	want := looseName(name)
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, other := range b.order {
		if other != name && looseName(other) == want {
			return msg + fmt.Sprintf(" (did you mean %q?)", b.path(other))
		}
	}
	return msg
}

// looseName is a tool name without case, "_" and "-".
func looseName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// Shutdown runs Options.Shutdown.
func (b *Bridge) Shutdown(ctx context.Context) error {
	if b.opts.Shutdown == nil {
		return nil
	}
	return b.opts.Shutdown(ctx)
}

// malformedError is a request that is no call at all (arguments that are
// not a JSON object): CallTool returns it as an error, not as a result.
type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

var (
	_ BridgeServer = (*Bridge)(nil)
	_ Shutdowner   = (*Bridge)(nil)
)
