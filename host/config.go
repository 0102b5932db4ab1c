package host

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/host/router"
	"github.com/parselbox/parselbox/sdk"
)

// Defaults for the zero values of Config.
const (
	DefaultMemoryMB         = 2048
	DefaultTimeout          = 60 * time.Second
	DefaultWorkspaceQuotaMB = 1024
	DefaultMaxMessageSizeMB = 64
	DefaultMaxResultSizeMB  = 64
)

// MaxCPU bounds Config.CPU, in cores.
const MaxCPU = 1024

// Config says what a sandbox may do and which bridges it reaches. The file
// form (HCL, YAML or JSON, loaded by package host/config) uses the koanf
// keys; the fields tagged "-" exist only in the Go API. Validate is the one
// check of a Config, wherever it came from; New calls it.
//
// Zero values mean the defaults: Memory 0 is DefaultMemoryMB, Timeout 0 is
// DefaultTimeout. A negative Timeout disables the limit (in a file and on the
// command line, `timeout = 0` does).
//
// A new key is a field with its koanf tag, its rule in Validate, a flag in
// cmd/parselbox and an entry in parselbox.hcl.example. Two more tags tell
// the file loader about a field: file:"path" resolves a relative value
// against the file's directory (file:"command": only when it has a slash;
// file:"object": any JSON object, whose keys are the bridge's to check),
// and want completes "must be ..." when a value of the wrong type deserves
// a better message than "must be a string".
type Config struct {
	// RuntimeDir holds the pinned runtime (`make runtime`): node_modules with
	// Deno and Pyodide. Empty: $PARSELBOX_RUNTIME, then next to the binary.
	RuntimeDir string `koanf:"runtime_dir" file:"path"`
	// CacheDir holds the Pyodide memory snapshot and Deno's cache. Empty: the
	// user cache dir (os.UserCacheDir()/parselbox).
	CacheDir string `koanf:"cache_dir" file:"path"`

	// OutputDir backs /workspace. Empty: a temporary directory removed on Close.
	OutputDir string `koanf:"output_dir" file:"path"`
	// Files are host files copied into /files at start, by base name.
	Files []string `koanf:"files" file:"path"`
	// Mounts map host directories to /mnt/<target>, keyed by target.
	Mounts map[string]Mount `koanf:"mount"`

	// Network gives the sandbox the whole network.
	Network bool `koanf:"network"`
	// AllowNet lists the only "host:port" pairs the sandbox may reach when
	// Network is false.
	AllowNet []string `koanf:"allow_net"`
	// CAFile is a PEM file of CA certificates that HTTPS in the sandbox
	// (fetch, and urllib, requests, httpx over it) trusts besides the
	// built-in roots, for servers of a private CA; the network rules still
	// decide what the sandbox may reach. The host's package downloads trust
	// it too.
	CAFile string `koanf:"ca_file" file:"path"`

	// Memory caps the sandbox's Python heap, in MB.
	Memory int `koanf:"memory" want:"a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit)"`
	// Timeout bounds one execution.
	Timeout time.Duration `koanf:"timeout" want:"a number of seconds or a duration such as \"90s\" (0 turns the limit off)"`
	// WorkspaceQuota caps, in MB, what the sandbox may store in /workspace,
	// /files and the rw mounts, counted from what they hold at start: a
	// write past it fails in Python with OSError (ENOSPC, "quota exceeded")
	// and writes nothing. Zero means DefaultWorkspaceQuotaMB.
	WorkspaceQuota int `koanf:"workspace_quota" want:"a whole number of MB, 0 (the default) or more"`
	// MaxMessageSize caps, in MB, one message between the host and the
	// sandbox: a tool call's arguments, a tool's result. Over it, the call
	// fails in Python with an error naming this option. Zero means
	// DefaultMaxMessageSizeMB.
	MaxMessageSize int `koanf:"max_message_size" want:"a whole number of MB, 0 (the default) or more"`
	// MaxResultSize caps, in MB, one execution's result (its output with
	// stdout and stderr): a larger one fails the execution with an error
	// naming this option. Zero means DefaultMaxResultSizeMB.
	MaxResultSize int `koanf:"max_result_size" want:"a whole number of MB, 0 (the default) or more"`
	// Confinement is how much of the kernel's confinement (package
	// confine) the sandbox insists on: "required", "best-effort" (empty,
	// the default) or "off".
	Confinement string `koanf:"confinement"`
	// RunAs is the user ("UID[:GID]" or a name) the sandbox runs as when
	// the host runs as root. Empty: confine.DefaultRunAs.
	RunAs string `koanf:"run_as"`
	// CPU caps the sandbox's CPU time, in cores (0.5 is half of one); 0 is
	// no cap. It needs a cgroup (see package confine).
	CPU float64 `koanf:"cpu" want:"a number of cores such as 0.5 or 2 (0: no limit)"`
	// Packages are installed by the host before the first execution (see
	// package packages): Python packages by name ("numpy", "pyyaml"), wheel
	// files or URLs, directories of wheels; and npm packages for require()
	// as "npm:NAME[@VERSION]". The sandbox never needs network for them.
	Packages []string `koanf:"packages"`
	// PackageDir is where the host keeps downloaded packages, shared across
	// sandboxes. Empty: the "packages" folder of the cache directory.
	PackageDir string `koanf:"package_dir" file:"path"`
	// PackageIndex is the Pyodide package index (a pyodide-lock.json with
	// its wheels) Python packages are resolved from: a URL or a directory.
	// Empty: the official Pyodide distribution of the pinned version.
	PackageIndex string `koanf:"package_index"`
	// AllowRuntimePackages lets the host install, on demand, packages the
	// code imports (Python) or require()s (npm) that were not declared.
	AllowRuntimePackages bool `koanf:"allow_runtime_packages"`
	// Env is the sandbox's whole environment (os.environ in Python); the
	// host's own environment is never passed.
	Env map[string]string `koanf:"env"`
	// Globals are JSON values bound as Python globals at start.
	Globals map[string]any `koanf:"globals"`

	// Bridges are out-of-process tool providers, keyed by namespace name.
	Bridges map[string]BridgeConfig `koanf:"bridge"`
	// PluginDirs are searched, after the directory of the parselbox binary,
	// for parselbox-bridge-<name> binaries.
	PluginDirs []string `koanf:"plugin_dirs" file:"path"`

	// MCP is the path of an mcp.json file, the format MCP clients share:
	// {"mcpServers": {"NAME": {...}}}. Each server in it becomes a namespace
	// (see MCPServer); the file is read by New.
	MCP string `koanf:"mcp" file:"path"`
	// MCPServers declares MCP servers in the configuration itself, keyed by
	// name. Each becomes the namespace MCPNamespace(name), served by the
	// mcpproxy plugin.
	MCPServers map[string]MCPServer `koanf:"mcp_server"`

	// AuditLog is a file to which every execution and every tool call is
	// appended as a line of JSON (package host/audit): ids, session,
	// bridge, tool, duration, outcome, arguments with secrets redacted.
	AuditLog string `koanf:"audit_log" file:"path"`
	// OTLPEndpoint, if set, sends the same trail as OpenTelemetry spans over
	// OTLP/HTTP ("http://127.0.0.1:4318"): the execution is the parent span,
	// its tool calls the children.
	OTLPEndpoint string `koanf:"otlp_endpoint"`
	// DescribeTools says how the model learns the tools: "none" (the
	// default) leaves it to discovery (sbx.search, help); "signatures" puts
	// compact Python signatures of every tool the sandbox may call, grouped
	// by namespace, into the guide (Prompt) and into the description of the
	// MCP server's execute_code, cut past DescribeToolsBudget tokens with a
	// pointer to sbx.search.
	DescribeTools string `koanf:"describe_tools" want:"\"none\" or \"signatures\""`

	// TracerProvider, if set, receives the spans instead (Go API only).
	TracerProvider trace.TracerProvider `koanf:"-"`

	// Context holds Go values that become namespaces in the sandbox: each
	// value's exported methods are tools (Go API only).
	Context map[string]any `koanf:"-"`
	// ContextPolicies limit the tools of the Context values, keyed as
	// Context is, as ToolPolicy does for bridges (Go API only).
	ContextPolicies map[string]ToolPolicy `koanf:"-"`
	// Hooks observe and may refuse executions and tool calls (Go API only).
	Hooks []Hook `koanf:"-"`
	// Serve serves the workspace as a web app with @api routes into the
	// sandbox; nil: not served.
	Serve *ServeConfig `koanf:"serve"`
	// UI says that someone sees what display() shows (the MCP server sets
	// it unless --no-ui): the guide text then explains display() (Go API
	// only; Result.View is set either way).
	UI bool `koanf:"-"`
	// Observer is told of executions, tool calls and restarts, for
	// metrics (Go API only; package host/metrics is one).
	Observer Observer `koanf:"-"`
	// Logger receives the host's logs; nil discards them (Go API only).
	Logger hclog.Logger `koanf:"-"`
	// Notify receives what a person waiting for New should hear: that the
	// first start prepares the Python runtime (a few seconds, once), that a
	// bridge is slow to start. nil says nothing (Go API only; the command
	// line prints them on stderr).
	Notify func(msg string) `koanf:"-"`
	// InterruptGrace is how long an execution interrupted at its timeout
	// has to stop before the sandbox is killed and restarted (its state
	// lost); 0 is the default of 5 s (Go API only).
	InterruptGrace time.Duration `koanf:"-"`
}

// Mount maps a host directory into the sandbox at /mnt/<target>.
type Mount struct {
	// Source is the host directory.
	Source string `koanf:"source" file:"path"`
	// Mode is "ro" (the default) or "rw".
	Mode string `koanf:"mode"`
}

// ReadOnly reports whether the mount is read-only.
func (m Mount) ReadOnly() bool { return m.Mode != "rw" }

// BridgeConfig declares one bridge.
type BridgeConfig struct {
	// Plugin names the plugin: "greeter" resolves to a
	// parselbox-bridge-greeter binary in the plugin directories; a value
	// containing a slash is a path to the binary.
	Plugin string `koanf:"plugin" file:"command"`
	// SHA256, if set, pins the binary: a mismatch refuses to start it.
	SHA256 string `koanf:"sha256"`
	// Env names host environment variables passed to the plugin process
	// (nothing else of the host's environment is).
	Env []string `koanf:"env"`
	// Config is the bridge's own configuration, handed to it as JSON.
	Config map[string]any `koanf:"config" file:"object"`
	// Dir is the plugin's working directory, against which relative paths in
	// Config resolve (a spec file, a shell's cwd). In a configuration file it
	// defaults to the file's directory; empty is the host's working directory.
	Dir string `koanf:"dir" file:"path"`
	// ToolPolicy limits which of the bridge's tools the sandbox may call.
	ToolPolicy `koanf:",squash"`
}

// ToolPolicy says which tools of a namespace (a bridge, an MCP server, a
// Go value) the sandbox may call, and how often in one execution. A tool
// it refuses is absent from discovery (help, dir, sbx.search,
// sbx.inspect); calling it by its path raises PermissionError naming the
// rule. The zero ToolPolicy allows every tool without limit.
//
// Patterns are globs (* matches any run of characters, dots included; ?
// one; [a-z] a class), matched against the tool's path within the
// namespace and its full path, as the bridge names it and as Python does:
// deny = ["*.delete*", "admin.*"].
type ToolPolicy struct {
	// Allow, if set, lists the only tools that may be called.
	Allow []string `koanf:"allow" json:"-"`
	// Deny lists tools that may not be called; it wins over Allow.
	Deny []string `koanf:"deny" json:"-"`
	// AllowReadOnly keeps only the tools that declare they change nothing:
	// an MCP tool's readOnlyHint annotation (a hint from the server you
	// configured), or a bridge tool's sdk.Tool.ReadOnly.
	AllowReadOnly bool `koanf:"allow_read_only" json:"-"`
	// MaxToolCalls bounds the calls to the namespace's tools in one
	// execution (tasks included); past it a call raises PermissionError
	// naming this key. 0 is no bound.
	MaxToolCalls int `koanf:"max_tool_calls" json:"-" want:"a whole number of calls, 0 (no limit) or more"`
}

// check validates the policy of the block at key.
func (p ToolPolicy) check(key string, v *validation) {
	for _, l := range []struct {
		name     string
		patterns []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		for i, pat := range l.patterns {
			if err := router.CheckPattern(pat); err != nil {
				v.bad(index(sub(key, l.name), i), "%v", err)
			}
		}
	}
	if p.MaxToolCalls < 0 {
		v.bad(sub(key, "max_tool_calls"), "must be a whole number of calls, 0 (no limit) or more, got %d", p.MaxToolCalls)
	}
}

// routerPolicy is the router's form of the policy, declared at source.
func (p ToolPolicy) routerPolicy(source string) router.Policy {
	return router.Policy{Allow: p.Allow, Deny: p.Deny, ReadOnly: p.AllowReadOnly, MaxCalls: p.MaxToolCalls, Source: source}
}

// MCPServer declares an MCP server whose tools become a namespace: a stdio
// server (Command, Args, Env) or an HTTP one (URL, Headers). The fields are
// those of an mcp.json entry.
type MCPServer struct {
	// Type is "stdio", "http" (MCP's streamable HTTP) or "sse" (the older
	// HTTP+SSE transport). Empty: "stdio" with a Command, "http" with a URL.
	Type string `koanf:"type" json:"type,omitempty"`
	// Command starts a stdio server: a path (with a slash), or a name looked
	// up in the server's PATH.
	Command string `koanf:"command" json:"command,omitempty" file:"command"`
	// Args are the command's arguments, passed as they are.
	Args []string `koanf:"args" json:"args,omitempty"`
	// Env is added to a stdio server's environment, which is otherwise only
	// PATH (a default) and PARSELBOX_MCP_PROBE=1: none of the host's
	// environment reaches it.
	Env map[string]string `koanf:"env" json:"env,omitempty"`
	// URL is an HTTP server's endpoint.
	URL string `koanf:"url" json:"url,omitempty"`
	// Headers are sent with every request to an HTTP server.
	Headers map[string]string `koanf:"headers" json:"headers,omitempty"`
	// ToolPolicy limits which of the server's tools the sandbox may call
	// (allow_read_only: only those annotated readOnlyHint).
	ToolPolicy `koanf:",squash" json:"-"`
}

// A KeyError is a problem with one value of a Config, found by Validate.
// Key is the value's path in the terms of a configuration file: `memory`,
// `allow_net[1]`, `mount "data".mode`, `bridge "greeter"`; a key left out
// is reported at its block with the Message `missing key "NAME"`. Package
// host/config turns a Key into the file and line, or the flag, that set it.
type KeyError struct {
	Key     string
	Message string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Message }

// ConfigKey is the path of the value at fault (the interface a bridge's
// own configuration errors share).
func (e *KeyError) ConfigKey() string { return e.Key }

// Validate checks the Config, however it was built (a file, flags, Go):
// names that become Python names, mount targets and modes, allow_net
// entries, memory, bridges (plugin, digest, variable names) and MCP
// servers. It is the only check of a Config: New calls it, and so does
// package host/config, to place each problem in the file. Problems come
// back as *KeyError values, joined with errors.Join in a stable order.
// A bridge's own config is not looked into: the bridge checks it.
func (c *Config) Validate() error {
	var v validation
	for i, p := range c.Files {
		if p == "" {
			v.bad(index("files", i), "must not be empty")
		}
	}
	for i, p := range c.PluginDirs {
		if p == "" {
			v.bad(index("plugin_dirs", i), "must not be empty")
		}
	}
	for _, target := range slices.Sorted(maps.Keys(c.Mounts)) {
		m, key := c.Mounts[target], entry("mount", target)
		if !validTarget(target) {
			v.bad(key, `target must be a relative path such as "data" or "data/sub", without empty, "." or ".." parts`)
		}
		if m.Source == "" {
			v.missing(key, "source")
		}
		if m.Mode != "" && m.Mode != "ro" && m.Mode != "rw" {
			v.bad(sub(key, "mode"), `must be "ro" or "rw", got %q`, m.Mode)
		}
	}
	if c.Serve != nil {
		c.Serve.check(&v)
	}
	for i, p := range c.Packages {
		if strings.TrimSpace(p) == "" {
			v.bad(index("packages", i), "must not be empty")
		} else if name, ok := strings.CutPrefix(p, "npm:"); ok && strings.TrimSpace(name) == "" {
			v.bad(index("packages", i), `must name a package after "npm:", got %q`, p)
		}
	}
	for i, hp := range c.AllowNet {
		if !validHostPort(hp) {
			v.bad(index("allow_net", i), `must be "host:port" with a port from 1 to 65535, got %q`, hp)
		}
	}
	if c.Memory < 0 || c.Memory > MaxMemoryMB {
		v.bad("memory", "must be a whole number of MB from 1 to %d (the 32-bit WebAssembly limit), got %d", MaxMemoryMB, c.Memory)
	}
	for _, l := range []struct {
		key string
		mb  int
	}{{"workspace_quota", c.WorkspaceQuota}, {"max_message_size", c.MaxMessageSize}, {"max_result_size", c.MaxResultSize}} {
		if l.mb < 0 {
			v.bad(l.key, "must be a whole number of MB, 0 (the default) or more, got %d", l.mb)
		}
	}
	if c.OTLPEndpoint != "" {
		if u, err := url.Parse(c.OTLPEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.bad("otlp_endpoint", "must be an http:// or https:// URL of an OTLP/HTTP receiver, got %q", c.OTLPEndpoint)
		}
	}
	if d := c.DescribeTools; d != "" && d != DescribeNone && d != DescribeSignatures {
		v.bad("describe_tools", `must be "none" or "signatures", got %q`, d)
	}
	if _, err := confine.ParseMode(c.Confinement); err != nil {
		v.bad("confinement", "%v", err)
	}
	if c.RunAs != "" {
		if _, _, err := confine.ParseRunAs(c.RunAs); err != nil {
			v.bad("run_as", "%v", err)
		}
	}
	if !(c.CPU >= 0 && c.CPU <= MaxCPU) { // false for NaN
		v.bad("cpu", "must be a number of cores from 0 (no limit) to %d, such as 0.5 or 2, got %v", MaxCPU, c.CPU)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Env)) {
		v.envName(entry("env", name), name)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Globals)) {
		v.identifier(entry("globals", name), name)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Bridges)) {
		b, key := c.Bridges[name], entry("bridge", name)
		v.identifier(key, name)
		if b.Plugin == "" {
			v.missing(key, "plugin")
		}
		if b.SHA256 != "" && !sha256Hex.MatchString(b.SHA256) {
			v.bad(sub(key, "sha256"), "must be 64 hex digits, got %q", b.SHA256)
		}
		for i, name := range b.Env {
			v.envName(index(sub(key, "env"), i), name)
		}
		b.ToolPolicy.check(key, &v)
	}
	for _, name := range slices.Sorted(maps.Keys(c.ContextPolicies)) {
		key := entry("context", name)
		if _, ok := c.Context[name]; !ok {
			v.bad(key, "a tool policy for a context value that does not exist")
		}
		c.ContextPolicies[name].check(key, &v)
	}
	owner := map[string]string{} // namespace → the mcp_server entry that has it
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		key, ns := entry("mcp_server", name), MCPNamespace(name)
		if v.namespace(key, ns, owner[ns], c.Bridges) {
			owner[ns] = key
		}
		c.MCPServers[name].check(key, &v)
		c.MCPServers[name].ToolPolicy.check(key, &v)
	}
	return v.err()
}

// check validates an MCP server entry at key and returns its transport:
// Type, or what Command or URL imply. It is the one check of an entry,
// whether it comes from Config.MCPServers or from the mcp.json file of
// Config.MCP.
func (m MCPServer) check(key string, v *validation) string {
	typ := m.Type
	if typ == "" && m.Command != "" {
		typ = "stdio"
	} else if typ == "" && m.URL != "" {
		typ = "http"
	}
	switch typ {
	case "":
		v.bad(key, `needs a "command" (a stdio server) or a "url" (an http server)`)
	case "stdio":
		if m.Command == "" {
			v.missing(key, "command")
		}
		if m.URL != "" {
			v.bad(sub(key, "url"), "is for http servers; this one is stdio")
		}
		if len(m.Headers) > 0 {
			v.bad(sub(key, "headers"), "are for http servers; this one is stdio")
		}
	case "http", "sse":
		if m.URL == "" {
			v.missing(key, "url")
		} else if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.bad(sub(key, "url"), "must be an http:// or https:// URL, got %q", m.URL)
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"command", m.Command != ""}, {"args", len(m.Args) > 0}, {"env", len(m.Env) > 0}} {
			if f.set {
				v.bad(sub(key, f.name), "is for stdio servers; this one is %s", typ)
			}
		}
	default:
		v.bad(sub(key, "type"), `must be "stdio", "http" or "sse", got %q`, m.Type)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Env)) {
		v.envName(entry(sub(key, "env"), name), name)
	}
	for _, h := range slices.Sorted(maps.Keys(m.Headers)) {
		if !headerName.MatchString(h) {
			v.bad(entry(sub(key, "headers"), h), "not an HTTP header name")
		}
	}
	return typ
}

// validation collects the problems Validate finds.
type validation struct{ errs []error }

func (v *validation) bad(key, format string, args ...any) {
	v.errs = append(v.errs, &KeyError{Key: key, Message: fmt.Sprintf(format, args...)})
}

// missing reports a required key left out of the block at key.
func (v *validation) missing(key, name string) { v.bad(key, "missing key %q", name) }

// identifier checks a name that becomes a Python namespace or global.
func (v *validation) identifier(key, name string) {
	switch {
	case !identifier.MatchString(name):
		v.bad(key, "name must be a Python identifier (letters, digits and _, not starting with a digit)")
	case sdk.IsPythonKeyword(name):
		v.bad(key, "name must not be a Python keyword")
	}
}

// namespace checks ns, the namespace of the MCP server entry at key: it
// must be a Python name, and neither that of the entry owner (where one
// has it already) nor that of a bridge. It reports whether ns is fine.
func (v *validation) namespace(key, ns, owner string, bridges map[string]BridgeConfig) bool {
	_, bridge := bridges[ns]
	switch {
	case ns == "" || ns[0] >= '0' && ns[0] <= '9':
		v.bad(key, "the name must make a Python namespace (its letters, digits and _, not starting with a digit), got %q", ns)
	case sdk.IsPythonKeyword(ns):
		v.bad(key, "the namespace %q is a Python keyword", ns)
	case owner != "":
		v.bad(key, "the namespace %q is also that of %s", ns, owner)
	case bridge:
		v.bad(key, "the namespace %q is also a bridge", ns)
	default:
		return true
	}
	return false
}

// envName checks an environment variable name.
func (v *validation) envName(key, name string) {
	if !identifier.MatchString(name) {
		v.bad(key, "variable name must be letters, digits and _, not starting with a digit")
	}
}

func (v *validation) err() error { return errors.Join(v.errs...) }

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // an HTTP token
	hostname   = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*$`)
)

// validTarget accepts a mount target: a relative path below /mnt, such as
// "data" or "data/sub".
func validTarget(target string) bool {
	if target == "" || strings.ContainsAny(target, "\\\x00") {
		return false
	}
	for seg := range strings.SplitSeq(target, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// validHostPort accepts "host:port" as Deno's --allow-net takes it: a host
// name or IP address (IPv6 in brackets) and a port from 1 to 65535.
func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p >= 1 && p <= 65535 &&
		(hostname.MatchString(host) || (net.ParseIP(host) != nil && !strings.Contains(host, "%")))
}

// Key paths, as KeyError.Key writes them.

// sub is the key name inside path: `bridge "x".plugin`.
func sub(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// entry is the entry named by the user inside path: `bridge "x"`.
func entry(path, name string) string { return fmt.Sprintf("%s %q", path, name) }

// index is element i of the list at path: `allow_net[1]`.
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
