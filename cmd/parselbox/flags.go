package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/config"
)

// sandboxFlags are the flags that mirror the configuration file. Flags
// override the file; the file overrides the defaults.
type sandboxFlags struct {
	fs         *flag.FlagSet
	configPath string
	runtimeDir string
	cacheDir   string
	outputDir  string
	files      listFlag
	mounts     listFlag
	network    bool
	allowNet   listFlag
	memory     int
	timeout    int
	quota      int
	maxMessage int
	maxResult  int
	env        listFlag
	pluginDirs listFlag
	mcp        string
	verbose    bool
}

func newSandboxFlags(fs *flag.FlagSet) *sandboxFlags {
	f := &sandboxFlags{fs: fs}
	fs.StringVar(&f.configPath, "config", "", "configuration `file` (HCL, YAML or JSON)")
	fs.StringVar(&f.runtimeDir, "runtime-dir", "", "runtime `dir`ectory (default: $PARSELBOX_RUNTIME, then next to the binary)")
	fs.StringVar(&f.cacheDir, "cache-dir", "", "cache `dir`ectory for the snapshot (default: the user cache dir)")
	fs.StringVar(&f.outputDir, "output-dir", "", "host `dir`ectory backing /workspace (default: a temporary one)")
	fs.Var(&f.files, "file", "copy a host `file` into /files (repeatable)")
	fs.Var(&f.mounts, "mount", "mount a host directory at /mnt/DST, read-only unless :rw: `SRC:DST[:ro|rw]` (repeatable)")
	fs.BoolVar(&f.network, "network", false, "give the sandbox the whole network")
	fs.Var(&f.allowNet, "allow-net", "let the sandbox reach `HOST:PORT` (repeatable)")
	fs.IntVar(&f.memory, "memory", host.DefaultMemoryMB, "memory limit of the Python heap, in `MB`")
	fs.IntVar(&f.timeout, "timeout", int(host.DefaultTimeout/time.Second), "timeout of one execution in `seconds` (0: none)")
	fs.IntVar(&f.quota, "workspace-quota", host.DefaultWorkspaceQuotaMB, "most the sandbox may store in /workspace, /files and rw mounts, in `MB`")
	fs.IntVar(&f.maxMessage, "max-message-size", host.DefaultMaxMessageSizeMB, "largest message between host and sandbox (tool arguments, tool results), in `MB`")
	fs.IntVar(&f.maxResult, "max-result-size", host.DefaultMaxResultSizeMB, "largest result of one execution, in `MB`")
	fs.Var(&f.env, "env", "set `KEY=VALUE` in the sandbox's environment (repeatable)")
	fs.Var(&f.pluginDirs, "plugin-dir", "search `dir` for parselbox-bridge-* plugins (repeatable)")
	fs.StringVar(&f.mcp, "mcp", "", "MCP servers from an mcp.json `file` ({\"mcpServers\": {...}}): each becomes a namespace")
	fs.BoolVar(&f.verbose, "v", false, "verbose logging")
	return f
}

// config loads the configuration file, if any, and applies the flags that
// were given on the command line. The file's server block, checked, is left
// out: see load.
func (f *sandboxFlags) config() (*host.Config, error) {
	file, err := f.load()
	if err != nil {
		return nil, err
	}
	return file.Config, nil
}

// load loads the configuration file, if any, and applies to its Config the
// flags that were given on the command line.
func (f *sandboxFlags) load() (*config.File, error) {
	file := &config.File{Config: &host.Config{}}
	if f.configPath != "" {
		var err error
		if file, err = config.LoadFile(f.configPath); err != nil {
			return nil, err
		}
	}
	cfg := file.Config
	var err error
	f.fs.Visit(func(fl *flag.Flag) {
		if err != nil {
			return
		}
		switch fl.Name {
		case "runtime-dir":
			cfg.RuntimeDir = f.runtimeDir
		case "cache-dir":
			cfg.CacheDir = f.cacheDir
		case "output-dir":
			cfg.OutputDir = f.outputDir
		case "file":
			cfg.Files = append(cfg.Files, f.files...)
		case "mount":
			for _, spec := range f.mounts {
				target, m, perr := parseMount(spec)
				if perr != nil {
					err = perr
					return
				}
				if cfg.Mounts == nil {
					cfg.Mounts = map[string]host.Mount{}
				}
				cfg.Mounts[target] = m
			}
		case "network":
			cfg.Network = f.network
		case "allow-net":
			cfg.AllowNet = append(cfg.AllowNet, f.allowNet...)
		case "memory":
			if f.memory <= 0 {
				err = fmt.Errorf("--memory: must be a positive number of MB, got %d", f.memory)
			}
			cfg.Memory = f.memory
		case "timeout":
			switch {
			case f.timeout < 0:
				err = fmt.Errorf("--timeout: must be 0 (none) or a number of seconds, got %d", f.timeout)
			case f.timeout == 0:
				cfg.Timeout = -1
			default:
				cfg.Timeout = time.Duration(f.timeout) * time.Second
			}
		case "workspace-quota":
			err = positiveMB(fl.Name, f.quota, &cfg.WorkspaceQuota)
		case "max-message-size":
			err = positiveMB(fl.Name, f.maxMessage, &cfg.MaxMessageSize)
		case "max-result-size":
			err = positiveMB(fl.Name, f.maxResult, &cfg.MaxResultSize)
		case "env":
			for _, kv := range f.env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					err = fmt.Errorf("--env: expected KEY=VALUE, got %q", kv)
					return
				}
				if cfg.Env == nil {
					cfg.Env = map[string]string{}
				}
				cfg.Env[k] = v
			}
		case "plugin-dir":
			cfg.PluginDirs = append(cfg.PluginDirs, f.pluginDirs...)
		case "mcp":
			cfg.MCP = f.mcp
		}
	})
	if err != nil {
		return nil, err
	}
	// The file was checked as it was read; check again what the flags changed,
	// by the same rules (a bad value is a usage error, not a failed start).
	if err := config.Validate(cfg); err != nil {
		return nil, usageError{err}
	}
	return file, nil
}

// positiveMB sets *dst to the value of flag name, which must be positive.
func positiveMB(name string, v int, dst *int) error {
	if v <= 0 {
		return fmt.Errorf("--%s: must be a positive number of MB, got %d", name, v)
	}
	*dst = v
	return nil
}

// parseMount parses SRC:DST[:ro|rw]; DST defaults to the base name of SRC.
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
		target = strings.Trim(parts[1], "/")
	}
	if target == "" {
		target = filepath.Base(strings.TrimRight(m.Source, "/"))
	}
	return target, m, nil
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}
