package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// SchemaID is the $id of the configuration's JSON Schema.
const SchemaID = "https://github.com/parselbox/parselbox/parselbox.schema.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of a configuration
// file in its YAML or JSON form, derived from the Go types (host.Config
// and the server block, mcpserver.Settings) so that it cannot drift from
// them: an editor that knows it completes and checks keys. docs gives the
// description of a field by "Type.Field" ("Config.Memory"), as the
// generator (schemagen) reads them from the Go doc comments; a field's
// `want` tag completes it. Unknown keys are errors, as in the loader; a
// bridge's config block is any object (the bridge checks it). The schema
// checks types, not rules (Validate does: ranges, names, formats).
func JSONSchema(docs map[string]string) ([]byte, error) {
	g := schemaGen{docs: docs}
	root := g.object(reflect.TypeFor[shape]())
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["title"] = "Parselbox configuration"
	root["description"] = "A Parselbox configuration file (YAML or JSON; HCL has the same keys, with blocks for the objects keyed by name). Generated from the Go types by go generate ./host/config."
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

type schemaGen struct{ docs map[string]string }

// object is the schema of a struct: its koanf-tagged fields (embedded
// ",squash" fields inlined), no others.
func (g schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	for name, f := range structFields(t) {
		s := g.value(f.Type, f.Tag.Get("file") == "object")
		desc := g.docs[f.owner.Name()+"."+f.Name]
		if want := f.Tag.Get("want"); want != "" {
			desc = strings.TrimSpace(desc + " Must be " + want + ".")
		}
		if desc != "" {
			s["description"] = desc
		}
		props[name] = s
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// value is the schema of a value of type t; anyObject: any JSON object.
func (g schemaGen) value(t reflect.Type, anyObject bool) map[string]any {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return map[string]any{"type": []string{"number", "string"}}
	case anyObject:
		return map[string]any{"type": "object"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.value(t.Elem(), false)}
	case reflect.Map:
		s := map[string]any{"type": "object"}
		if t.Elem().Kind() != reflect.Interface {
			s["additionalProperties"] = g.value(t.Elem(), false)
		}
		return s
	case reflect.Struct:
		return g.object(t)
	case reflect.Pointer:
		return g.value(t.Elem(), anyObject)
	}
	return map[string]any{} // any value (interface{})
}
