package sdk

import (
	"bytes"
	"cmp"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// A signature is how a tool's JSON arguments become Go values, and its
// input schema: the one set of rules for every tool, in a plugin or in the
// host's process.
//
// The parameters are the fields of a struct (a parameter object), or the
// plain parameters of a function. Their rules:
//   - a parameter is required unless it is a pointer, is tagged omitempty or
//     omitzero, has a default, or is a variadic function's last;
//   - `jsonschema:"..."` is its description, `default:"..."` its default
//     (JSON, or the text itself for a string), applied when the argument
//     is left out, at any depth of a parameter object;
//   - []byte is a base64 string, json.RawMessage any JSON value;
//   - an argument or nested field that is not a parameter is refused, as is
//     null for a type that has no nil (a number, a string, a struct).
type signature struct {
	schema json.RawMessage // the input schema

	// Exactly one of these says how the arguments decode.
	params   []field       // plain parameters, or the fields of obj
	obj      reflect.Type  // a struct, or *struct, that the function takes
	mapIn    bool          // the arguments decode whole into a map
	explicit *explicitArgs // an author's InputSchema: validated, then decoded as is

	// For functions (AddFunc).
	fn           reflect.Value
	withCtx      bool // the first parameter is a context.Context
	withReq      bool // the next is a *CallToolRequest
	variadic     bool
	raw          bool // the shape of ToolHandler: arguments are not decoded
	valueOut     bool // returns a value (T or (T, error))
	errorOut     bool // returns an error ((error) or (T, error))
	outputSchema json.RawMessage
}

var (
	ctxType             = reflect.TypeFor[context.Context]()
	reqType             = reflect.TypeFor[*CallToolRequest]()
	resultType          = reflect.TypeFor[*CallToolResult]()
	errorType           = reflect.TypeFor[error]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// objectSignature makes the fields of struct type t (or *struct) the
// parameters.
func objectSignature(t reflect.Type) (*signature, error) {
	sig := &signature{}
	return sig.withSchema(sig.objectParams(t))
}

// mapSignature decodes the arguments whole into a map type t.
func mapSignature(t reflect.Type) (*signature, error) {
	s, err := jsonschema.ForType(t, schemaOptions())
	if err != nil {
		return nil, fmt.Errorf("deriving input schema: %w", err)
	}
	s.Type, s.Types = "object", nil
	return (&signature{mapIn: true}).withSchema(s, nil)
}

// explicitSignature validates the arguments against an author's schema.
func explicitSignature(schema json.RawMessage) (*signature, error) {
	s := new(jsonschema.Schema)
	if err := json.Unmarshal(schema, s); err != nil {
		return nil, fmt.Errorf("parsing InputSchema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving InputSchema: %w", err)
	}
	return &signature{schema: schema, explicit: &explicitArgs{schema: s, resolved: resolved, strict: isFalseSchema(s.AdditionalProperties)}}, nil
}

// funcSignature is the signature of a function fn; names, when not nil,
// names its parameters after the context and request.
func funcSignature(fn reflect.Value, names []string) (*signature, error) {
	ft := fn.Type()
	sig := &signature{fn: fn, variadic: ft.IsVariadic()}
	in := 0
	if in < ft.NumIn() && ft.In(in) == ctxType {
		sig.withCtx = true
		in++
	}
	if in < ft.NumIn() && ft.In(in) == reqType {
		sig.withReq = true
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
		sig.errorOut = ft.Out(0) == errorType
		sig.valueOut = !sig.errorOut
	case 2:
		if ft.Out(0) == errorType || ft.Out(1) != errorType {
			return nil, errors.New("two results must be a value and an error")
		}
		sig.valueOut, sig.errorOut = true, true
	default:
		return nil, fmt.Errorf("%d results: want at most a value and an error", ft.NumOut())
	}
	if sig.valueOut && ft.Out(0) != resultType {
		// A result type without a schema (a map with int keys) may still
		// encode: keep the tool, without an output schema.
		if s, err := jsonschema.ForType(ft.Out(0), schemaOptions()); err == nil {
			if sig.outputSchema, err = json.Marshal(s); err != nil {
				return nil, fmt.Errorf("encoding output schema: %w", err)
			}
		}
	}

	var (
		input *jsonschema.Schema
		err   error
	)
	if sig.raw = len(types) == 0 && sig.valueOut && ft.Out(0) == resultType && sig.withReq; sig.raw {
		// The shape of ToolHandler: it reads req.Arguments itself.
		input = &jsonschema.Schema{Type: "object"}
		sig.variadic = false
	} else if names == nil && len(types) == 1 && !sig.variadic && isObject(types[0]) {
		input, err = sig.objectParams(types[0])
	} else {
		input, err = sig.plainParams(types, names)
	}
	return sig.withSchema(input, err)
}

// withSchema returns sig with s as its input schema, or err when deriving s
// failed.
func (sig *signature) withSchema(s *jsonschema.Schema, err error) (*signature, error) {
	if err != nil {
		return nil, err
	}
	if s.Properties == nil && s.Type == "object" {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if sig.schema, err = json.Marshal(s); err != nil {
		return nil, fmt.Errorf("encoding input schema: %w", err)
	}
	return sig, nil
}

// objectParams makes the exported fields of struct type pt (or *struct) the
// parameters.
func (sig *signature) objectParams(pt reflect.Type) (*jsonschema.Schema, error) {
	st := pt
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	s, err := jsonschema.ForType(st, schemaOptions())
	if err != nil {
		return nil, fmt.Errorf("parameter %s: %w", st, err)
	}
	fs, err := fieldsOf(st)
	if err != nil {
		return nil, err
	}
	if err := fixSchema(s, st); err != nil {
		return nil, err
	}
	sig.obj = pt
	sig.params = fs
	return s, nil
}

// plainParams makes each of types a parameter, named by names or arg0, arg1…
func (sig *signature) plainParams(types []reflect.Type, names []string) (*jsonschema.Schema, error) {
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
		ps, err := jsonschema.ForType(pt, schemaOptions())
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		if err := fixSchema(ps, pt); err != nil {
			return nil, fmt.Errorf("parameter %s: %w", name, err)
		}
		// A variadic parameter may be left out: it is then empty.
		required := !(sig.variadic && i == len(types)-1)
		s.Properties[name] = ps
		s.PropertyOrder = append(s.PropertyOrder, name)
		if required {
			s.Required = append(s.Required, name)
		}
		sig.params = append(sig.params, field{name: name, typ: pt, required: required})
	}
	return s, nil
}

// call runs a function tool (AddFunc): it decodes the arguments, calls fn
// and turns what it returns into a result.
func (sig *signature) call(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
	var in []reflect.Value
	if !sig.raw {
		var err error
		if in, err = sig.decodeArgs(req.Arguments); err != nil {
			return nil, err
		}
	}
	if sig.withReq {
		in = append([]reflect.Value{reflect.ValueOf(req)}, in...)
	}
	if sig.withCtx {
		in = append([]reflect.Value{reflect.ValueOf(WithRequest(ctx, req))}, in...)
	}
	var out []reflect.Value
	if sig.variadic {
		out = sig.fn.CallSlice(in)
	} else {
		out = sig.fn.Call(in)
	}
	if sig.errorOut {
		if err, _ := out[len(out)-1].Interface().(error); err != nil {
			return nil, err
		}
	}
	if !sig.valueOut {
		return nil, nil
	}
	return encodeResult(out[0].Interface())
}

// decodeArgs decodes the arguments into the values to call fn with (after
// the context and request).
func (sig *signature) decodeArgs(raw json.RawMessage) ([]reflect.Value, error) {
	if sig.obj != nil {
		obj := reflect.New(sig.obj).Elem()
		if err := sig.decodeInto(raw, obj); err != nil {
			return nil, err
		}
		return []reflect.Value{obj}, nil
	}
	args, err := sig.args(raw)
	if err != nil {
		return nil, err
	}
	in := make([]reflect.Value, len(sig.params))
	for i, p := range sig.params {
		in[i] = reflect.New(p.typ).Elem()
		if err := p.decode(args, in[i]); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// decodeInto decodes the arguments into dst: the struct of a parameter
// object, a map, or any value for an explicit schema.
func (sig *signature) decodeInto(raw json.RawMessage, dst reflect.Value) error {
	switch {
	case sig.explicit != nil:
		return sig.explicit.decode(raw, dst.Addr().Interface())
	case sig.mapIn:
		if args, err := parseObject(raw); err != nil || args == nil {
			return err // nil: no arguments, the map stays nil
		}
		if err := json.Unmarshal(raw, dst.Addr().Interface()); err != nil {
			return Errorf(CodeInvalidArgument, "arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil
	}
	if dst.Kind() == reflect.Pointer {
		dst.Set(reflect.New(dst.Type().Elem()))
		dst = dst.Elem()
	}
	args, err := sig.args(raw)
	if err != nil {
		return err
	}
	for _, p := range sig.params {
		f, err := fieldByIndex(dst, p.index)
		if err != nil {
			return Errorf(CodeInvalidArgument, "argument %q: %v", p.name, err)
		}
		if err := p.decode(args, f); err != nil {
			return err
		}
	}
	return nil
}

// args decodes the arguments of a call (see parseObject), refusing
// unknown arguments and missing required ones.
func (sig *signature) args(raw json.RawMessage) (map[string]json.RawMessage, error) {
	args, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	var unknown, missing []string
	for name := range args {
		if !slices.ContainsFunc(sig.params, func(p field) bool { return p.name == name }) {
			unknown = append(unknown, name)
		}
	}
	for _, p := range sig.params {
		if _, ok := args[p.name]; !ok && p.required {
			missing = append(missing, p.name)
		}
	}
	if len(unknown) == 0 && len(missing) == 0 {
		return args, nil
	}
	return nil, argumentsError(unknown, missing, fieldNames(sig.params))
}

// argumentsError says which arguments are unknown and which required ones
// are missing; with unknown ones, it lists params, the tool's parameters.
func argumentsError(unknown, missing, params []string) error {
	var parts []string
	if len(unknown) > 0 {
		slices.Sort(unknown)
		parts = append(parts, fmt.Sprintf("unknown %s %s", plural("argument", len(unknown)), quoteList(unknown)))
	}
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("missing required %s %s", plural("argument", len(missing)), quoteList(missing)))
	}
	msg := strings.Join(parts, "; ")
	if len(unknown) > 0 {
		if len(params) == 0 {
			msg += " (takes no arguments)"
		} else {
			msg += fmt.Sprintf(" (parameters: %s)", strings.Join(params, ", "))
		}
	}
	return Errorf(CodeInvalidArgument, "%s", msg)
}

// decode sets dst, of the parameter's type, from its argument in args or
// from its default.
func (p *field) decode(args map[string]json.RawMessage, dst reflect.Value) error {
	raw, ok := args[p.name]
	if !ok {
		if p.def != nil {
			return decodeValue(p.name, p.def, dst)
		}
		return nil
	}
	return decodeValue(p.name, raw, dst)
}

// decodeValue decodes the JSON value raw of argument name into dst, then
// checks it and applies the defaults of nested fields (see fill).
func decodeValue(name string, raw json.RawMessage, dst reflect.Value) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Errorf(CodeInvalidArgument, "argument %q: field %q: %s", name, te.Field, jsonMessage(err))
		}
		return Errorf(CodeInvalidArgument, "argument %q: %s", name, jsonMessage(err))
	}
	if msg := fill(raw, dst, ""); msg != "" {
		return Errorf(CodeInvalidArgument, "argument %q: %s", name, msg)
	}
	return nil
}

// fill finds what encoding/json lets pass but the input schema does not: a
// required field left out of an object, at any depth, and null for a type
// that has no nil (a struct, a number, a string); and it sets the fields
// left out that have a default. raw has been decoded into v already. It
// returns "" or what is wrong, naming the field by its path from the
// argument ("points[1].y", "stops[\"home\"].x").
func fill(raw json.RawMessage, v reflect.Value, path string) string {
	t := v.Type()
	if bytes.Equal(raw, []byte("null")) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
			return ""
		}
		return inField(path, fmt.Sprintf("expected %s, got null", jsonType(t)))
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	t = v.Type()
	if opaque(t) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, f := range cachedFields(t) {
			p := joinKey(path, f.name)
			fv, err := fieldByIndex(v, f.index)
			if err != nil {
				return inField(p, err.Error())
			}
			sub, ok := m[f.name]
			if !ok {
				if f.def != nil {
					_ = json.Unmarshal(f.def, fv.Addr().Interface()) // checked when the tool was added
				} else if f.required {
					return fmt.Sprintf("missing required field %q", p)
				}
				continue
			}
			if msg := fill(sub, fv, p); msg != "" {
				return msg
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return "" // []byte is a base64 string
		}
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return ""
		}
		for i := 0; i < len(a) && i < v.Len(); i++ {
			if msg := fill(a[i], v.Index(i), fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
	case reflect.Map:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			p := fmt.Sprintf("%s[%q]", path, k)
			// Map values are not addressable: fill a copy and store it back.
			key := reflect.ValueOf(k).Convert(t.Key())
			ev := v.MapIndex(key)
			if !ev.IsValid() {
				continue
			}
			cp := reflect.New(t.Elem()).Elem()
			cp.Set(ev)
			if msg := fill(m[k], cp, p); msg != "" {
				return msg
			}
			v.SetMapIndex(key, cp)
		}
	}
	return ""
}

// inField prefixes msg with the field at path, if any.
func inField(path, msg string) string {
	if path == "" {
		return msg
	}
	return fmt.Sprintf("field %q: %s", path, msg)
}

// parseObject decodes the arguments of a call, a JSON object (or nothing).
// Anything else is a malformed request.
func parseObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return nil, &malformedError{fmt.Sprintf("arguments are not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))}
		}
		return nil, &malformedError{fmt.Sprintf("arguments must be a JSON object, not %s", jsonKind(v))}
	}
	return args, nil
}

// field is one named parameter: a struct field as JSON sees it (of a
// parameter object, or of a configuration), or a plain parameter of a
// function.
type field struct {
	name     string
	typ      reflect.Type
	required bool
	index    []int           // field index in the struct; nil for a plain parameter
	def      json.RawMessage // default, or nil
}

// fieldNames lists the names of fs, in order.
func fieldNames(fs []field) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// fieldsOf lists the JSON fields of struct type t in the order, and with the
// names, that jsonschema.ForType gives its properties: exported fields and
// the fields promoted from embedded structs, named by their json tag, the
// last one winning when two share a name. A field is required unless it is
// a pointer, tagged omitempty or omitzero, or has a default. A default that
// does not decode into the field is an error.
func fieldsOf(t reflect.Type) ([]field, error) {
	var fs []field
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, omit, ok := jsonName(f)
		if !ok {
			continue
		}
		def, err := defaultOf(f)
		if err != nil {
			return nil, err
		}
		optional := omit || f.Type.Kind() == reflect.Pointer || def != nil
		fs = append(fs, field{name: name, typ: f.Type, required: !optional, index: f.Index, def: def})
	}
	var out []field
	for i, f := range fs {
		if !slices.ContainsFunc(fs[i+1:], func(g field) bool { return g.name == f.name }) {
			out = append(out, f) // the last of a name
		}
	}
	return out, nil
}

// fieldsCache holds fieldsOf of the types that calls decode.
var fieldsCache sync.Map // reflect.Type → []field

// cachedFields is fieldsOf, computed once per type (its error, if any, was
// reported when the tool was added).
func cachedFields(t reflect.Type) []field {
	if fs, ok := fieldsCache.Load(t); ok {
		return fs.([]field)
	}
	fs, _ := fieldsOf(t)
	fieldsCache.Store(t, fs)
	return fs
}

// defaultOf returns the JSON of field f's `default:"..."` tag: the text of
// a string field as a JSON string; for other fields the tag if it is JSON
// ("100", "true", "[1, 2]"), else the text as a JSON string (a Duration's
// "30s").
func defaultOf(f reflect.StructField) (json.RawMessage, error) {
	tag, ok := f.Tag.Lookup("default")
	if !ok {
		return nil, nil
	}
	base := f.Type
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	var def json.RawMessage
	if base.Kind() != reflect.String && json.Valid([]byte(tag)) {
		def = json.RawMessage(tag)
	} else {
		def, _ = json.Marshal(tag)
	}
	v := reflect.New(f.Type)
	if err := json.Unmarshal(def, v.Interface()); err != nil {
		return nil, fmt.Errorf("field %s: default %q: %v", f.Name, tag, strings.TrimPrefix(err.Error(), "json: "))
	}
	return def, nil
}

// jsonName returns the JSON name of f and whether it is tagged omitempty
// or omitzero; ok is false when f is tagged `json:"-"`.
func jsonName(f reflect.StructField) (name string, omit, ok bool) {
	n, opts, comma := strings.Cut(f.Tag.Get("json"), ",")
	if n == "-" && !comma {
		return "", false, false
	}
	for o := range strings.SplitSeq(opts, ",") {
		omit = omit || o == "omitempty" || o == "omitzero"
	}
	return cmp.Or(n, f.Name), omit, true
}

// fixSchema makes schema s of type t, derived by jsonschema.ForType,
// require exactly the fields that fieldsOf says are required, at every
// depth (ForType also requires pointer fields, but a pointer left out is
// simply nil), and gives fields their defaults.
func fixSchema(s *jsonschema.Schema, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || opaque(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		fs, err := fieldsOf(t)
		if err != nil {
			return err
		}
		s.Required = nil
		for _, f := range fs {
			if f.required {
				s.Required = append(s.Required, f.name)
			}
			if f.def != nil && s.Properties[f.name] != nil {
				s.Properties[f.name].Default = f.def
			}
			if err := fixSchema(s.Properties[f.name], f.typ); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		return fixSchema(s.Items, t.Elem())
	case reflect.Map:
		return fixSchema(s.AdditionalProperties, t.Elem())
	}
	return nil
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

// fieldByIndex is reflect.Value.FieldByIndex for a settable v that
// allocates the embedded struct pointers on the way.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, fmt.Errorf("cannot set embedded pointer to unexported struct %s", v.Type().Elem())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// jsonType names the JSON type that values of t decode from.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)"
		}
		return "array"
	case reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// gotValue rewrites the Value of a json.UnmarshalTypeError ("bool",
// "number 1.5") in JSON Schema's words.
func gotValue(v string) string {
	if v == "bool" {
		return "boolean"
	}
	return v
}

// jsonKind names the JSON type of a value decoded into any.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

func plural(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// quoteList renders names as "a", "b".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// explicitArgs decodes and validates the arguments of a tool whose input
// schema its author gave.
type explicitArgs struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	strict   bool // unknown arguments are refused
}

func isFalseSchema(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// decode fills v from the JSON object raw, after validating it against the
// schema. Its errors are *ToolError with CodeInvalidArgument, naming the
// argument that does not fit.
func (a *explicitArgs) decode(raw json.RawMessage, v any) error {
	args, err := parseObject(raw)
	if err != nil {
		return err
	}
	if args == nil {
		raw = json.RawMessage(`{}`)
	}
	var unknown []string
	for name := range args {
		if _, ok := a.schema.Properties[name]; !ok && a.strict {
			unknown = append(unknown, name)
		}
	}
	var missing []string
	for _, name := range a.schema.Required {
		if _, ok := args[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(unknown) > 0 || len(missing) > 0 {
		names := a.schema.PropertyOrder // the declared order, else sorted
		if len(names) == 0 {
			names = slices.Sorted(maps.Keys(a.schema.Properties))
		}
		return argumentsError(unknown, missing, names)
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return &malformedError{fmt.Sprintf("arguments are not valid JSON: %v", err)}
	}
	if err := a.resolved.Validate(generic); err != nil {
		return schemaError(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Errorf(CodeInvalidArgument, "argument %q: expected %s, got %s", te.Field, jsonType(te.Type), gotValue(te.Value))
		}
		return Errorf(CodeInvalidArgument, "arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// schemaError turns a jsonschema-go validation error, a chain of
// "validating /properties/a/properties/b: ..." wrappers, into a message that
// names the argument and the innermost cause, in the words of the Go rules:
// `argument "opts": field "depth": expected integer, got string`.
func schemaError(err error) error {
	msg, path := err.Error(), ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, cause, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		path, msg = loc, cause
	}
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("expected %s, got %s", strings.ReplaceAll(m[2], `"`, ""), m[1])
	}
	var arg []string
	for seg := range strings.SplitSeq(path, "/") {
		switch seg {
		case "", "root", "properties":
		case "items", "prefixItems":
			if len(arg) > 0 {
				arg[len(arg)-1] += "[]"
			}
		default:
			arg = append(arg, seg)
		}
	}
	switch len(arg) {
	case 0:
		return Errorf(CodeInvalidArgument, "arguments do not match the tool's schema: %s", msg)
	case 1:
		return Errorf(CodeInvalidArgument, "argument %q: %s", arg[0], msg)
	}
	return Errorf(CodeInvalidArgument, "argument %q: field %q: %s", arg[0], strings.Join(arg[1:], "."), msg)
}

var typeMismatch = regexp.MustCompile(`^type: .* has type "(\w+)", want (.*)$`)
