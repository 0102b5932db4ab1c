// Package config loads a Parselbox configuration file into a host.Config,
// and its server block, the settings of the MCP server, into an
// mcpserver.Settings.
//
// A file is HCL (.hcl), YAML (.yaml, .yml) or JSON (.json); the three share
// one set of keys, the koanf tags of host.Config (and of mcpserver.Settings in the
// server block), and load to the same Config. parselbox.hcl.example at the
// root of the repository documents every key. In HCL:
//
//	memory  = 1024
//	timeout = "90s" # or 90; 0 means no timeout
//
//	mount "data" {
//	  source = "./data" # relative to the file's directory
//	  mode   = "ro"
//	}
//
//	bridge "github" {
//	  plugin = "http"
//	  env    = ["GITHUB_TOKEN"]
//	  config = { base_url = "https://api.github.com" }
//	}
//
// and the same in YAML:
//
//	memory: 1024
//	timeout: 90s
//	mount:
//	  data: {source: ./data, mode: ro}
//	bridge:
//	  github:
//	    plugin: http
//	    env: [GITHUB_TOKEN]
//	    config: {base_url: https://api.github.com}
//
// Load it:
//
//	cfg, err := config.Load("parselbox.hcl")
//	if err != nil {
//		var ce *config.Error
//		if errors.As(err, &ce) {
//			// ce.File, ce.Line, ce.Key, ce.Msg: the first problem
//		}
//		return err // every problem, one per line: parselbox.hcl:12: bridge "greeter": unknown key "plugn"
//	}
//
// # What loading does
//
// Loading is koanf's layering: the defaults of the server block, then the
// file (read by a koanf.Parser per syntax: HCL v2, YAML, JSON), then the
// Layers a caller adds (cmd/parselbox adds $PARSELBOX_AUTH_TOKEN and its
// flags, through koanf's posflag provider): flag > environment > file >
// default. What this package adds is thin: it checks each layer's values
// against the Go types they unmarshal into (unknown keys, with the closest
// known key; values of the wrong type), keeps the line of every key (or the
// flag that set it), and places every problem there. The one check of the
// values themselves is host.Config.Validate (and mcpserver.Settings.Validate
// for the server block); loading calls it, as host.New does.
//
// Unknown keys are errors at every level but inside a bridge's config,
// which is opaque to the host: it reaches host.BridgeConfig.Config as JSON
// values (map[string]any, []any, string, bool, nil, and numbers as int64
// when whole and float64 otherwise, whatever the syntax), for the bridge to
// check. Relative paths (the fields tagged file:"path": runtime_dir,
// cache_dir, output_dir, files, plugin_dirs, mcp, a mount's source, a
// bridge's dir; and file:"command", a bridge's plugin or an mcp_server's
// command, when it contains a slash) are resolved against the file's
// directory. A duration is seconds or a Go duration string; `timeout = 0`
// turns the limit off, which host.Config writes as a negative Timeout (its
// zero value means DefaultTimeout). A mount without a mode gets "ro". A
// sha256 is lower-cased. An option set to null is the same as one left out.
//
// File.Locate places the problems found later, when host.New starts the
// sandbox: a key that Validate refuses, and a bridge's own finding in its
// config block (an error with a ConfigKey() method, the SDK's
// *sdk.ConfigError, under the plugin manager's error for that bridge),
// which reads `bridge "x": FILE:LINE: config.KEY: message`.
//
// # The server block
//
// The same file may hold the settings of the MCP server that `parselbox`
// runs (cmd/parselbox), in a block of its own that the sandbox never sees:
//
//	server {
//	  transport    = "http"
//	  port         = 9000
//	  idle_timeout = "30m"
//	  pool_size    = 0
//	}
//
// or, in YAML and JSON, a top-level server object:
//
//	server: {transport: http, port: 9000, idle_timeout: 30m, pool_size: 0}
//
// LoadFile and ParseFile return it as File.Server, an mcpserver.Settings
// (see there for the keys), starting from mcpserver.DefaultSettings(); Load
// and Parse check it like the rest of the file, then leave it out. In HCL
// the block takes no label and is written as a block, not as
// `server = { ... }`. Zero turns a limit off; a key left out, or set to
// null, keeps its default.
package config

//go:generate go run ./schemagen ../.. ../../parselbox.schema.json
