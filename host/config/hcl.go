package config

import (
	"cmp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// labelled maps the top-level block types that take exactly one label (the
// key of the entry) to what the label names: mount "TARGET" { ... }.
var labelled = map[string]string{"mount": "TARGET", "bridge": "NAME", "mcp_server": "NAME"}

// unlabelled are the top-level block types that take no label, such as
// `server { ... }`. They are written as blocks only: `server = { ... }` is
// an error, as the documented form is a block.
var unlabelled = map[string]bool{"server": true}

// readHCL reads HCL native syntax. Attributes become keys; a block
// `type "label" { ... }` becomes the entry "label" of the object "type"
// (the shape YAML and JSON write as type: {label: {...}}), and a block
// without a label is an object. Expressions may not refer to variables or
// call functions.
func readHCL(filename string, data []byte) (*node, errorList) {
	f, diags := hclsyntax.ParseConfig(data, filename, hcl.InitialPos)
	var r hclReader
	if diags.HasErrors() {
		r.diagnostics(diags, "")
		return nil, r.errs
	}
	n := r.body(f.Body.(*hclsyntax.Body), "")
	return n, r.errs
}

type hclReader struct {
	errs errorList
}

func (r *hclReader) body(b *hclsyntax.Body, path string) *node {
	var fields []field
	for _, a := range b.Attributes {
		line, key := a.NameRange.Start.Line, sub(path, a.Name)
		if unlabelled[a.Name] && path == "" {
			r.errs.add(line, key, "write it as a block: %s { ... }", a.Name)
			continue
		}
		fields = append(fields, field{a.Name, line, r.expr(a.Expr, key)})
	}
	groups := map[string]*node{} // block type → the object holding its labelled blocks
	for _, blk := range b.Blocks {
		line, key := blk.TypeRange.Start.Line, sub(path, blk.Type)
		if want, ok := labelled[blk.Type]; ok && path == "" && len(blk.Labels) != 1 {
			r.errs.add(line, key, "a %s block takes one label: %s %q { ... }", blk.Type, blk.Type, want)
			continue
		}
		if unlabelled[blk.Type] && path == "" && len(blk.Labels) > 0 {
			r.errs.add(line, key, "a %s block takes no label: %s { ... }", blk.Type, blk.Type)
			continue
		}
		switch len(blk.Labels) {
		case 0:
			fields = append(fields, field{blk.Type, line, r.body(blk.Body, key)})
		case 1:
			g := groups[blk.Type]
			if g == nil {
				g = &node{line: line, v: []field(nil)}
				groups[blk.Type] = g
				fields = append(fields, field{blk.Type, line, g})
			}
			label := blk.Labels[0]
			g.v = append(g.v.([]field), field{label, line, r.body(blk.Body, entry(key, label))})
		default:
			r.errs.add(line, key, "a block takes at most one label, got %d", len(blk.Labels))
		}
	}
	// Attributes come from a map: restore file order.
	slices.SortStableFunc(fields, func(a, b field) int { return cmp.Compare(a.line, b.line) })
	return &node{line: b.SrcRange.Start.Line, v: fields}
}

// expr reads list and object constructors element by element, so that each
// element keeps its own line, and evaluates everything else.
func (r *hclReader) expr(e hclsyntax.Expression, path string) *node {
	line := e.Range().Start.Line
	switch e := e.(type) {
	case *hclsyntax.TupleConsExpr:
		items := make([]*node, len(e.Exprs))
		for i, x := range e.Exprs {
			items[i] = r.expr(x, index(path, i))
		}
		return &node{line, items}
	case *hclsyntax.ObjectConsExpr:
		fields := make([]field, 0, len(e.Items))
		for _, item := range e.Items {
			kline := item.KeyExpr.Range().Start.Line
			k, diags := item.KeyExpr.Value(nil)
			if diags.HasErrors() {
				r.diagnostics(diags, path)
				continue
			}
			k, err := convert.Convert(k, cty.String)
			if err != nil || k.IsNull() {
				r.errs.add(kline, path, "object keys must be strings")
				continue
			}
			key := k.AsString()
			fields = append(fields, field{key, kline, r.expr(item.ValueExpr, sub(path, key))})
		}
		return &node{line, fields}
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() {
		r.diagnostics(diags, path)
		return &node{line: line}
	}
	return r.value(v, line, path)
}

// value converts an evaluated HCL value.
func (r *hclReader) value(v cty.Value, line int, path string) *node {
	t := v.Type()
	switch {
	case v.IsNull():
		return &node{line: line}
	case !v.IsWhollyKnown():
		r.errs.add(line, path, "value is not known until run time")
		return &node{line: line}
	case t == cty.String:
		return &node{line, v.AsString()}
	case t == cty.Number:
		return &node{line, number(v.AsBigFloat())}
	case t == cty.Bool:
		return &node{line, v.True()}
	case t.IsTupleType() || t.IsListType() || t.IsSetType():
		var items []*node
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			items = append(items, r.value(e, line, index(path, len(items))))
		}
		return &node{line, items}
	case t.IsObjectType() || t.IsMapType():
		var fields []field
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			fields = append(fields, field{k.AsString(), line, r.value(e, line, sub(path, k.AsString()))})
		}
		return &node{line, fields}
	}
	r.errs.add(line, path, "unsupported value of type %s", t.FriendlyName())
	return &node{line: line}
}

func (r *hclReader) diagnostics(diags hcl.Diagnostics, path string) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		line := 0
		if d.Subject != nil {
			line = d.Subject.Start.Line
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + strings.TrimSuffix(d.Detail, ".")
		}
		r.errs.add(line, path, "%s", msg)
	}
}
