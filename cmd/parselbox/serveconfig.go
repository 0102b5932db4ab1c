package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/config"
)

// serverSettings are the options of the MCP server itself: the `server`
// block of the configuration file, and the flags that mirror it.
type serverSettings struct {
	Transport       string
	Host            string
	Port            int
	AuthToken       string
	IdleTimeout     time.Duration // 0: never
	MaxSessions     int           // 0: no limit
	PoolSize        int           // 0: no pool
	MaxOutputTokens int           // 0: no limit
	Elicit          bool
	NoUI            bool
}

// serverKeys are the keys of the server block and how each is read.
var serverKeys = map[string]func(s *serverSettings, v any) error{
	"transport":         func(s *serverSettings, v any) error { return asString(v, &s.Transport) },
	"host":              func(s *serverSettings, v any) error { return asString(v, &s.Host) },
	"port":              func(s *serverSettings, v any) error { return asInt(v, &s.Port) },
	"auth_token":        func(s *serverSettings, v any) error { return asString(v, &s.AuthToken) },
	"idle_timeout":      func(s *serverSettings, v any) error { return asDuration(v, &s.IdleTimeout) },
	"max_sessions":      func(s *serverSettings, v any) error { return asInt(v, &s.MaxSessions) },
	"pool_size":         func(s *serverSettings, v any) error { return asInt(v, &s.PoolSize) },
	"max_output_tokens": func(s *serverSettings, v any) error { return asInt(v, &s.MaxOutputTokens) },
	"elicit":            func(s *serverSettings, v any) error { return asBool(v, &s.Elicit) },
	"no_ui":             func(s *serverSettings, v any) error { return asBool(v, &s.NoUI) },
}

// loadServerConfig loads a configuration file that may hold a `server`
// block: the block is read here and blanked out (keeping every line where
// it was, so that errors still point at the right line), and the rest goes
// to config.Parse as config.Load would take it. apply is called with the
// block's keys, if there is a block.
func loadServerConfig(path string, apply func(map[string]any) error) (*host.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("loading config: %w", err)
	}
	var block map[string]any
	switch strings.ToLower(filepath.Ext(path)) {
	case ".hcl":
		block, data, err = hclServerBlock(path, data)
	case ".yaml", ".yml":
		block, data, err = yamlServerBlock(path, data)
	case ".json":
		block, data, err = jsonServerBlock(path, data)
	}
	if err != nil {
		return nil, usageError{err}
	}
	if block != nil {
		if err := apply(block); err != nil {
			return nil, usageError{fmt.Errorf("%s: server: %w", path, err)}
		}
	}
	// As config.Load: relative paths against the file's directory.
	return config.Parse(abs, data)
}

// apply sets the keys of a server block.
func (s *serverSettings) apply(block map[string]any) error {
	keys := make([]string, 0, len(block))
	for k := range block {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		set, ok := serverKeys[k]
		if !ok {
			return fmt.Errorf("unknown key %q", k)
		}
		if block[k] == nil {
			continue
		}
		if err := set(s, block[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

func asString(v any, dst *string) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a string, got %v", v)
	}
	*dst = s
	return nil
}

func asBool(v any, dst *bool) error {
	b, ok := v.(bool)
	if !ok {
		return fmt.Errorf("want true or false, got %v", v)
	}
	*dst = b
	return nil
}

func asInt(v any, dst *int) error {
	f, ok := number(v)
	if !ok || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return fmt.Errorf("want a whole number, 0 or more, got %v", v)
	}
	*dst = int(f)
	return nil
}

// asDuration reads a Go duration string ("30m") or a number of seconds.
func asDuration(v any, dst *time.Duration) error {
	if s, ok := v.(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as \"30m\" or a number of seconds, got %q", s)
		}
		*dst = d
		return nil
	}
	f, ok := number(v)
	if !ok || f < 0 {
		return fmt.Errorf("want a duration such as \"30m\" or a number of seconds, got %v", v)
	}
	*dst = time.Duration(f * float64(time.Second))
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// blank replaces data[from:to] with spaces, keeping the newlines.
func blank(data []byte, from, to int) {
	for i := from; i < to && i < len(data); i++ {
		if data[i] != '\n' && data[i] != '\r' {
			data[i] = ' '
		}
	}
}

// hclServerBlock takes the top-level `server { ... }` block out of an HCL
// file. A file that does not parse is left to config.Parse to report.
func hclServerBlock(path string, data []byte) (map[string]any, []byte, error) {
	f, diags := hclsyntax.ParseConfig(data, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, data, nil
	}
	body := f.Body.(*hclsyntax.Body)
	if a, ok := body.Attributes["server"]; ok {
		return nil, nil, fmt.Errorf("%s:%d: server: write it as a block, server { ... }", path, a.NameRange.Start.Line)
	}
	var block map[string]any
	out := bytes.Clone(data)
	for _, b := range body.Blocks {
		if b.Type != "server" {
			continue
		}
		line := b.TypeRange.Start.Line
		if block != nil {
			return nil, nil, fmt.Errorf("%s:%d: server: there is a server block already", path, line)
		}
		if len(b.Labels) > 0 || len(b.Body.Blocks) > 0 {
			return nil, nil, fmt.Errorf("%s:%d: server: the block takes no label and holds no blocks", path, line)
		}
		block = map[string]any{}
		for name, a := range b.Body.Attributes {
			v, d := a.Expr.Value(nil)
			if d.HasErrors() {
				return nil, nil, fmt.Errorf("%s:%d: server: %s: %s", path, a.NameRange.Start.Line, name, d[0].Summary)
			}
			gv, err := ctyValue(v)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: server: %s: %w", path, a.NameRange.Start.Line, name, err)
			}
			block[name] = gv
		}
		r := b.Range()
		blank(out, r.Start.Byte, r.End.Byte)
	}
	return block, out, nil
}

func ctyValue(v cty.Value) (any, error) {
	switch {
	case v.IsNull():
		return nil, nil
	case !v.IsKnown():
		return nil, fmt.Errorf("unknown value")
	case v.Type() == cty.String:
		return v.AsString(), nil
	case v.Type() == cty.Bool:
		return v.True(), nil
	case v.Type() == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f, nil
	}
	return nil, fmt.Errorf("want a string, number or bool, got %s", v.Type().FriendlyName())
}

// yamlServerBlock takes the top-level `server:` key out of a YAML file,
// which must then be in block style at the top level.
func yamlServerBlock(path string, data []byte) (map[string]any, []byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil, data, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, data, nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		if key.Value != "server" {
			continue
		}
		if root.Style&yaml.FlowStyle != 0 {
			return nil, nil, fmt.Errorf("%s:%d: server: write the file in block style to have a server block", path, key.Line)
		}
		var block map[string]any
		if err := val.Decode(&block); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: server: want an object of settings: %v", path, key.Line, err)
		}
		// The block runs from its key to the next top-level key.
		lines := bytes.SplitAfter(bytes.Clone(data), []byte("\n"))
		end := len(lines)
		if i+2 < len(root.Content) {
			end = root.Content[i+2].Line - 1
		}
		for l := key.Line - 1; l < end && l < len(lines); l++ {
			blank(lines[l], 0, len(lines[l]))
		}
		if block == nil {
			block = map[string]any{}
		}
		return block, bytes.Join(lines, nil), nil
	}
	return nil, data, nil
}

// jsonServerBlock takes the top-level "server" member out of a JSON file.
func jsonServerBlock(path string, data []byte) (map[string]any, []byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, data, nil
	}
	for dec.More() {
		from := int(dec.InputOffset()) // before the comma and the key
		t, err := dec.Token()
		if err != nil {
			return nil, data, nil
		}
		if key, _ := t.(string); key != "server" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, data, nil
			}
			continue
		}
		var block map[string]any
		if err := dec.Decode(&block); err != nil {
			return nil, nil, fmt.Errorf("%s: server: want an object of settings: %v", path, err)
		}
		to := int(dec.InputOffset())
		out := bytes.Clone(data)
		if bytes.TrimLeft(data[from:to], " \t\r\n")[0] != ',' {
			// The first member: take the comma after it instead.
			rest := bytes.TrimLeft(data[to:], " \t\r\n")
			if len(rest) > 0 && rest[0] == ',' {
				to = len(data) - len(rest) + 1
			}
		}
		blank(out, from, to)
		if block == nil {
			block = map[string]any{}
		}
		return block, out, nil
	}
	return nil, data, nil
}
