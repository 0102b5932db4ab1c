package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/config"
	"github.com/parselbox/parselbox/host/mcpserver"
	"github.com/parselbox/parselbox/host/serve"
)

// configFlags are the flags that mirror the configuration file: each sets
// one key. package config layers them over the file (flag > file >
// default) and checks them by the file's rules.
type configFlags struct {
	fs         *pflag.FlagSet
	configPath string
	verbose    bool
	keys       map[string]string // flag name → the key it sets
	env        bool              // $PARSELBOX_AUTH_TOKEN sets the token (the MCP server's flags)
	below      map[string]int    // list key → how many of its items came from the file
}

// newSandboxFlags defines the flags of the sandbox's configuration.
func newSandboxFlags(fs *pflag.FlagSet) *configFlags {
	fs.SetInterspersed(false) // CODE may start with "-": flags come first
	f := &configFlags{fs: fs, keys: map[string]string{}, below: map[string]int{}}
	fs.StringVar(&f.configPath, "config", "", "configuration `file` (HCL, YAML or JSON)")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "verbose logging")
	f.string("runtime-dir", "runtime_dir", "", "runtime `dir`ectory (default: $PARSELBOX_RUNTIME, then next to the binary)")
	f.string("cache-dir", "cache_dir", "", "cache `dir`ectory for the snapshot (default: the user cache dir)")
	f.string("output-dir", "output_dir", "", "host `dir`ectory backing /workspace (default: a temporary one)")
	f.list("file", "files", "copy a host `file` into /files (repeatable)")
	f.list("mount", "mount", "mount a host directory at /mnt/DST, read-only unless :rw: `SRC:DST[:ro|rw]` (repeatable)")
	fs.Bool("network", false, "give the sandbox the whole network")
	f.keys["network"] = "network"
	f.list("allow-net", "allow_net", "let the sandbox reach `HOST:PORT` (repeatable)")
	f.string("ca-file", "ca_file", "", "PEM `file` of CA certificates HTTPS in the sandbox (and package downloads) trusts besides the built-in roots")
	f.list("packages", "packages", "install a Python package, a wheel, or npm:NAME[@VERSION] for require() before the first execution: `PKG` (repeatable)")
	f.string("package-dir", "package_dir", "", "`dir`ectory where the host keeps downloaded packages (default: under the cache dir)")
	f.string("package-index", "package_index", "", "Pyodide package index, a `URL or dir`ectory holding pyodide-lock.json (default: the official one)")
	fs.Bool("allow-runtime-packages", false, "let the host install undeclared packages the code imports or require()s")
	f.keys["allow-runtime-packages"] = "allow_runtime_packages"
	fs.Int("memory", host.DefaultMemoryMB, "memory limit of the Python heap, in `MB`")
	f.keys["memory"] = "memory"
	fs.Int("timeout", int(host.DefaultTimeout.Seconds()), "timeout of one execution in `seconds` (0: none)")
	f.keys["timeout"] = "timeout"
	fs.Int("workspace-quota", host.DefaultWorkspaceQuotaMB, "most the sandbox may store in /workspace, /files and rw mounts, in `MB`")
	f.keys["workspace-quota"] = "workspace_quota"
	fs.Int("max-message-size", host.DefaultMaxMessageSizeMB, "largest message between host and sandbox (tool arguments, tool results), in `MB`")
	f.keys["max-message-size"] = "max_message_size"
	fs.Int("max-result-size", host.DefaultMaxResultSizeMB, "largest result of one execution, in `MB`")
	f.keys["max-result-size"] = "max_result_size"
	f.string("confinement", "confinement", "", "kernel confinement of the sandbox: `mode` required, best-effort (default) or off")
	f.string("run-as", "run_as", "", "`user` (UID[:GID] or a name) the sandbox runs as when parselbox runs as root (default 65532:65532)")
	fs.Float64("cpu", 0, "CPU limit of the sandbox in `cores` (0.5 is half of one; 0: none)")
	f.keys["cpu"] = "cpu"
	f.list("env", "env", "set `KEY=VALUE` in the sandbox's environment (repeatable)")
	f.list("plugin-dir", "plugin_dirs", "search `dir` for parselbox-bridge-* plugins (repeatable)")
	f.string("mcp", "mcp", "", "MCP servers from an mcp.json `file` ({\"mcpServers\": {...}}): each becomes a namespace")
	f.string("audit-log", "audit_log", "", "append every execution and tool call to this JSON-lines `file` (arguments redacted)")
	f.string("otlp-endpoint", "otlp_endpoint", "", "send executions and tool calls as OpenTelemetry spans to this OTLP/HTTP `URL`")
	f.string("describe-tools", "describe_tools", "", "how the model learns the tools: `mode` none (discovery with sbx.search and help, the default) or signatures (Python signatures in the guide and in execute_code's description)")
	f.string("serve", "serve.addr", "", "serve /workspace as a web app with @api routes at `ADDR` (--serve alone: "+serve.DefaultAddr+")")
	fs.Lookup("serve").NoOptDefVal = serve.DefaultAddr
	return f
}

// newServeFlags adds the flags of the MCP server's settings, the file's
// server block, to the sandbox's.
func newServeFlags(fs *pflag.FlagSet) *configFlags {
	f := newSandboxFlags(fs)
	f.env = true
	d := mcpserver.DefaultSettings()
	f.string("transport", "server.transport", d.Transport, "MCP `transport`: stdio or http (streamable HTTP at /mcp)")
	f.string("host", "server.host", d.Host, "`address` to listen on with --transport http; beyond loopback it needs --auth-token")
	fs.Int("port", d.Port, "`port` to listen on with --transport http (0: any free port)")
	f.keys["port"] = "server.port"
	f.string("auth-token", "server.auth_token", "", fmt.Sprintf("bearer `token` every HTTP request must carry, %d characters or more (default: $%s)",
		mcpserver.MinTokenLength, mcpserver.AuthTokenEnv))
	fs.Duration("idle-timeout", d.IdleTimeout, "close an HTTP session and its sandbox after this long without a request (0: never)")
	f.keys["idle-timeout"] = "server.idle_timeout"
	fs.Int("max-sessions", d.MaxSessions, "most HTTP sessions open at once, each with its own sandbox (0: no limit)")
	f.keys["max-sessions"] = "server.max_sessions"
	fs.Int("pool-size", d.PoolSize, "sandboxes kept booted ahead for new HTTP sessions (0: none)")
	f.keys["pool-size"] = "server.pool_size"
	fs.Int("max-output-tokens", d.MaxOutputTokens, "replace a result estimated above this many tokens by its sbx.preview() (0: no limit)")
	f.keys["max-output-tokens"] = "server.max_output_tokens"
	fs.Int("max-result-mb", d.MaxResultMB, "refuse a result larger than this many `MiB` (0: no cap)")
	f.keys["max-result-mb"] = "server.max_result_mb"
	fs.Bool("elicit", d.Elicit, "ask the MCP client to approve every tool call the sandbox makes")
	f.keys["elicit"] = "server.elicit"
	fs.Duration("approval-timeout", d.ApprovalTimeout, "refuse a tool call whose approval gets no answer this long (0: no limit)")
	f.keys["approval-timeout"] = "server.approval_timeout"
	fs.Bool("no-ui", d.NoUI, "no MCP Apps renderer, no display() views in results")
	f.keys["no-ui"] = "server.no_ui"
	fs.Bool("stream-output", d.StreamOutput, "send what the code prints, while it runs, as MCP log notifications")
	f.keys["stream-output"] = "server.stream_output"
	fs.Duration("drain-timeout", d.DrainTimeout, "on SIGTERM, take no new sessions and wait this long at most for the open ones to close (0: do not wait)")
	f.keys["drain-timeout"] = "server.drain_timeout"
	f.string("metrics-address", "server.metrics_address", "", "serve /metrics on this `host:port` of its own (default: next to /mcp)")
	return f
}

func (f *configFlags) string(name, key, def, usage string) {
	f.fs.String(name, def, usage)
	f.keys[name] = key
}

// list defines a repeatable flag.
func (f *configFlags) list(name, key, usage string) {
	f.fs.StringArray(name, nil, usage)
	f.keys[name] = key
}

// load loads the configuration file, if any, with $PARSELBOX_AUTH_TOKEN (for
// the server) and the flags given over it.
func (f *configFlags) load() (*config.File, error) {
	var layers []config.Layer
	if tok, ok := os.LookupEnv(mcpserver.AuthTokenEnv); ok && f.env && tok != "" {
		layers = append(layers, config.Layer{
			Provider: func(*koanf.Koanf) koanf.Provider {
				return confmap.Provider(map[string]any{"server": map[string]any{"auth_token": tok}}, "")
			},
			Flag: func([]string) string { return "$" + mcpserver.AuthTokenEnv },
		})
	}
	var flagErrs []error
	layers = append(layers, config.Layer{
		Provider: func(k *koanf.Koanf) koanf.Provider {
			return posflag.ProviderWithFlag(f.fs, ".", k, func(fl *pflag.Flag) (string, any) {
				key, v, err := f.value(k, fl)
				if err != nil {
					flagErrs = append(flagErrs, err)
					return "", nil
				}
				return key, v
			})
		},
		Flag: f.flagOf,
	})
	file, err := config.LoadFile(f.configPath, layers...)
	if len(flagErrs) > 0 {
		return nil, usageError{flagErrs[0]}
	}
	return file, err
}

// value is the key a flag sets and its value, as a file would hold it.
// Repeatable flags add to what the file has.
func (f *configFlags) value(k *koanf.Koanf, fl *pflag.Flag) (string, any, error) {
	key := f.keys[fl.Name]
	if key == "" {
		return "", nil, nil
	}
	if fl.Name == "serve" && !fl.Changed {
		return "", nil, nil // no serve block unless asked for
	}
	if fl.Value.Type() != "stringArray" {
		return key, posflag.FlagVal(f.fs, fl), nil
	}
	if !fl.Changed {
		return "", nil, nil
	}
	given, _ := f.fs.GetStringArray(fl.Name)
	switch fl.Name {
	case "mount":
		mounts := map[string]any{}
		for _, spec := range given {
			target, m, err := parseMount(spec)
			if err != nil {
				return "", nil, err
			}
			mounts[target] = map[string]any{"source": m.Source, "mode": m.Mode}
		}
		return key, mounts, nil
	case "env":
		env := map[string]any{}
		for _, kv := range given {
			name, v, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				return "", nil, fmt.Errorf("--env: expected KEY=VALUE, got %q", kv)
			}
			env[name] = v
		}
		return key, env, nil
	}
	list, _ := k.Get(key).([]any)
	f.below[key] = len(list)
	for _, s := range given {
		list = append(list, s)
	}
	return key, list, nil
}

// flagOf names the flag that set the key at path; "" for an item of a
// list that came from the file.
func (f *configFlags) flagOf(path []string) string {
	if len(path) == 2 {
		if i, err := strconv.Atoi(path[1]); err == nil && i < f.below[path[0]] {
			return ""
		}
	}
	for n := len(path); n > 0; n-- {
		key := strings.Join(path[:n], ".")
		for name, k := range f.keys {
			if k == key {
				return "--" + name
			}
		}
	}
	return "a flag"
}

// parseMount parses SRC:DST[:ro|rw]; DST (NAME or /mnt/NAME, mounted at
// /mnt/NAME) defaults to the base name of SRC.
func parseMount(spec string) (string, host.Mount, error) {
	parts := strings.Split(spec, ":")
	m := host.Mount{Mode: "ro"}
	if n := len(parts); n > 1 && (parts[n-1] == "ro" || parts[n-1] == "rw") {
		m.Mode = parts[n-1]
		parts = parts[:n-1]
	}
	switch len(parts) {
	case 1:
		m.Source = parts[0]
	case 2:
		m.Source = parts[0]
	default:
		return "", m, fmt.Errorf("--mount: expected SRC:DST[:ro|rw], got %q", spec)
	}
	if m.Source == "" {
		return "", m, fmt.Errorf("--mount: missing host path in %q", spec)
	}
	target := ""
	if len(parts) == 2 {
		// The sandbox path /mnt/NAME names the target as well as NAME.
		target = strings.TrimPrefix(strings.Trim(parts[1], "/"), "mnt/")
		if target == "mnt" {
			return "", m, fmt.Errorf("--mount: DST is a name under /mnt: SRC:NAME or SRC:/mnt/NAME, got %q", spec)
		}
	}
	if target == "" {
		target = filepath.Base(strings.TrimRight(m.Source, "/"))
	}
	return target, m, nil
}
