// Package config loads a Parselbox configuration file into a host.Config,
// and its server block, the settings of the MCP server, into a Server.
//
// A file is HCL (.hcl), YAML (.yaml, .yml) or JSON (.json); the three share
// one set of keys, the koanf tags of host.Config (and of Server in the
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
// Unknown keys are errors at every level but inside a bridge's config,
// which is opaque to the host: it reaches host.BridgeConfig.Config as JSON
// values (map[string]any, []any, string, bool, nil, and numbers as int64
// when whole and float64 otherwise, whatever the syntax), for the bridge to
// check. Relative paths (runtime_dir, cache_dir, output_dir, files,
// plugin_dirs, mcp, a mount's source, and a bridge's plugin or an
// mcp_server's command when it contains a slash) are resolved against the
// file's directory. A timeout is seconds or
// a Go duration string; `timeout = 0` turns the limit off, which host.Config
// writes as a negative Timeout (its zero value means DefaultTimeout). A
// mount without a mode gets "ro". A sha256 is lower-cased. An option set to
// null is the same as one left out.
//
// Validate applies the checks that do not depend on the file (names, mount
// targets, host:port pairs, digests) to a Config built or changed in Go.
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
// LoadFile and ParseFile return it as File.Server; Load and Parse check it
// like the rest of the file, then leave it out. Its keys, all optional:
//
//   - transport: "stdio" or "http" (MCP's streamable HTTP), in any case.
//   - host: the address to listen on with http; not empty.
//   - port: the port to listen on with http, 0 to 65535 (0: any free port).
//   - auth_token: the bearer token every HTTP request must carry.
//   - idle_timeout: how long an HTTP session may go without a request
//     before it is closed, as seconds or a Go duration string (0: never).
//   - max_sessions: the HTTP sessions open at once (0: no limit).
//   - pool_size: the sandboxes kept booted ahead for new HTTP sessions
//     (0: none).
//   - max_output_tokens: the estimated size, in tokens, above which a
//     result is replaced by its preview (0: no limit).
//   - elicit: true asks the MCP client to approve every tool call the
//     sandbox makes.
//   - no_ui: true leaves the HTML of display() out of results.
//
// Counts are whole numbers, 0 or more. In HCL the block takes no label and
// is written as a block, not as `server = { ... }`. A key left out, or set
// to null, leaves its Server field nil, so that the command line can apply
// its own default (flag, then file, then default; the token may also come
// from $PARSELBOX_AUTH_TOKEN, between the flag and the file):
//
//	f, err := config.LoadFile("parselbox.hcl")
//	if err != nil {
//		return err
//	}
//	port := 9000
//	if f.Server.Port != nil {
//		port = *f.Server.Port
//	}
package config
