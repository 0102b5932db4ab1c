package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/parselbox/parselbox/host/sandbox"
)

// MCPPlugin is the plugin that serves an MCP server as a namespace: the
// binary parselbox-bridge-mcpproxy, found like any plugin (next to the
// parselbox binary, then in Config.PluginDirs).
const MCPPlugin = "mcpproxy"

// MCPProbeEnv is set to "1" in the environment of every stdio MCP server
// that Parselbox starts. A parselbox process started with it set exits at
// once with status 0: when an mcp.json that launches Parselbox also lists
// Parselbox among the servers Parselbox reads, Parselbox does not start
// itself (the proxy skips the server, whose namespace has no tools).
const MCPProbeEnv = "PARSELBOX_MCP_PROBE"

// MCPNamespace is the Python namespace of the MCP server named name: every
// character outside [A-Za-z0-9_] becomes "_", then leading and trailing "_"
// go ("my-server" is my_server). New refuses a name whose namespace is
// empty, starts with a digit or is a Python keyword.
func MCPNamespace(name string) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name), "_")
}

// mcpServer is an MCP server of the configuration, with where it comes
// from: an mcp_server entry, or an entry of the mcp.json file at line.
type mcpServer struct {
	name string
	file string // the mcp.json; "" for an mcp_server entry
	line int
	srv  MCPServer
}

// key names the entry as an error does: `mcp_server "name"`, or
// `mcpServers "name"` in an mcp.json.
func (m mcpServer) key() string {
	if m.file == "" {
		return entry("mcp_server", m.name)
	}
	return entry("mcpServers", m.name)
}

// origin is the key, with the file and line for an mcp.json entry.
func (m mcpServer) origin() string {
	if m.file == "" {
		return m.key()
	}
	return fmt.Sprintf("%s in %s:%d", m.key(), m.file, m.line)
}

// problem is a ConfigError for the entry: its key errors, placed in the
// mcp.json when it comes from there.
func (m mcpServer) problem(err error) error {
	if m.file != "" {
		err = fmt.Errorf("%s:%d: %w", m.file, m.line, err)
	}
	return &ConfigError{err}
}

// mcpBridges returns the bridges that serve the configured MCP servers
// (Config.MCP and Config.MCPServers), keyed by namespace: plugin
// MCPPlugin, with the server's entry (and its name) as configuration. The
// entries of the mcp.json get the checks Validate gives mcp_server entries.
func (s *Sandbox) mcpBridges() (map[string]BridgeConfig, error) {
	var all []mcpServer
	if s.cfg.MCP != "" {
		var err error
		if all, err = readMCPFile(s.cfg.MCP); err != nil {
			return nil, &ConfigError{err}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.cfg.MCPServers)) {
		all = append(all, mcpServer{name: name, srv: s.cfg.MCPServers[name]})
	}
	out := map[string]BridgeConfig{}
	owners := map[string]string{} // namespace → origin of the entry that has it
	for _, m := range all {
		var v validation
		ns := MCPNamespace(m.name)
		v.namespace(m.key(), ns, owners[ns], s.cfg.Bridges)
		m.srv.Type = m.srv.check(m.key(), &v)
		if err := v.err(); err != nil {
			return nil, m.problem(err)
		}
		config, err := entryConfig(m.name, m.srv)
		if err != nil {
			return nil, m.problem(err)
		}
		if m.srv.Type == "stdio" && !s.dryRun {
			home, err := s.mcpHome(ns)
			if err != nil {
				return nil, err
			}
			config["home"] = home
		}
		owners[ns] = m.origin()
		out[ns] = BridgeConfig{Plugin: MCPPlugin, Config: config, ToolPolicy: m.srv.ToolPolicy}
	}
	return out, nil
}

// mcpHome is the private, writable HOME (and npm cache) of the stdio MCP
// server of namespace ns, under the cache directory: made, 0700.
func (s *Sandbox) mcpHome(ns string) (string, error) {
	dir := s.cfg.CacheDir
	if dir == "" {
		d, err := sandbox.DefaultCacheDir()
		if err != nil {
			return "", fmt.Errorf("the MCP servers' home: %w", err)
		}
		dir = d
	}
	home, err := filepath.Abs(filepath.Join(dir, "mcp-home", ns))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("the MCP server's home: %w", err)
	}
	return home, nil
}

// entryConfig is the mcpproxy bridge's configuration: the entry as JSON
// values, with the server's name.
func entryConfig(name string, srv MCPServer) (map[string]any, error) {
	b, err := json.Marshal(srv)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["name"] = name
	return m, nil
}

// mcpFileEntry is an entry of an mcp.json. Keys that other MCP clients use
// (cwd, timeout, autoApprove, ...) are ignored; "disabled": true leaves the
// server out.
type mcpFileEntry struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
}

// readMCPFile reads the servers of an mcp.json, {"mcpServers": {...}}, in
// file order. A relative command with a slash is resolved against the
// file's directory. Errors name the file and, where there is one, the line.
func readMCPFile(path string) ([]mcpServer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading MCP servers: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	r := mcpFileReader{path: path, dir: dir, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	return r.read()
}

type mcpFileReader struct {
	path string
	dir  string // the file's, absolute
	data []byte
	dec  *json.Decoder
}

// line is the line of the last token read.
func (r *mcpFileReader) line() int {
	return bytes.Count(r.data[:r.dec.InputOffset()], []byte("\n")) + 1
}

// errorf is an error at the current line: `FILE:LINE: msg`.
func (r *mcpFileReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", r.path, r.line(), fmt.Sprintf(format, args...))
}

// syntax is a JSON syntax error at the current position.
func (r *mcpFileReader) syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("unexpected end of JSON input")
	}
	return r.errorf("%v", err)
}

func (r *mcpFileReader) read() ([]mcpServer, error) {
	if err := r.delim('{', "the file must hold a JSON object: {\"mcpServers\": {...}}"); err != nil {
		return nil, err
	}
	var servers []mcpServer
	found := false
	for r.dec.More() {
		tok, err := r.dec.Token()
		if err != nil {
			return nil, r.syntax(err)
		}
		if tok != "mcpServers" {
			var skip json.RawMessage // another client's key
			if err := r.dec.Decode(&skip); err != nil {
				return nil, r.syntax(err)
			}
			continue
		}
		if found {
			return nil, r.errorf(`duplicate key "mcpServers"`)
		}
		found = true
		if err := r.delim('{', `mcpServers: must be an object of servers by name`); err != nil {
			return nil, err
		}
		seen := map[string]int{}
		for r.dec.More() {
			tok, err := r.dec.Token()
			if err != nil {
				return nil, r.syntax(err)
			}
			name, line := tok.(string), r.line()
			if first, dup := seen[name]; dup {
				return nil, r.errorf("mcpServers %q: duplicate server (first on line %d)", name, first)
			}
			seen[name] = line
			var raw json.RawMessage
			if err := r.dec.Decode(&raw); err != nil {
				return nil, r.syntax(err)
			}
			var e mcpFileEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, fmt.Errorf("%s:%d: mcpServers %q: %s", r.path, line, name, entryError(err))
			}
			if e.Disabled {
				continue
			}
			if strings.ContainsRune(e.Command, '/') && !filepath.IsAbs(e.Command) {
				e.Command = filepath.Join(r.dir, e.Command)
			}
			servers = append(servers, mcpServer{
				name: name, file: r.path, line: line,
				srv: MCPServer{Type: e.Type, Command: e.Command, Args: e.Args, Env: e.Env, URL: e.URL, Headers: e.Headers},
			})
		}
		if _, err := r.dec.Token(); err != nil { // the closing }
			return nil, r.syntax(err)
		}
	}
	if _, err := r.dec.Token(); err != nil { // the closing }
		return nil, r.syntax(err)
	}
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, r.errorf("unexpected data after the JSON object")
	}
	if !found {
		return nil, fmt.Errorf(`%s: no "mcpServers" key: an mcp.json holds {"mcpServers": {"NAME": {"command": ...} or {"type": "http", "url": ...}}}`, r.path)
	}
	return servers, nil
}

// delim reads an opening delimiter, or fails with msg.
func (r *mcpFileReader) delim(want json.Delim, msg string) error {
	tok, err := r.dec.Token()
	if err != nil {
		return r.syntax(err)
	}
	if tok != want {
		return r.errorf("%s", msg)
	}
	return nil
}

// entryWant says what the value of an mcp.json entry's key must be, by
// the kind of its field in mcpFileEntry.
var entryWant = map[reflect.Kind]string{
	reflect.String: "a string",
	reflect.Slice:  "a list of strings",
	reflect.Map:    "an object of strings",
	reflect.Bool:   "true or false",
}

// entryError says which key of an entry has the wrong type.
func entryError(err error) string {
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) {
		return err.Error()
	}
	key, _, _ := strings.Cut(ute.Field, ".")
	want := ""
	for f := range reflect.TypeFor[mcpFileEntry]().Fields() {
		if f.Tag.Get("json") == key {
			want = entryWant[f.Type.Kind()]
		}
	}
	if key == "" || want == "" {
		return "must be an object (a server entry)"
	}
	got := "a " + ute.Value
	if strings.ContainsAny(ute.Value[:1], "aeiou") {
		got = "an " + ute.Value // an object, an array
	}
	return fmt.Sprintf("%s: must be %s, got %s", key, want, got)
}

// pluginBridges returns the plugin bridges to start: Config.Bridges and
// the bridges of the MCP servers (also returned on their own, by name).
func (s *Sandbox) pluginBridges() (all, mcp map[string]BridgeConfig, err error) {
	if mcp, err = s.mcpBridges(); err != nil {
		return nil, nil, err
	}
	all = map[string]BridgeConfig{}
	maps.Copy(all, s.cfg.Bridges)
	maps.Copy(all, mcp)
	return all, mcp, nil
}
