package config

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agext/levenshtein"

	"github.com/parselbox/parselbox/host"
)

// A decoder turns the node tree of a file into the map that koanf
// unmarshals into host.Config, but for its "server" entry, which goes into
// Server. It checks what only the file form has (unknown keys, types, the
// forms of memory and durations, the server's values), resolves relative
// paths, and records the line of every key path so that Validate's
// findings can be placed in the file. It keeps going after a problem, to
// report all.
type decoder struct {
	dir   string // the config file's directory
	errs  errorList
	lines map[string]int // key path (as in Error.Key) → line
}

// A decodeFunc decodes the value n found at key path. It reports any
// problem and returns false; the caller then leaves the key out.
type decodeFunc func(n *node, path string) (any, bool)

func (d *decoder) config(n *node) map[string]any {
	m, _ := d.block(n, "", map[string]decodeFunc{
		"runtime_dir": d.path,
		"cache_dir":   d.path,
		"output_dir":  d.path,
		"files":       d.paths,
		"mount":       d.entries(d.mount),
		"network":     d.bool,
		"allow_net":   d.strings,
		"memory":      d.memory,
		"timeout":     d.timeout,
		"env":         d.entries(d.string),
		"globals":     d.entries(d.value),
		"bridge":      d.entries(d.bridge),
		"plugin_dirs": d.paths,
		"mcp":         d.path,
		"mcp_server":  d.entries(d.mcpServer),
		"server":      d.server,

		// Limits of the sandbox, in MB.
		"workspace_quota":  d.count,
		"max_message_size": d.count,
		"max_result_size":  d.count,
	})
	return m
}

func (d *decoder) mount(n *node, path string) (any, bool) {
	m, ok := d.block(n, path, map[string]decodeFunc{
		"source": d.path,
		"mode":   d.string,
	})
	if ok && m["mode"] == nil {
		m["mode"] = "ro"
	}
	return m, ok
}

func (d *decoder) bridge(n *node, path string) (any, bool) {
	m, ok := d.block(n, path, map[string]decodeFunc{
		"plugin": d.plugin,
		"sha256": d.sha256,
		"env":    d.strings,
		"config": d.object,
		"dir":    d.path,
	})
	if ok && m["dir"] == nil && d.dir != "" {
		m["dir"] = d.dir // relative paths in config resolve as in the rest of the file
	}
	return m, ok
}

// mcpServer decodes an MCP server: the keys of an mcp.json entry.
func (d *decoder) mcpServer(n *node, path string) (any, bool) {
	return d.block(n, path, map[string]decodeFunc{
		"type":    d.string,
		"command": d.plugin, // a name, or a path when it has a slash
		"args":    d.strings,
		"env":     d.entries(d.string),
		"url":     d.string,
		"headers": d.entries(d.string),
	})
}

// server decodes the server block: the settings of the MCP server.
func (d *decoder) server(n *node, path string) (any, bool) {
	return d.block(n, path, map[string]decodeFunc{
		"transport":         d.transport,
		"host":              d.host,
		"port":              d.port,
		"auth_token":        d.string,
		"idle_timeout":      d.idleTimeout,
		"max_sessions":      d.count,
		"pool_size":         d.count,
		"max_output_tokens": d.count,
		"elicit":            d.bool,
		"no_ui":             d.bool,
	})
}

// block decodes an object with a fixed set of keys. A null value is the same
// as leaving the key out.
func (d *decoder) block(n *node, path string, schema map[string]decodeFunc) (map[string]any, bool) {
	fields, ok := d.fields(n, path)
	if !ok {
		return nil, false
	}
	m := map[string]any{}
	for _, f := range fields {
		decode, known := schema[f.key]
		switch {
		case !known:
			d.unknown(f, path, slices.Sorted(maps.Keys(schema)))
			continue
		case f.val.v == nil:
			continue
		}
		key := sub(path, f.key)
		d.lines[key] = f.line
		if v, ok := decode(f.val, key); ok {
			m[f.key] = v
		}
	}
	return m, true
}

// entries decodes an object whose keys the user names (mount targets,
// bridge names, variables), each value with decode.
func (d *decoder) entries(decode decodeFunc) decodeFunc {
	return func(n *node, path string) (any, bool) {
		fields, ok := d.fields(n, path)
		if !ok {
			return nil, false
		}
		m := map[string]any{}
		for _, f := range fields {
			key := entry(path, f.key)
			d.lines[key] = f.line
			if v, ok := decode(f.val, key); ok {
				m[f.key] = v
			}
		}
		return m, true
	}
}

// fields returns the fields of an object, reporting any other value and
// dropping duplicate keys.
func (d *decoder) fields(n *node, path string) ([]field, bool) {
	fields, ok := n.v.([]field)
	if !ok {
		if path == "" {
			d.errs.add(n.line, "", "the file must hold an object of keys, got %s", describe(n))
		} else {
			d.errs.add(n.line, path, "must be an object, got %s", describe(n))
		}
		return nil, false
	}
	first := map[string]int{}
	out := fields[:0:0]
	for _, f := range fields {
		if line, dup := first[f.key]; dup {
			d.errs.add(f.line, path, "duplicate key %q (first on line %d)", f.key, line)
			continue
		}
		first[f.key] = f.line
		out = append(out, f)
	}
	return out, true
}

// unknown reports an unknown key, suggesting the closest known one.
func (d *decoder) unknown(f field, path string, known []string) {
	msg := fmt.Sprintf("unknown key %q", f.key)
	best, dist := "", 3 // suggest only keys at most 2 edits away
	for _, k := range known {
		if n := levenshtein.Distance(f.key, k, nil); n < dist {
			best, dist = k, n
		}
	}
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	d.errs.add(f.line, path, "%s", msg)
}

func (d *decoder) string(n *node, path string) (any, bool) {
	s, ok := n.v.(string)
	if !ok {
		d.errs.add(n.line, path, "must be a string, got %s", describe(n))
	}
	return s, ok
}

func (d *decoder) bool(n *node, path string) (any, bool) {
	b, ok := n.v.(bool)
	if !ok {
		d.errs.add(n.line, path, "must be true or false, got %s", describe(n))
	}
	return b, ok
}

// strings decodes a list of strings.
func (d *decoder) strings(n *node, path string) (any, bool) {
	return d.list(n, path, d.string)
}

// paths decodes a list of paths.
func (d *decoder) paths(n *node, path string) (any, bool) {
	return d.list(n, path, d.path)
}

// list decodes a list of strings, each with decode.
func (d *decoder) list(n *node, path string, decode decodeFunc) (any, bool) {
	items, ok := n.v.([]*node)
	if !ok {
		d.errs.add(n.line, path, "must be a list, got %s", describe(n))
		return nil, false
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		key := index(path, i)
		d.lines[key] = item.line
		if v, ok := decode(item, key); ok {
			out = append(out, v.(string))
		}
	}
	return out, true
}

// path decodes a path, resolving a relative one against the file's
// directory. An empty path stays empty (it means the default).
func (d *decoder) path(n *node, path string) (any, bool) {
	s, ok := n.v.(string)
	switch {
	case !ok:
		return d.string(n, path)
	case strings.HasPrefix(s, "~"):
		d.errs.add(n.line, path, "%q: ~ is not expanded, write the full path", s)
		return nil, false
	case s != "" && !filepath.IsAbs(s):
		s = filepath.Join(d.dir, s)
	}
	return s, true
}

// plugin decodes a bridge's plugin: a name, or a path when it has a slash.
func (d *decoder) plugin(n *node, path string) (any, bool) {
	if s, ok := n.v.(string); ok && !strings.Contains(s, "/") {
		return s, true
	}
	return d.path(n, path)
}

// sha256 decodes a digest, in lower case.
func (d *decoder) sha256(n *node, path string) (any, bool) {
	s, ok := n.v.(string)
	if !ok {
		return d.string(n, path)
	}
	return strings.ToLower(s), true
}

func (d *decoder) memory(n *node, path string) (any, bool) {
	mb, ok := n.v.(int64)
	if !ok || mb <= 0 || mb > host.MaxMemoryMB {
		d.errs.add(n.line, path, "must be a whole number of MB from 1 to %d (the 32-bit WebAssembly limit), got %s", host.MaxMemoryMB, describe(n))
		return nil, false
	}
	return int(mb), true
}

// timeout decodes the limit of one execution. Zero in the file turns the
// limit off, which host.Config writes as a negative Timeout (its zero value
// means the default).
func (d *decoder) timeout(n *node, path string) (any, bool) {
	t, ok := duration(n)
	switch {
	case !ok:
		d.errs.add(n.line, path, `must be a number of seconds or a duration such as "90s" (0 turns the limit off), got %s`, describe(n))
		return nil, false
	case t == 0:
		return time.Duration(-1), true
	}
	return t, true
}

// idleTimeout decodes the server's idle_timeout, where 0 means never.
func (d *decoder) idleTimeout(n *node, path string) (any, bool) {
	t, ok := duration(n)
	if !ok {
		d.errs.add(n.line, path, `must be a number of seconds or a duration such as "30m" (0: never), got %s`, describe(n))
		return nil, false
	}
	return t, true
}

// duration reads seconds (a number) or a Go duration string, 0 or more. A
// tiny positive number of seconds is at least 1ns: only 0 is zero.
func duration(n *node) (time.Duration, bool) {
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	switch v := n.v.(type) {
	case int64:
		if v >= 0 && v <= maxSeconds {
			return time.Duration(v) * time.Second, true
		}
	case float64:
		if v == 0 {
			return 0, true
		}
		if v > 0 && v <= float64(maxSeconds) { // false for NaN
			return max(time.Duration(math.Round(v*float64(time.Second))), 1), true
		}
	case string:
		if t, err := time.ParseDuration(v); err == nil && t >= 0 {
			return t, true
		}
	}
	return 0, false
}

// transport decodes the server's transport, in lower case.
func (d *decoder) transport(n *node, path string) (any, bool) {
	if s, ok := n.v.(string); ok {
		switch t := strings.ToLower(s); t {
		case "stdio", "http":
			return t, true
		}
	}
	d.errs.add(n.line, path, `must be "stdio" or "http", got %s`, describe(n))
	return nil, false
}

// host decodes the address the server listens on.
func (d *decoder) host(n *node, path string) (any, bool) {
	s, ok := n.v.(string)
	switch {
	case !ok:
		return d.string(n, path)
	case s == "":
		d.errs.add(n.line, path, "must not be empty")
		return nil, false
	}
	return s, true
}

// port decodes a TCP port, where 0 means any free port.
func (d *decoder) port(n *node, path string) (any, bool) {
	p, ok := n.v.(int64)
	if !ok || p < 0 || p > 65535 {
		d.errs.add(n.line, path, "must be a port number from 0 to 65535, got %s", describe(n))
		return nil, false
	}
	return int(p), true
}

// count decodes a whole number, 0 or more.
func (d *decoder) count(n *node, path string) (any, bool) {
	c, ok := n.v.(int64)
	if !ok || c < 0 || c > math.MaxInt {
		d.errs.add(n.line, path, "must be a whole number, 0 or more, got %s", describe(n))
		return nil, false
	}
	return int(c), true
}

// object decodes an object of any JSON values.
func (d *decoder) object(n *node, path string) (any, bool) {
	if _, ok := n.v.([]field); !ok {
		d.errs.add(n.line, path, "must be an object, got %s", describe(n))
		return nil, false
	}
	return d.value(n, path)
}

// value decodes any value into the Go form of JSON: nil, bool, string,
// int64 (whole numbers) or float64, []any and map[string]any.
func (d *decoder) value(n *node, path string) (any, bool) {
	switch v := n.v.(type) {
	case []*node:
		out, ok := make([]any, len(v)), true
		for i, item := range v {
			var itemOK bool
			out[i], itemOK = d.value(item, index(path, i))
			ok = ok && itemOK
		}
		return out, ok
	case []field:
		fields, _ := d.fields(n, path)
		out, ok := make(map[string]any, len(fields)), true
		for _, f := range fields {
			var fieldOK bool
			out[f.key], fieldOK = d.value(f.val, sub(path, f.key))
			ok = ok && fieldOK
		}
		return out, ok
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.errs.add(n.line, path, "must be a finite number, got %v", v)
			return nil, false
		}
	}
	return n.v, true
}
