package inproc

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/parselbox/parselbox/sdk"
)

var (
	ctxType             = reflect.TypeFor[context.Context]()
	reqType             = reflect.TypeFor[*sdk.CallToolRequest]()
	resultType          = reflect.TypeFor[*sdk.CallToolResult]()
	errorType           = reflect.TypeFor[error]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// tool is one callable: a bound method, a func, or the Fn of a Func.
type tool struct {
	name        string // dotted path: "sub.get_weather"
	description string

	fn       reflect.Value
	withCtx  bool // first parameter is a context.Context
	withReq  bool // next parameter is a *sdk.CallToolRequest
	variadic bool
	raw      bool // an sdk.ToolHandler: arguments are not decoded
	valueOut bool // returns a value (T or (T, error))
	errorOut bool // returns an error ((error) or (T, error))

	// obj is the struct type whose fields are the parameters, when the
	// tool takes one; objPtr reports that it takes *obj.
	obj    reflect.Type
	objPtr bool
	params []param

	inputSchema  json.RawMessage
	outputSchema json.RawMessage
}

// param is one named parameter: a plain parameter of fn, or a field of obj.
type param struct {
	name     string
	typ      reflect.Type
	required bool
	index    []int // field index in obj
}

// newTool builds the tool that calls fn. names, when not nil, names fn's
// parameters after the context and request (see ParamNamer).
func newTool(fn reflect.Value, names []string) (*tool, error) {
	ft := fn.Type()
	t := &tool{fn: fn, variadic: ft.IsVariadic()}
	in := 0
	if in < ft.NumIn() && ft.In(in) == ctxType {
		t.withCtx = true
		in++
	}
	if in < ft.NumIn() && ft.In(in) == reqType {
		t.withReq = true
		in++
	}
	var types []reflect.Type
	for i := in; i < ft.NumIn(); i++ {
		switch ft.In(i) {
		case ctxType:
			return nil, errors.New("context.Context must be the first parameter")
		case reqType:
			return nil, errors.New("*sdk.CallToolRequest must be the first parameter or follow context.Context")
		}
		types = append(types, ft.In(i))
	}

	switch ft.NumOut() {
	case 0:
	case 1:
		t.errorOut = ft.Out(0) == errorType
		t.valueOut = !t.errorOut
	case 2:
		if ft.Out(0) == errorType || ft.Out(1) != errorType {
			return nil, errors.New("two results must be a value and an error")
		}
		t.valueOut, t.errorOut = true, true
	default:
		return nil, fmt.Errorf("%d results: want at most a value and an error", ft.NumOut())
	}
	if t.valueOut && ft.Out(0) != resultType {
		// A result type without a schema (a map with int keys) may still
		// encode: keep the tool, without an output schema.
		if s, err := jsonschema.ForType(ft.Out(0), nil); err == nil {
			if t.outputSchema, err = json.Marshal(s); err != nil {
				return nil, fmt.Errorf("encoding output schema: %w", err)
			}
		}
	}

	var (
		input *jsonschema.Schema
		err   error
	)
	if t.raw = len(types) == 0 && t.valueOut && ft.Out(0) == resultType && t.withReq; t.raw {
		// An sdk.ToolHandler reads req.Arguments itself.
		input = &jsonschema.Schema{Type: "object"}
	} else if names == nil && len(types) == 1 && !t.variadic && isObject(types[0]) {
		input, err = t.objectParams(types[0])
	} else {
		input, err = t.plainParams(types, names)
	}
	if err != nil {
		return nil, err
	}
	if input.Properties == nil {
		input.Properties = map[string]*jsonschema.Schema{}
	}
	if t.inputSchema, err = json.Marshal(input); err != nil {
		return nil, fmt.Errorf("encoding input schema: %w", err)
	}
	return t, nil
}

// objectParams makes the exported fields of struct type pt (or *struct) the
// parameters.
func (t *tool) objectParams(pt reflect.Type) (*jsonschema.Schema, error) {
	st := pt
	if st.Kind() == reflect.Pointer {
		st, t.objPtr = st.Elem(), true
	}
	s, err := jsonschema.ForType(st, nil)
	if err != nil {
		return nil, fmt.Errorf("parameter %s: %w", st, err)
	}
	fixRequired(s, st)
	t.obj = st
	for _, f := range fieldsOf(st) {
		t.params = append(t.params, param(f))
	}
	return s, nil
}

// plainParams makes each of types a parameter, named by names or arg0, arg1…
func (t *tool) plainParams(types []reflect.Type, names []string) (*jsonschema.Schema, error) {
	if names != nil && len(names) != len(types) {
		return nil, fmt.Errorf("%d parameter names for %d parameters", len(names), len(types))
	}
	s := &jsonschema.Schema{
		Type:                 "object",
		Properties:           make(map[string]*jsonschema.Schema, len(types)),
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	for i, pt := range types {
		name := fmt.Sprintf("arg%d", i)
		if names != nil {
			name = names[i]
			if name == "" {
				return nil, fmt.Errorf("parameter %d: empty name", i)
			}
			if _, dup := s.Properties[name]; dup {
				return nil, fmt.Errorf("parameter name %q used twice", name)
			}
		}
		ps, err := jsonschema.ForType(pt, nil)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		fixRequired(ps, pt)
		// A variadic parameter may be left out: it is then empty.
		required := !(t.variadic && i == len(types)-1)
		s.Properties[name] = ps
		s.PropertyOrder = append(s.PropertyOrder, name)
		if required {
			s.Required = append(s.Required, name)
		}
		t.params = append(t.params, param{name: name, typ: pt, required: required})
	}
	return s, nil
}

// paramNames lists the parameter names in order.
func (t *tool) paramNames() []string {
	names := make([]string, len(t.params))
	for i, p := range t.params {
		names[i] = p.name
	}
	return names
}

// isObject reports whether a lone parameter of type t is a parameter object:
// a struct, or a pointer to one, that does not decode itself from JSON
// (time.Time is a struct, but one value).
func isObject(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !opaque(t)
}

// opaque reports whether values of t decode themselves (json.Unmarshaler or
// encoding.TextUnmarshaler), so that their JSON shape is not their fields.
func opaque(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType)
}

// field is a struct field as JSON sees it.
type field struct {
	name     string
	typ      reflect.Type
	required bool
	index    []int
}

// fieldsOf lists the JSON fields of struct type t in the order, and with the
// names, that jsonschema.ForType gives its properties: exported fields and
// the fields promoted from embedded structs, named by their json tag, the
// last one winning when two share a name. A field is required unless it is a
// pointer or tagged omitempty or omitzero.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, opts, ok := jsonName(f)
		if !ok {
			continue
		}
		optional := opts["omitempty"] || opts["omitzero"] || f.Type.Kind() == reflect.Pointer
		fs = append(fs, field{name: name, typ: f.Type, required: !optional, index: f.Index})
	}
	seen := make(map[string]bool, len(fs))
	var out []field
	for _, f := range slices.Backward(fs) {
		if !seen[f.name] {
			seen[f.name] = true
			out = append(out, f)
		}
	}
	slices.Reverse(out)
	return out
}

// jsonName returns the JSON name and tag options of f; ok is false when f
// is tagged `json:"-"`.
func jsonName(f reflect.StructField) (name string, opts map[string]bool, ok bool) {
	name = f.Name
	tag, found := f.Tag.Lookup("json")
	if !found {
		return name, nil, true
	}
	n, rest, comma := strings.Cut(tag, ",")
	if n == "-" && !comma {
		return "", nil, false
	}
	if n != "" {
		name = n
	}
	if rest != "" {
		opts = make(map[string]bool)
		for o := range strings.SplitSeq(rest, ",") {
			opts[o] = true
		}
	}
	return name, opts, true
}

// fixRequired makes schema s of type t, derived by jsonschema.ForType,
// require exactly the fields that fieldsOf says are required, at every
// depth: ForType also requires pointer fields, but a pointer left out is
// simply nil.
func fixRequired(s *jsonschema.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || opaque(t) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		s.Required = nil
		for _, f := range fieldsOf(t) {
			if f.required {
				s.Required = append(s.Required, f.name)
			}
			fixRequired(s.Properties[f.name], f.typ)
		}
	case reflect.Slice, reflect.Array:
		fixRequired(s.Items, t.Elem())
	case reflect.Map:
		fixRequired(s.AdditionalProperties, t.Elem())
	}
}
