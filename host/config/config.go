package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"

	"github.com/parselbox/parselbox/host"
)

// Load reads the configuration file at path. The extension chooses the
// syntax: .hcl (HCL native syntax), .yaml or .yml, .json (plain JSON).
// Relative paths in the file are resolved against the file's directory and
// made absolute.
//
// Problems in the file are *Error values naming the file, line and key,
// joined with errors.Join.
func Load(path string) (*host.Config, error) {
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

// Parse reads a configuration held in memory, as Load reads a file:
// filename chooses the syntax and names the file in errors (for standard
// input, pass a name such as "stdin.yaml"), and relative paths are resolved
// against filepath.Dir(filename), so they stay relative when filename is.
func Parse(filename string, data []byte) (*host.Config, error) {
	return parse(filename, filepath.Dir(filename), data)
}

func parse(filename, dir string, data []byte) (*host.Config, error) {
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
	c, err := unmarshal(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if errs = append(d.errs, check(c, d.lines)...); len(errs) > 0 {
		return nil, errs.in(filename).err()
	}
	return c, nil
}

// unmarshal loads the decoded map into koanf and unmarshals it into a
// Config. The map is nested and koanf's "." delimiter is never used to
// split it (no flat keys are read back), so keys holding dots, such as a
// mount target "data.v2" or a key inside a bridge's config, stay whole.
func unmarshal(m map[string]any) (*host.Config, error) {
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(m, ""), nil); err != nil {
		return nil, fmt.Errorf("loading config map: %w", err)
	}
	var c host.Config
	err := k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{
		DecoderConfig: &mapstructure.DecoderConfig{ErrorUnused: true}, // the decoder and host.Config disagree: a bug
	})
	if err != nil {
		return nil, fmt.Errorf("unmarshalling config: %w", err)
	}
	return &c, nil
}
