package host

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host/bridges"
)

// PluginCheck is what Check found for one plugin bridge: the binary that
// would run, and its sha256.
type PluginCheck struct {
	// Namespace is the bridge's name in Python.
	Namespace string
	// Plugin is the plugin as configured ("greeter", or a path).
	Plugin string
	// MCP tells a bridge of an MCP server (plugin mcpproxy).
	MCP bool
	// Path is the binary Find resolved.
	Path string
	// SHA256 is the binary's digest; Pinned tells whether the configuration
	// pins it (and it matched: a mismatch is an error).
	SHA256 string
	Pinned bool
}

// Check does what New does before it starts anything: Config.Validate,
// the host paths (the output directory's parent, each input file, each
// mount's source, the CA file), the MCP servers' entries (the mcp.json
// read and checked), and each plugin bridge's binary resolved in the
// plugin directories, with its sha256 checked against a pinned one. It
// starts nothing and writes nothing. A problem is a *ConfigError (whose key
// errors package host/config places in the file); all paths and plugins
// are checked before it returns.
func Check(cfg Config) ([]PluginCheck, error) {
	if err := cfg.Validate(); err != nil {
		return nil, &ConfigError{err}
	}
	if err := checkPaths(cfg); err != nil {
		return nil, &ConfigError{err}
	}
	s := &Sandbox{cfg: cfg, log: hclog.NewNullLogger(), dryRun: true}
	all, mcp, err := s.pluginBridges()
	if err != nil {
		return nil, err
	}
	m := bridges.NewManager(bridges.Options{PluginDirs: cfg.PluginDirs})
	var out []PluginCheck
	var v validation
	for _, name := range slices.Sorted(maps.Keys(all)) {
		b := all[name]
		_, isMCP := mcp[name]
		c := PluginCheck{Namespace: name, Plugin: b.Plugin, MCP: isMCP, Pinned: b.SHA256 != ""}
		var err error
		if c.Path, err = m.Find(b.Plugin); err == nil {
			c.SHA256, err = bridges.FileSHA256(c.Path)
		}
		if err != nil {
			v.bad(entry("bridge", name), "%v", err)
			continue
		}
		if c.Pinned && !strings.EqualFold(c.SHA256, b.SHA256) {
			v.bad(sub(entry("bridge", name), "sha256"), "%s has sha256 %s, not the pinned %s", c.Path, c.SHA256, b.SHA256)
			continue
		}
		out = append(out, c)
	}
	if err := v.err(); err != nil {
		return out, &ConfigError{err}
	}
	return out, nil
}

// checkPaths checks the host paths of a configuration as New would use
// them, without creating or writing anything.
func checkPaths(cfg Config) error {
	var v validation
	if cfg.OutputDir != "" {
		if dir, err := filepath.Abs(cfg.OutputDir); err != nil {
			v.errs = append(v.errs, err)
		} else if err := outputDir(dir, false); err != nil {
			v.bad("output_dir", "%v", err)
		}
	}
	for i, f := range cfg.Files {
		switch fi, err := os.Stat(f); {
		case err != nil:
			v.bad(index("files", i), "input file: %v", err)
		case fi.IsDir():
			v.bad(index("files", i), "input file: %s is a directory", f)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(cfg.Mounts)) {
		if err := mountSource(t, cfg.Mounts[t]); err != nil {
			v.errs = append(v.errs, err)
		}
	}
	if cfg.CAFile != "" {
		if _, err := caFile(cfg.CAFile); err != nil {
			v.errs = append(v.errs, err)
		}
	}
	return v.err()
}
