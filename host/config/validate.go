package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parselbox/parselbox/host"
)

// Validate checks what a Config must satisfy however it was built (from a
// file, in Go, or after command-line flags changed it): mount targets and
// modes, allow_net entries, bridge names, plugins and digests, variable
// names, MCP servers. Problems come back as *Error values with Key set, joined.
func Validate(c *host.Config) error {
	return check(c, nil).err()
}

// check validates c. From a file, lines holds the line of every key path
// the file set; each problem is placed there.
func check(c *host.Config, lines map[string]int) errorList {
	var errs errorList
	bad := func(key, format string, args ...any) {
		errs.add(lines[key], key, format, args...)
	}
	// missing reports a required key left out; one that the file set but
	// that failed to decode was reported already.
	missing := func(key, name string) {
		if _, set := lines[sub(key, name)]; !set {
			bad(key, "missing key %q", name)
		}
	}
	for i, p := range c.Files {
		if p == "" {
			bad(index("files", i), "must not be empty")
		}
	}
	for i, p := range c.PluginDirs {
		if p == "" {
			bad(index("plugin_dirs", i), "must not be empty")
		}
	}
	for _, target := range slices.Sorted(maps.Keys(c.Mounts)) {
		m, key := c.Mounts[target], entry("mount", target)
		if err := checkTarget(target); err != nil {
			bad(key, "%v", err)
		}
		if m.Source == "" {
			missing(key, "source")
		}
		if m.Mode != "" && m.Mode != "ro" && m.Mode != "rw" {
			bad(sub(key, "mode"), `must be "ro" or "rw", got %q`, m.Mode)
		}
	}
	for i, hp := range c.AllowNet {
		if err := checkHostPort(hp); err != nil {
			bad(index("allow_net", i), "%v", err)
		}
	}
	if c.Memory < 0 || c.Memory > host.MaxMemoryMB {
		bad("memory", "must be from 1 to %d MB (the 32-bit WebAssembly limit), got %d", host.MaxMemoryMB, c.Memory)
	}
	for _, l := range []struct {
		key string
		mb  int
	}{{"workspace_quota", c.WorkspaceQuota}, {"max_message_size", c.MaxMessageSize}, {"max_result_size", c.MaxResultSize}} {
		if l.mb < 0 {
			bad(l.key, "must be a whole number of MB, 0 (the default) or more, got %d", l.mb)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Env)) {
		if err := checkEnvName(name); err != nil {
			bad(entry("env", name), "%v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Globals)) {
		if err := checkIdentifier(name); err != nil {
			bad(entry("globals", name), "%v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Bridges)) {
		b, key := c.Bridges[name], entry("bridge", name)
		if err := checkIdentifier(name); err != nil {
			bad(key, "%v", err)
		}
		if b.Plugin == "" {
			missing(key, "plugin")
		}
		if b.SHA256 != "" && !sha256Hex.MatchString(b.SHA256) {
			bad(sub(key, "sha256"), "must be 64 hex digits, got %q", b.SHA256)
		}
		for i, v := range b.Env {
			if err := checkEnvName(v); err != nil {
				bad(index(sub(key, "env"), i), "%v", err)
			}
		}
	}
	checkMCPServers(c, bad, missing)
	return errs
}

// checkMCPServers checks the mcp_server entries: each becomes the Python
// namespace host.MCPNamespace(name), and is a stdio server (command, args,
// env) or an http one (url, headers).
func checkMCPServers(c *host.Config, bad func(key, format string, args ...any), missing func(key, name string)) {
	owner := map[string]string{} // namespace → server name
	for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
		m, key := c.MCPServers[name], entry("mcp_server", name)
		ns := host.MCPNamespace(name)
		switch {
		case ns == "" || ns[0] >= '0' && ns[0] <= '9':
			bad(key, "the name must make a Python namespace (its letters, digits and _, not starting with a digit), got %q", ns)
		case isKeyword(ns):
			bad(key, "the namespace %q is a Python keyword", ns)
		case owner[ns] != "":
			bad(key, "the namespace %q is also that of mcp_server %q", ns, owner[ns])
		default:
			if _, dup := c.Bridges[ns]; dup {
				bad(key, "the namespace %q is also a bridge", ns)
			}
			owner[ns] = name
		}
		typ := m.Type
		if typ == "" && m.Command != "" {
			typ = "stdio"
		} else if typ == "" && m.URL != "" {
			typ = "http"
		}
		switch typ {
		case "":
			bad(key, `needs a "command" (a stdio server) or a "url" (an http server)`)
		case "stdio":
			if m.Command == "" {
				missing(key, "command")
			}
			if m.URL != "" {
				bad(sub(key, "url"), "is for http servers; this one is stdio")
			}
			if len(m.Headers) > 0 {
				bad(sub(key, "headers"), "are for http servers; this one is stdio")
			}
		case "http", "sse":
			if m.URL == "" {
				missing(key, "url")
			} else if err := checkURL(m.URL); err != nil {
				bad(sub(key, "url"), "%v", err)
			}
			for _, f := range []struct {
				name string
				set  bool
			}{{"command", m.Command != ""}, {"args", len(m.Args) > 0}, {"env", len(m.Env) > 0}} {
				if f.set {
					bad(sub(key, f.name), "is for stdio servers; this one is %s", typ)
				}
			}
		default:
			bad(sub(key, "type"), `must be "stdio", "http" or "sse", got %q`, m.Type)
		}
		for _, v := range slices.Sorted(maps.Keys(m.Env)) {
			if err := checkEnvName(v); err != nil {
				bad(entry(sub(key, "env"), v), "%v", err)
			}
		}
		for _, h := range slices.Sorted(maps.Keys(m.Headers)) {
			if !headerName.MatchString(h) {
				bad(entry(sub(key, "headers"), h), "not an HTTP header name")
			}
		}
	}
}

// checkURL accepts an http:// or https:// URL with a host.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http:// or https:// URL, got %q", s)
	}
	return nil
}

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // an HTTP token
	hostname   = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*$`)
)

// checkIdentifier accepts a name that can be a Python namespace or global.
func checkIdentifier(name string) error {
	if !identifier.MatchString(name) {
		return fmt.Errorf("name must be a Python identifier (letters, digits and _, not starting with a digit)")
	}
	if isKeyword(name) {
		return fmt.Errorf("name must not be a Python keyword")
	}
	return nil
}

// isKeyword reports whether name is one of Python's hard keywords.
func isKeyword(name string) bool {
	switch name {
	case "False", "None", "True", "and", "as", "assert", "async", "await",
		"break", "class", "continue", "def", "del", "elif", "else", "except",
		"finally", "for", "from", "global", "if", "import", "in", "is",
		"lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
		"while", "with", "yield":
		return true
	}
	return false
}

// checkTarget accepts a mount target: a relative path below /mnt, such as
// "data" or "data/sub".
func checkTarget(target string) error {
	bad := target == "" || strings.ContainsAny(target, "\\\x00")
	for seg := range strings.SplitSeq(target, "/") {
		bad = bad || seg == "" || seg == "." || seg == ".."
	}
	if bad {
		return fmt.Errorf(`target must be a relative path such as "data" or "data/sub", without empty, "." or ".." parts`)
	}
	return nil
}

// checkHostPort accepts "host:port" as Deno's --allow-net takes it: a host
// name or IP address (IPv6 in brackets) and a port from 1 to 65535.
func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err == nil {
		p, perr := strconv.Atoi(port)
		ok := perr == nil && p >= 1 && p <= 65535 &&
			(hostname.MatchString(host) || (net.ParseIP(host) != nil && !strings.Contains(host, "%")))
		if ok {
			return nil
		}
	}
	return fmt.Errorf(`must be "host:port" with a port from 1 to 65535, got %q`, s)
}

// checkEnvName accepts an environment variable name.
func checkEnvName(name string) error {
	if !identifier.MatchString(name) {
		return fmt.Errorf("variable name must be letters, digits and _, not starting with a digit")
	}
	return nil
}
