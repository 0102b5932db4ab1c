package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/parselbox/parselbox/sdk"
)

// ProbeEnv is set to "1" in the environment of every stdio server the proxy
// starts. A parselbox started with it exits at once with status 0, so that
// an mcp.json that launches Parselbox and lists Parselbox among its servers
// does not make Parselbox start itself over and over (the loopback guard).
// The host names the same variable host.MCPProbeEnv.
const ProbeEnv = "PARSELBOX_MCP_PROBE"

// Transport types of a server entry.
const (
	typeStdio = "stdio" // a command, spoken to over stdin/stdout
	typeHTTP  = "http"  // MCP's streamable HTTP transport
	typeSSE   = "sse"   // MCP's older HTTP+SSE transport
)

// serverConfig is the bridge's configuration block: one MCP server entry as
// an mcp.json writes it, with the server's name. The host builds it from
// the configuration; a hand-written `bridge` block with plugin "mcpproxy"
// works too.
type serverConfig struct {
	// Name is the server's name as configured (messages use it).
	Name string `json:"name"`
	// Type is "stdio", "http" or "sse". Empty: "stdio" when Command is set,
	// "http" when URL is.
	Type string `json:"type"`

	// Command, Args and Env start a stdio server. A command without a slash
	// is looked up in the server's PATH (Env's, or sdk.DefaultPath: the
	// proxy's process gets none of the host's environment, so neither does
	// the server).
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	// Home is a private, writable directory that becomes a stdio server's
	// HOME, with npm's cache in it (npm_config_cache=HOME/.npm), unless
	// Env sets them: without it, `npx` falls back to a cache it may not
	// write. The host sets it under its cache directory.
	Home string `json:"home"`

	// URL and Headers reach an HTTP server.
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`

	// redact removes the entry's credentials (see secrets) from what the
	// sandbox sees; set by parseConfig.
	redact *sdk.Redactor
}

// parseConfig decodes and checks the bridge's configuration block, and
// reports its credentials to the host (req.AddSecrets). Its errors are
// *sdk.ConfigError naming the key (several joined when several keys are
// wrong).
func parseConfig(req *sdk.ConfigureRequest) (*serverConfig, error) {
	c, err := sdk.DecodeConfig[serverConfig](req)
	if err != nil {
		return nil, err
	}
	if c.Type == "" {
		switch {
		case c.Command != "":
			c.Type = typeStdio
		case c.URL != "":
			c.Type = typeHTTP
		}
	}
	c.Name = cmp.Or(c.Name, "mcp")
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &sdk.ConfigError{Key: key, Message: fmt.Sprintf("MCP server %q: ", c.Name) + fmt.Sprintf(format, args...)})
	}
	switch c.Type {
	case "":
		bad("", `give a "command" (stdio) or a "url" (http)`)
	case typeStdio:
		if c.Command == "" {
			bad("command", `a stdio server needs a "command"`)
		}
		if c.URL != "" || len(c.Headers) > 0 {
			bad("url", `"url" and "headers" are for http servers, not stdio ones`)
		}
	case typeHTTP, typeSSE:
		if c.URL == "" {
			bad("url", `an http server needs a "url"`)
		} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url", "url must be an http:// or https:// URL, got %q", safeURL(c.URL))
		}
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 {
			bad("command", `"command", "args" and "env" are for stdio servers, not %s ones`, c.Type)
		}
	default:
		bad("type", `type must be "stdio", "http" or "sse", got %q`, c.Type)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if !envName.MatchString(k) {
			bad("env", "env %q: not a variable name", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		if !httpguts.ValidHeaderFieldName(k) {
			bad("headers", "header %q: not a header name", k)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	secrets := c.secrets()
	req.AddSecrets(secrets...)
	c.redact = sdk.NewRedactor(secrets...)
	return &c, nil
}

// secrets are the entry's credentials: the values of headers whose names
// say they carry one (sdk.SecretName), with their part after a scheme such
// as "Bearer "; the values of such environment variables; and the URL's
// password, the Basic credential that Go sends for its user:password, and
// its query values with such names. Args are not secrets: a server's
// command line is not a place for them (env is).
func (c *serverConfig) secrets() []string {
	var out []string
	for name, value := range c.Headers {
		out = append(out, sdk.HeaderSecrets(name, value)...)
	}
	for name, value := range c.Env {
		if sdk.SecretName(name) {
			out = append(out, value)
		}
	}
	return append(out, sdk.URLSecrets(c.URL)...)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// safeURL is a URL as messages show it: scheme://host, without the
// userinfo, path, query and fragment, which may hold credentials (some
// services put the key in the path).
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// urlInText matches the http URLs in a message (net/http quotes the whole
// URL of a failed request, query included).
var urlInText = regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>]+`)

// safeURLs rewrites the http URLs in a message as safeURL shows them.
func safeURLs(msg string) string {
	return urlInText.ReplaceAllStringFunc(msg, func(u string) string {
		trimmed := strings.TrimRight(u, ".,;:!?)") // the sentence's, not the URL's
		return safeURL(trimmed) + u[len(trimmed):]
	})
}

// environ is a stdio server's whole environment: PATH (sdk.DefaultPath unless
// the entry sets it), HOME and npm_config_cache from Home, the entry's env
// (which wins), and ProbeEnv=1.
func (c *serverConfig) environ() []string {
	// When the command is an absolute path, its directory comes first (so
	// that `#!/usr/bin/env node` finds the node next to an npx).
	env := map[string]string{"PATH": sdk.DefaultPath}
	if filepath.IsAbs(c.Command) {
		env["PATH"] = filepath.Dir(c.Command) + string(filepath.ListSeparator) + sdk.DefaultPath
	}
	if c.Home != "" {
		env["HOME"] = c.Home
		env["npm_config_cache"] = filepath.Join(c.Home, ".npm")
	}
	maps.Copy(env, c.Env)
	env[ProbeEnv] = "1"
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// executable resolves the command of a stdio server: a path when it holds a
// slash, else a name looked up in the server's PATH (not the proxy's, which
// has none).
func (c *serverConfig) executable() (string, error) {
	if strings.ContainsRune(c.Command, '/') {
		path, err := filepath.Abs(c.Command)
		if err != nil {
			return "", err
		}
		if err := isExecutable(path); err != nil {
			return "", fmt.Errorf("command %q: %w", c.Command, err)
		}
		return path, nil
	}
	pathEnv := sdk.DefaultPath
	if p, ok := c.Env["PATH"]; ok {
		pathEnv = p
	}
	if path := sdk.LookPath(c.Command, pathEnv); path != "" {
		return path, nil
	}
	return "", fmt.Errorf(`command %q not found in PATH %s: give its full path, or set "PATH" in the server's "env"`, c.Command, pathEnv)
}

func isExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// String shows how the server is reached, for messages and help text
// (which the sandbox sees): the transport and, for stdio, the command's base
// name (`stdio: npx`: no args, no env); for http and sse, the URL's scheme
// and host (`http: https://example.com`, safeURL).
func (c *serverConfig) String() string {
	if c.Type == typeStdio {
		return "stdio: " + filepath.Base(c.Command)
	}
	return c.Type + ": " + safeURL(c.URL)
}
