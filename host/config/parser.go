package config

import (
	"strconv"
	"strings"
)

// A parser reads a file of one syntax (HCL, YAML or JSON). It
// turns the file into the nested map koanf loads, with JSON values (numbers
// as int64 when whole, float64 otherwise, whatever the syntax), and keeps
// what a map loses: the line of every key and list element, and the keys
// an object holds twice (the map keeps the first), for the checks of load.
type parser struct {
	read  func([]byte) (*node, errorList)
	lines map[string]int   // raw path (rawKey) → line
	dups  map[string][]dup // raw path of an object → its repeated keys
}

// A dup is a key set again in the same object.
type dup struct {
	key         string
	line, first int
}

// Unmarshal parses the file. Syntax errors are an errorList (without the
// file name, which load adds).
func (p *parser) Unmarshal(b []byte) (map[string]any, error) {
	root, errs := p.read(b)
	if len(errs) > 0 {
		return nil, errs
	}
	if _, ok := root.v.([]field); !ok {
		errs.add(root.line, "", "the file must hold an object of keys, got %s", describeValue(root.v))
		return nil, errs
	}
	return p.value(root, nil).(map[string]any), nil
}

func (p *parser) value(n *node, raw []string) any {
	p.lines[rawKey(raw)] = n.line
	switch v := n.v.(type) {
	case []*node:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = p.value(item, append(raw, rawIndex(i)))
		}
		return out
	case []field:
		out := make(map[string]any, len(v))
		first := map[string]int{}
		for _, f := range v {
			if line, seen := first[f.key]; seen {
				p.dups[rawKey(raw)] = append(p.dups[rawKey(raw)], dup{f.key, f.line, line})
				continue
			}
			first[f.key] = f.line
			out[f.key] = p.value(f.val, append(raw, f.key))
			p.lines[rawKey(append(raw, f.key))] = f.line // the key's line, not its value's
		}
		return out
	}
	return n.v
}

// Raw paths: the keys and list indexes from the root to a value, as the
// parsed map nests them. A list index is written "\x01" + the number, so
// that it differs from any key a file can hold as text.

func rawIndex(i int) string { return "\x01" + strconv.Itoa(i) }

func rawKey(raw []string) string { return strings.Join(raw, "\x00") }
