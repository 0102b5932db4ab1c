package config

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/parselbox/parselbox/host"
)

// Validate checks what a Config must satisfy however it was built (from a
// file, in Go, or after command-line flags changed it): mount targets and
// modes, allow_net entries, bridge names, plugins and digests, variable
// names. Problems come back as *Error values with Key set, joined.
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
	if c.Memory < 0 {
		bad("memory", "must not be negative, got %d", c.Memory)
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
	return errs
}

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
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
