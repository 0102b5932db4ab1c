package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"

	"github.com/parselbox/parselbox/host"
)

// File is everything a configuration file holds: the sandbox's Config, and
// the server block, the settings of the MCP server that `parselbox` runs.
type File struct {
	Config *host.Config
	Server Server
}

// Server is the server block of a file: `server { ... }` in HCL, a
// top-level `server:` object in YAML and JSON. Its keys are the koanf tags.
// It sets the MCP server of cmd/parselbox, not the sandbox, so it is kept
// apart from host.Config.
//
// A field is nil when the file leaves its key out or sets it to null, so
// that a caller applying its own defaults can tell "not in the file" from
// a zero value, such as `pool_size = 0`. Loading checks every value set:
// Transport is "stdio" or "http", Host is not empty, Port is 0 to 65535,
// and no duration or count is negative.
type Server struct {
	// Transport is "stdio" or "http" (MCP's streamable HTTP at /mcp), in
	// lower case; the file may write it in any case.
	Transport *string `koanf:"transport"`
	// Host is the address the http transport listens on.
	Host *string `koanf:"host"`
	// Port is the port the http transport listens on; 0 picks a free one.
	Port *int `koanf:"port"`
	// AuthToken is the bearer token every HTTP request must carry.
	AuthToken *string `koanf:"auth_token"`
	// IdleTimeout closes an HTTP session after this long without a
	// request; 0 never does. The file writes seconds or a Go duration.
	IdleTimeout *time.Duration `koanf:"idle_timeout"`
	// MaxSessions caps the HTTP sessions open at once; 0 sets no limit.
	MaxSessions *int `koanf:"max_sessions"`
	// PoolSize is how many sandboxes are kept booted ahead for new HTTP
	// sessions; 0 keeps none.
	PoolSize *int `koanf:"pool_size"`
	// MaxOutputTokens replaces a result estimated above this many tokens
	// by its preview; 0 sets no limit.
	MaxOutputTokens *int `koanf:"max_output_tokens"`
	// Elicit asks the MCP client to approve every tool call of the sandbox.
	Elicit *bool `koanf:"elicit"`
	// NoUI leaves the HTML of display() out of results.
	NoUI *bool `koanf:"no_ui"`
}

// Load reads the configuration file at path, as LoadFile does, and returns
// its Config. A server block is checked like the rest of the file, then
// left out.
func Load(path string) (*host.Config, error) {
	f, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return f.Config, nil
}

// Parse reads a configuration held in memory, as ParseFile does, and
// returns its Config. A server block is checked, then left out.
func Parse(filename string, data []byte) (*host.Config, error) {
	f, err := ParseFile(filename, data)
	if err != nil {
		return nil, err
	}
	return f.Config, nil
}

// LoadFile reads the configuration file at path. The extension chooses the
// syntax: .hcl (HCL native syntax), .yaml or .yml, .json (plain JSON).
// Relative paths in the file are resolved against the file's directory and
// made absolute.
//
// Problems in the file are *Error values naming the file, line and key,
// joined with errors.Join.
func LoadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	return parse(path, dir, data)
}

// ParseFile reads a configuration held in memory, as LoadFile reads a
// file: filename chooses the syntax and names the file in errors (for
// standard input, pass a name such as "stdin.yaml"), and relative paths are
// resolved against filepath.Dir(filename), so they stay relative when
// filename is.
func ParseFile(filename string, data []byte) (*File, error) {
	return parse(filename, filepath.Dir(filename), data)
}

func parse(filename, dir string, data []byte) (*File, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark, as some editors write
	var root *node
	var errs errorList
	switch strings.ToLower(filepath.Ext(filename)) {
	case ".hcl":
		root, errs = readHCL(filename, data)
	case ".yaml", ".yml":
		root, errs = readYAML(data)
	case ".json":
		root, errs = readJSON(data)
	default:
		return nil, &Error{File: filename, Msg: fmt.Sprintf(
			"unknown config format %q: use .hcl, .yaml, .yml or .json", filepath.Ext(filename))}
	}
	if len(errs) > 0 {
		return nil, errs.in(filename).err()
	}
	d := decoder{dir: dir, lines: map[string]int{}}
	m := d.config(root)
	// The server block goes to File.Server, the rest to the Config.
	server, _ := m["server"].(map[string]any)
	delete(m, "server")
	f := &File{Config: &host.Config{}}
	if err := unmarshal(m, f.Config); err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if err := unmarshal(server, &f.Server); err != nil {
		return nil, fmt.Errorf("%s: server: %w", filename, err)
	}
	if errs = append(d.errs, check(f.Config, d.lines)...); len(errs) > 0 {
		return nil, errs.in(filename).err()
	}
	return f, nil
}

// unmarshal loads the decoded map into koanf and unmarshals it into out, a
// *host.Config or a *Server. The map is nested and koanf's "." delimiter is
// never used to split it (no flat keys are read back), so keys holding
// dots, such as a mount target "data.v2" or a key inside a bridge's config,
// stay whole.
func unmarshal(m map[string]any, out any) error {
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(m, ""), nil); err != nil {
		return fmt.Errorf("loading config map: %w", err)
	}
	err := k.UnmarshalWithConf("", out, koanf.UnmarshalConf{
		DecoderConfig: &mapstructure.DecoderConfig{ErrorUnused: true}, // the decoder and out disagree: a bug
	})
	if err != nil {
		return fmt.Errorf("unmarshalling config: %w", err)
	}
	return nil
}
