package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"path"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Bounds of a schema written out for help(): how deep, and how many
// schemas in all. A document whose schemas refer to each other a lot would
// otherwise make huge tool descriptions.
const (
	maxSchemaDepth = 8
	maxSchemaNodes = 200
)

// inline returns the JSON Schema of ref with every $ref replaced by what it
// points to, so that help(ns.tool) shows the whole shape. A schema that
// contains itself is cut where it recurs, and a large one at the depth at
// which it fits in maxSchemaNodes; a cut schema keeps its type and a
// description naming it.
func inline(ref *openapi3.SchemaRef) map[string]any {
	for depth := maxSchemaDepth; ; depth-- {
		in := &inliner{open: map[*openapi3.Schema]bool{}, left: maxSchemaNodes, maxDepth: depth}
		m := in.schema(ref, 0)
		if !in.exhausted || depth == 0 {
			return m
		}
	}
}

type inliner struct {
	open      map[*openapi3.Schema]bool // the schemas being written out
	left      int                       // how many more may be
	maxDepth  int
	exhausted bool // some were cut because left ran out
}

func (in *inliner) schema(ref *openapi3.SchemaRef, depth int) map[string]any {
	if ref == nil || ref.Value == nil {
		return map[string]any{}
	}
	s := ref.Value
	if s.Always != nil {
		if *s.Always {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	}
	recursive := in.open[s]
	if recursive || depth > in.maxDepth || in.left <= 0 {
		in.exhausted = in.exhausted || in.left <= 0
		name := "schema"
		if ref.Ref != "" {
			name = path.Base(ref.Ref)
		}
		m := map[string]any{"description": "(" + name + ", not written out)"}
		if recursive {
			m["description"] = "(" + name + ", as above)"
		}
		if s.Type != nil && !s.Type.IsEmpty() {
			m["type"] = typeValue(s.Type)
		}
		return m
	}
	in.left--
	in.open[s] = true
	defer delete(in.open, s)

	raw, err := json.Marshal(s)
	var m map[string]any
	if err != nil || json.Unmarshal(raw, &m) != nil {
		return map[string]any{}
	}
	maps.DeleteFunc(m, func(k string, _ any) bool { return strings.HasPrefix(k, "x-") })
	sub := func(r *openapi3.SchemaRef) map[string]any { return in.schema(r, depth+1) }
	for key, refs := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf, "prefixItems": s.PrefixItems} {
		if len(refs) > 0 {
			out := make([]any, len(refs))
			for i, r := range refs {
				out[i] = sub(r)
			}
			m[key] = out
		}
	}
	for key, r := range map[string]*openapi3.SchemaRef{"not": s.Not, "items": s.Items, "contains": s.Contains,
		"propertyNames": s.PropertyNames, "if": s.If, "then": s.Then, "else": s.Else, "contentSchema": s.ContentSchema} {
		if r != nil {
			m[key] = sub(r)
		}
	}
	for key, ss := range map[string]openapi3.Schemas{"properties": s.Properties, "patternProperties": s.PatternProperties,
		"dependentSchemas": s.DependentSchemas, "$defs": s.Defs} {
		if len(ss) > 0 {
			out := make(map[string]any, len(ss))
			for k, r := range ss {
				out[k] = sub(r)
			}
			m[key] = out
		}
	}
	if r := s.AdditionalProperties.Schema; r != nil {
		m["additionalProperties"] = sub(r)
	}
	return m
}

func typeValue(t *openapi3.Types) any {
	if t.IsSingle() {
		return t.Slice()[0]
	}
	return t.Slice()
}

// typeName is a schema's type in a word or two, for search results:
// "integer", "array of string", "object".
func typeName(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "any"
	}
	s := ref.Value
	var names []string
	if s.Type != nil {
		for _, t := range s.Type.Slice() {
			if t != "null" {
				names = append(names, t)
			}
		}
	}
	switch {
	case len(names) == 0 && len(s.Properties) > 0:
		return "object"
	case len(names) == 0:
		return "any"
	case len(names) == 1 && names[0] == "array" && s.Items != nil:
		return "array of " + typeName(s.Items)
	}
	return strings.Join(names, " or ")
}

// objectSchema writes an object schema whose properties keep their order,
// so that help() lists the parameters in the order they bind positionally;
// closed forbids other properties.
func objectSchema(names []string, props map[string]any, required []string, closed bool) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		v, _ := json.Marshal(props[name])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	if closed {
		b.WriteString(`,"additionalProperties":false`)
	}
	b.WriteByte('}')
	return b.Bytes()
}
