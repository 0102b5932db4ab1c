package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// File is everything a configuration holds: the sandbox's Config, and the
// server block, the settings of the MCP server that `parselbox` runs. It
// remembers where each value was set, for Locate.
type File struct {
	Config *host.Config
	Server mcpserver.Settings

	sources map[string]origin // key → where it was set
}

// shape is what a file holds: the keys of host.Config at the top level, and
// the server block.
type shape struct {
	host.Config `koanf:",squash"`
	Server      mcpserver.Settings `koanf:"server"`
}

// A Layer is a source of values over the file, loaded by a koanf provider:
// environment variables, command-line flags. Layers apply in order, each
// over the ones before; a Layer's values are checked as the file's are
// (relative paths excepted: they stay relative to the working directory).
type Layer struct {
	// Provider returns the layer's provider. k holds what the file and the
	// layers before loaded: posflag uses it to let a flag's default apply
	// only where nothing set the key.
	Provider func(k *koanf.Koanf) koanf.Provider
	// Flag names, for errors, what set the value at a key path of the
	// provider's map (its keys from the root, list indexes as numbers):
	// "--memory", "$PARSELBOX_AUTH_TOKEN"; "" when the value is one the
	// layer kept from below (an item of the file's list that a repeatable
	// flag adds to).
	Flag func(path []string) string
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

// LoadFile reads the configuration file at path (none when path is empty)
// over the defaults of the server block, then the layers. The extension
// chooses the syntax: .hcl (HCL native syntax), .yaml or .yml, .json
// (plain JSON). Relative paths in the file are resolved against the file's
// directory and made absolute.
//
// The result is checked with host.Config.Validate and
// mcpserver.Settings.Validate. Problems are *Error values naming the file,
// line and key (or the flag), joined with errors.Join.
func LoadFile(path string, layers ...Layer) (*File, error) {
	if path == "" {
		return load("", "", nil, layers)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	return load(path, dir, data, layers)
}

// ParseFile reads a configuration held in memory, as LoadFile reads a
// file: filename chooses the syntax and names the file in errors (for
// standard input, pass a name such as "stdin.yaml"), and relative paths are
// resolved against filepath.Dir(filename), so they stay relative when
// filename is.
func ParseFile(filename string, data []byte, layers ...Layer) (*File, error) {
	return load(filename, filepath.Dir(filename), data, layers)
}

func load(filename, dir string, data []byte, layers []Layer) (*File, error) {
	k := koanf.New(".")
	defaults, err := toMap(mcpserver.DefaultSettings())
	if err != nil {
		return nil, err
	}
	if err := k.Load(confmap.Provider(map[string]any{"server": defaults}, ""), nil); err != nil {
		return nil, err
	}
	var walkers []*walker
	if data != nil {
		read, err := reader(filename)
		if err != nil {
			return nil, err
		}
		p := &parser{read: read, lines: map[string]int{}, dups: map[string][]dup{}}
		w := &walker{dups: p.dups, dir: dir, origin: func(raw []string) origin {
			return origin{file: filename, line: p.lines[rawKey(raw)]}
		}}
		parse := func() (map[string]any, error) { return p.Unmarshal(bytes.TrimPrefix(data, []byte("\ufeff"))) }
		if err := k.Load(checked{parse, w}, nil); err != nil {
			if errs, ok := errors.AsType[errorList](err); ok {
				for _, e := range errs {
					e.File = filename
				}
				return nil, errs.err()
			}
			return nil, fmt.Errorf("%s: %w", filename, err)
		}
		walkers = append(walkers, w)
	}
	for _, l := range layers {
		w := &walker{origin: func(raw []string) origin {
			path := make([]string, len(raw))
			for i, s := range raw {
				path[i] = strings.TrimPrefix(s, "\x01")
			}
			return origin{flag: l.Flag(path)}
		}}
		if err := k.Load(checked{l.Provider(k).Read, w}, nil); err != nil {
			return nil, err
		}
		walkers = append(walkers, w)
	}

	var s shape
	err = k.UnmarshalWithConf("", &s, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		ErrorUnused: true, // the walker let through a key the struct lacks: a bug
		Result:      &s,
		TagName:     "koanf",
	}})
	if err != nil {
		return nil, fmt.Errorf("unmarshalling config: %w", err)
	}
	f := &File{Config: &s.Config, Server: s.Server, sources: map[string]origin{}}
	var errs errorList
	for _, w := range walkers {
		errs = append(errs, w.errs...)
		for key, o := range w.set {
			if o != (origin{}) {
				f.sources[key] = o
			}
		}
	}
	f.fileForms(&errs)
	// Validate's problems, but for a value reported already (and left out,
	// so that what Validate saw is not what was set).
	for _, err := range []error{f.Config.Validate(), f.Server.Validate()} {
		for _, e := range unjoin(err) {
			if ke, ok := errors.AsType[*host.KeyError](e); ok && !f.missingButSet(ke) && !reported(errs, ke.Key) {
				errs = append(errs, f.sources[ke.Key].error(ke.Key, ke.Message))
			}
		}
	}
	f.normalize()
	if len(errs) > 0 {
		return nil, errs.err()
	}
	return f, nil
}

// checked is a koanf.Provider: the map that read returns (the parsed
// file, or another provider's), checked and converted by a walker, so that
// what koanf merges unmarshals into the shape. The walker keeps the
// problems.
type checked struct {
	read func() (map[string]any, error)
	w    *walker
}

func (c checked) Read() (map[string]any, error) {
	m, err := c.read()
	if err != nil {
		return nil, err
	}
	c.w.set = map[string]origin{}
	v, _ := c.w.value(m, reflect.TypeFor[shape](), "", "", nil)
	out, _ := v.(map[string]any)
	if c.w.dir != "" {
		bridgeDirs(out, c.w.dir)
	}
	return out, nil
}

func (checked) ReadBytes() ([]byte, error) { return nil, errors.New("not supported") }

// bridgeDirs gives the bridges of a file its directory as working
// directory, unless they name one: relative paths in a bridge's config
// resolve as in the rest of the file.
func bridgeDirs(m map[string]any, dir string) {
	bridges, _ := m["bridge"].(map[string]any)
	for _, b := range bridges {
		if b, ok := b.(map[string]any); ok && b["dir"] == nil {
			b["dir"] = dir
		}
	}
}

// fileForms applies what 0 means in a file or flag for the keys whose Go
// zero value is the default: `timeout = 0` turns the limit off (a negative
// Timeout); `memory = 0` is no size (leave it out for the default).
func (f *File) fileForms(errs *errorList) {
	if _, set := f.sources["timeout"]; set && f.Config.Timeout == 0 {
		f.Config.Timeout = -1
	}
	if o, set := f.sources["memory"]; set && f.Config.Memory == 0 && !reported(*errs, "memory") {
		*errs = append(*errs, o.error("memory", fmt.Sprintf("must be a whole number of MB from 1 to %d (the 32-bit WebAssembly limit), got 0", host.MaxMemoryMB)))
	}
}

// normalize writes values in their one form: modes, digests and the
// transport in lower case, the mount mode "ro" when left out, the token
// trimmed.
func (f *File) normalize() {
	for t, m := range f.Config.Mounts {
		if m.Mode == "" {
			m.Mode = "ro"
			f.Config.Mounts[t] = m
		}
	}
	for name, b := range f.Config.Bridges {
		b.SHA256 = strings.ToLower(b.SHA256)
		f.Config.Bridges[name] = b
	}
	f.Server.Transport = strings.ToLower(f.Server.Transport)
	f.Server.AuthToken = strings.TrimSpace(f.Server.AuthToken)
}

// missingButSet reports a "missing key" problem for a key that was set,
// with a value reported already.
func (f *File) missingButSet(ke *host.KeyError) bool {
	name, ok := strings.CutPrefix(ke.Message, "missing key ")
	if !ok {
		return false
	}
	_, set := f.sources[sub(ke.Key, strings.Trim(name, `"`))]
	return set
}

// reported tells whether errs holds a problem with the value at key (not
// with a key inside it: unknown or repeated).
func reported(errs errorList, key string) bool {
	for _, e := range errs {
		if e.Key == key && !strings.HasPrefix(e.Msg, "unknown key ") && !strings.HasPrefix(e.Msg, "duplicate key ") {
			return true
		}
	}
	return false
}

// reader returns the reader of the syntax filename's extension names.
func reader(filename string) (func([]byte) (*node, errorList), error) {
	switch strings.ToLower(filepath.Ext(filename)) {
	case ".hcl":
		return func(b []byte) (*node, errorList) { return readHCL(filename, b) }, nil
	case ".yaml", ".yml":
		return readYAML, nil
	case ".json":
		return readJSON, nil
	}
	return nil, &Error{File: filename, Msg: fmt.Sprintf(
		"unknown config format %q: use .hcl, .yaml, .yml or .json", filepath.Ext(filename))}
}

// toMap is v as koanf holds it: a map by koanf tag.
func toMap(v any) (map[string]any, error) {
	var m map[string]any
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{TagName: "koanf", Result: &m})
	if err != nil {
		return nil, err
	}
	return m, d.Decode(v)
}

// unjoin is the errors that errors.Join joined into err.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}
