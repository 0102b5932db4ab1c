package config

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxYAMLNodes bounds the values a YAML file may expand to through aliases
// (a "billion laughs" file would otherwise take all memory).
const maxYAMLNodes = 1 << 20

// readYAML reads a YAML file, keeping the line of every key and value. An
// empty file is an empty object.
func readYAML(data []byte) (*node, errorList) {
	var r yamlReader
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		return &node{line: 1, v: []field{}}, nil
	case err != nil:
		r.syntax(err)
		return nil, r.errs
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		r.errs.add(next.Line, "", "a config file holds one YAML document, found another")
	case !errors.Is(err, io.EOF):
		r.syntax(err)
	}
	if len(r.errs) > 0 {
		return nil, r.errs
	}
	n := r.node(&doc, "")
	return n, r.errs
}

type yamlReader struct {
	errs  errorList
	nodes int
}

func (r *yamlReader) node(y *yaml.Node, path string) *node {
	if r.nodes++; r.nodes > maxYAMLNodes {
		if r.nodes == maxYAMLNodes+1 {
			r.errs.add(y.Line, path, "aliases expand to more than %d values", maxYAMLNodes)
		}
		return &node{line: y.Line}
	}
	switch y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			return &node{line: y.Line, v: []field{}}
		}
		return r.node(y.Content[0], path)
	case yaml.AliasNode:
		return r.node(y.Alias, path)
	case yaml.SequenceNode:
		items := make([]*node, len(y.Content))
		for i, c := range y.Content {
			items[i] = r.node(c, index(path, i))
		}
		return &node{y.Line, items}
	case yaml.MappingNode:
		fields := make([]field, 0, len(y.Content)/2)
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			if k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			switch {
			case k.Kind != yaml.ScalarNode:
				r.errs.add(k.Line, path, "keys must be strings")
				continue
			case k.ShortTag() == "!!merge":
				r.errs.add(k.Line, path, "merge keys (<<) are not supported")
				continue
			}
			fields = append(fields, field{k.Value, k.Line, r.node(v, sub(path, k.Value))})
		}
		return &node{y.Line, fields}
	}
	return r.scalar(y, path)
}

func (r *yamlReader) scalar(y *yaml.Node, path string) *node {
	n := &node{line: y.Line}
	var err error
	switch tag := y.ShortTag(); tag {
	case "!!null":
	case "!!str", "!!timestamp":
		n.v = y.Value
	case "!!bool":
		var b bool
		err = y.Decode(&b)
		n.v = b
	case "!!int":
		var i any
		err = y.Decode(&i)
		switch i := i.(type) {
		case int:
			n.v = int64(i)
		case int64:
			n.v = i
		case uint64:
			n.v = number(new(big.Float).SetUint64(i))
		case float64:
			n.v = number(big.NewFloat(i))
		}
	case "!!float":
		var f float64
		err = y.Decode(&f)
		n.v = f
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			n.v = number(big.NewFloat(f))
		}
	default:
		r.errs.add(y.Line, path, "unsupported YAML tag %s", tag)
	}
	if err != nil {
		r.errs.add(y.Line, path, "%v", err)
	}
	return n
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntax records a parse error, taking the line out of yaml's message.
func (r *yamlReader) syntax(err error) {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		r.errs.add(line, "", "%s", m[2])
		return
	}
	r.errs.add(0, "", "%v", err)
}
