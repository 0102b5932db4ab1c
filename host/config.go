package host

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults for the zero values of Config.
const (
	DefaultMemoryMB         = 2048
	DefaultTimeout          = 60 * time.Second
	DefaultWorkspaceQuotaMB = 1024
	DefaultMaxMessageSizeMB = 64
	DefaultMaxResultSizeMB  = 64
)

// Config says what a sandbox may do and which bridges it reaches. The file
// form (HCL or YAML, loaded by package host/config) uses the koanf keys; the
// fields tagged "-" exist only in the Go API.
//
// Zero values mean the defaults: Memory 0 is DefaultMemoryMB, Timeout 0 is
// DefaultTimeout. A negative Timeout disables the limit (in a file and on the
// command line, `timeout = 0` does).
type Config struct {
	// RuntimeDir holds the pinned runtime (`make runtime`): node_modules with
	// Deno and Pyodide. Empty: $PARSELBOX_RUNTIME, then next to the binary.
	RuntimeDir string `koanf:"runtime_dir"`
	// CacheDir holds the Pyodide memory snapshot and Deno's cache. Empty: the
	// user cache dir (os.UserCacheDir()/parselbox).
	CacheDir string `koanf:"cache_dir"`

	// OutputDir backs /workspace. Empty: a temporary directory removed on Close.
	OutputDir string `koanf:"output_dir"`
	// Files are host files copied into /files at start, by base name.
	Files []string `koanf:"files"`
	// Mounts map host directories to /mnt/<target>, keyed by target.
	Mounts map[string]Mount `koanf:"mount"`

	// Network gives the sandbox the whole network.
	Network bool `koanf:"network"`
	// AllowNet lists the only "host:port" pairs the sandbox may reach when
	// Network is false.
	AllowNet []string `koanf:"allow_net"`

	// Memory caps the sandbox's Python heap, in MB.
	Memory int `koanf:"memory"`
	// Timeout bounds one execution.
	Timeout time.Duration `koanf:"timeout"`
	// WorkspaceQuota caps, in MB, what the sandbox may store in /workspace,
	// /files and the rw mounts, counted from what they hold at start: a
	// write past it fails in Python with OSError (ENOSPC, "quota exceeded")
	// and writes nothing. Zero means DefaultWorkspaceQuotaMB.
	WorkspaceQuota int `koanf:"workspace_quota"`
	// MaxMessageSize caps, in MB, one message between the host and the
	// sandbox: a tool call's arguments, a tool's result. Over it, the call
	// fails in Python with an error naming this option. Zero means
	// DefaultMaxMessageSizeMB.
	MaxMessageSize int `koanf:"max_message_size"`
	// MaxResultSize caps, in MB, one execution's result (its output with
	// stdout and stderr): a larger one fails the execution with an error
	// naming this option. Zero means DefaultMaxResultSizeMB.
	MaxResultSize int `koanf:"max_result_size"`
	// Env is the sandbox's whole environment (os.environ in Python); the
	// host's own environment is never passed.
	Env map[string]string `koanf:"env"`
	// Globals are JSON values bound as Python globals at start.
	Globals map[string]any `koanf:"globals"`

	// Bridges are out-of-process tool providers, keyed by namespace name.
	Bridges map[string]BridgeConfig `koanf:"bridge"`
	// PluginDirs are searched, after the directory of the parselbox binary,
	// for parselbox-bridge-<name> binaries.
	PluginDirs []string `koanf:"plugin_dirs"`

	// MCP is the path of an mcp.json file, the format MCP clients share:
	// {"mcpServers": {"NAME": {...}}}. Each server in it becomes a namespace
	// (see MCPServer); the file is read by New.
	MCP string `koanf:"mcp"`
	// MCPServers declares MCP servers in the configuration itself, keyed by
	// name. Each becomes the namespace MCPNamespace(name), served by the
	// mcpproxy plugin.
	MCPServers map[string]MCPServer `koanf:"mcp_server"`

	// Context holds Go values that become namespaces in the sandbox: each
	// value's exported methods are tools (Go API only).
	Context map[string]any `koanf:"-"`
	// Hooks observe and may refuse executions and tool calls (Go API only).
	Hooks []Hook `koanf:"-"`
	// Logger receives the host's logs; nil discards them (Go API only).
	Logger hclog.Logger `koanf:"-"`
}

// Mount maps a host directory into the sandbox at /mnt/<target>.
type Mount struct {
	// Source is the host directory.
	Source string `koanf:"source"`
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
	Plugin string `koanf:"plugin"`
	// SHA256, if set, pins the binary: a mismatch refuses to start it.
	SHA256 string `koanf:"sha256"`
	// Env names host environment variables passed to the plugin process
	// (nothing else of the host's environment is).
	Env []string `koanf:"env"`
	// Config is the bridge's own configuration, handed to it as JSON.
	Config map[string]any `koanf:"config"`
	// Dir is the plugin's working directory, against which relative paths in
	// Config resolve (a spec file, a shell's cwd). In a configuration file it
	// defaults to the file's directory; empty is the host's working directory.
	Dir string `koanf:"dir"`
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
	Command string `koanf:"command" json:"command,omitempty"`
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
}
