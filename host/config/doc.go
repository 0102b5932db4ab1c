// Package config loads a Parselbox configuration file into a host.Config.
//
// A file is HCL (.hcl), YAML (.yaml, .yml) or JSON (.json); the three share
// one set of keys, the koanf tags of host.Config, and load to the same
// Config. parselbox.hcl.example at the root of the repository documents
// every key. In HCL:
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
package config
