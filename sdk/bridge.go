package sdk

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
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
	// bridge. Tools added here with AddTool are part of the bridge's
	// description (the host asks for it after Configure). Without Configure,
	// any configuration is accepted and ignored.
	Configure func(ctx context.Context, req *ConfigureRequest) error
	// Shutdown, if set, is called best-effort before the bridge's process is
	// stopped, with a deadline.
	Shutdown func(ctx context.Context) error
	// Logger receives the bridge's own logs. nil: JSON lines on stderr at the
	// level the host asks for, which the host re-levels under its logger.
	// Never log to stdout: it carries the plugin handshake.
	Logger hclog.Logger
}

// Bridge is a set of tools that a host calls. Build one with NewBridge, add
// tools with AddTool, and serve it from main with Serve. A Bridge is safe for
// concurrent use: tools may be added while calls run (for example by
// Options.Configure).
type Bridge struct {
	info   Info
	opts   Options
	logger hclog.Logger

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
		if ns.Path == tool || strings.HasPrefix(ns.Path, tool+".") {
			panic(fmt.Sprintf("sdk: AddNamespace %q: collides with tool %q (a name cannot be both a tool and a namespace)", ns.Path, tool))
		}
	}
	for i := range b.namespaces {
		if b.namespaces[i].Path == ns.Path {
			b.namespaces[i].Description = ns.Description
			return
		}
	}
	b.namespaces = append(b.namespaces, *ns)
}

// AddTool adds a tool whose schemas are given in t (InputSchema, and
// optionally OutputSchema and Params) and whose handler decodes the
// arguments itself; it is the building block for bridges whose tools are
// only known at run time (from an OpenAPI document, an MCP server, ...).
// Most bridges use the generic function AddTool instead. Adding a tool with
// the name of an existing one replaces it. AddTool panics if the name is not
// a valid dotted path, if it collides with a namespace (a tool "files" and a
// tool "files.read"), or if InputSchema is set but is not a JSON object.
func (b *Bridge) AddTool(t *Tool, h ToolHandler) {
	info, err := t.info()
	if err != nil {
		panic(fmt.Sprintf("sdk: AddTool %q: %v", t.Name, err))
	}
	b.add(&registeredTool{info: info, handler: h})
}

func (b *Bridge) add(rt *registeredTool) {
	name := rt.info.Name
	b.mu.Lock()
	defer b.mu.Unlock()
	for other := range b.tools {
		if other != name && (strings.HasPrefix(other, name+".") || strings.HasPrefix(name, other+".")) {
			panic(fmt.Sprintf("sdk: AddTool %q: collides with tool %q (a name cannot be both a tool and a namespace)", name, other))
		}
	}
	for _, ns := range b.namespaces {
		if ns.Path == name || strings.HasPrefix(ns.Path, name+".") {
			panic(fmt.Sprintf("sdk: AddTool %q: collides with namespace %q", name, ns.Path))
		}
	}
	if _, ok := b.tools[name]; !ok {
		b.order = append(b.order, name)
	}
	b.tools[name] = rt
}

// RemoveTool removes a tool; it reports whether there was one.
func (b *Bridge) RemoveTool(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.tools[name]; !ok {
		return false
	}
	delete(b.tools, name)
	for i, n := range b.order {
		if n == name {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
	return true
}

// Describe lists the bridge's namespaces and tools, tools in the order they
// were added.
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
		d.Tools = append(d.Tools, b.tools[name].info)
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

// CallTool runs the named tool. Every failure of the tool is a result with
// IsError set and a typed Error: an unknown tool is CodeNotFound, arguments
// that do not fit are CodeInvalidArgument, a panic is CodeInternal carrying
// the panic's message (the bridge stays up), and an error returned by the
// handler keeps its code if it is a *ToolError (CodeInternal otherwise). The
// error return is always nil.
func (b *Bridge) CallTool(ctx context.Context, req *CallToolRequest) (res *CallToolResult, err error) {
	b.mu.RLock()
	rt := b.tools[req.Name]
	b.mu.RUnlock()
	if rt == nil {
		return ErrorResult(Errorf(CodeNotFound, "tool %q not found", req.Name)), nil
	}
	defer func() {
		if r := recover(); r != nil {
			b.logger.Error("tool panicked", "tool", req.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res, err = ErrorResult(Errorf(CodeInternal, "tool %q panicked: %v", req.Name, r)), nil
		}
	}()
	res, err = rt.handler(ctx, req)
	if err != nil {
		return ErrorResult(err), nil
	}
	if res == nil {
		return &CallToolResult{Content: nullJSON}, nil
	}
	return res, nil
}

// Shutdown runs Options.Shutdown.
func (b *Bridge) Shutdown(ctx context.Context) error {
	if b.opts.Shutdown == nil {
		return nil
	}
	return b.opts.Shutdown(ctx)
}

// newStderrLogger is the default logger of a bridge: JSON lines on the
// process's stderr (as it is now, before go-plugin redirects os.Stderr), at
// the level in LogLevelEnv, Info when unset.
func newStderrLogger(name string) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}

var (
	_ BridgeServer = (*Bridge)(nil)
	_ Shutdowner   = (*Bridge)(nil)
)
