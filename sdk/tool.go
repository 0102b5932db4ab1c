package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool declares a tool of a bridge.
type Tool struct {
	// Name is the tool's dotted path within the bridge: "greet", or
	// "files.read" for a tool in the nested namespace "files".
	Name string
	// Description is the tool's doc string, shown by help() in Python.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema whose
	// properties are the parameters. The generic AddTool derives it from the
	// handler's input type when it is nil.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the result. The generic AddTool
	// derives it from the handler's output type when it is nil.
	OutputSchema json.RawMessage
	// Params lists the parameter names in order, for positional arguments
	// from Python. When nil it is the order of InputSchema's properties: the
	// field order of the input struct for the generic AddTool.
	Params []string
}

// ToolHandler runs a tool whose arguments it decodes itself (see
// (*Bridge).AddTool). An error return becomes a failed result, as for
// ToolHandlerFor.
type ToolHandler func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)

// ToolHandlerFor runs a tool with typed arguments. In is decoded from the
// call's JSON arguments and validated against its schema before the handler
// runs; Out is encoded as the result's JSON.
//
// Inside the handler, ctx is cancelled when the call is cancelled,
// req.Log and req.Progress report to the caller, and req.Messages delivers
// the messages sent into the call. An error return fails the call: a
// *ToolError (see Errorf) keeps its code, context.Canceled becomes
// CodeCancelled, context.DeadlineExceeded CodeTimeout, and any other error
// CodeInternal.
type ToolHandlerFor[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (Out, error)

// AddTool adds a tool with typed arguments and result to b. The input schema
// is derived from In, which must be a struct (or a map with string keys):
// its fields are the parameters, in field order, named by their `json` tags;
// a `jsonschema:"..."` tag is the parameter's description; fields without
// omitempty or omitzero are required. The output schema is derived from Out.
// t.InputSchema and t.OutputSchema, when set, replace the derived schemas.
//
// AddTool panics if t.Name is not a valid dotted path, collides with another
// tool or namespace, or if a schema cannot be derived from In or Out: these
// are programming errors, found the first time the bridge runs.
func AddTool[In, Out any](b *Bridge, t *Tool, h ToolHandlerFor[In, Out]) {
	rt, err := newTypedTool(t, h)
	if err != nil {
		panic(fmt.Sprintf("sdk: AddTool %q: %v", t.Name, err))
	}
	b.add(rt)
}

func newTypedTool[In, Out any](t *Tool, h ToolHandlerFor[In, Out]) (*registeredTool, error) {
	in, err := inputSchema[In](t.InputSchema)
	if err != nil {
		return nil, err
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving input schema: %w", err)
	}
	tt := *t
	if tt.InputSchema == nil {
		if tt.InputSchema, err = json.Marshal(in); err != nil {
			return nil, fmt.Errorf("encoding input schema: %w", err)
		}
	}
	if tt.OutputSchema == nil {
		out, err := jsonschema.For[Out](schemaOptions())
		if err != nil {
			return nil, fmt.Errorf("deriving output schema: %w", err)
		}
		if tt.OutputSchema, err = json.Marshal(out); err != nil {
			return nil, fmt.Errorf("encoding output schema: %w", err)
		}
	}
	info, err := tt.info()
	if err != nil {
		return nil, err
	}
	args := &arguments{schema: in, resolved: resolved, strict: isFalseSchema(in.AdditionalProperties)}
	handler := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		var v In
		if err := args.decode(req.Arguments, &v); err != nil {
			return nil, err
		}
		out, err := h(ctx, req, v)
		if err != nil {
			return nil, err
		}
		content, err := json.Marshal(out)
		if err != nil {
			return nil, Errorf(CodeInternal, "encoding the result of tool %q: %v", req.Name, err)
		}
		return &CallToolResult{Content: content}, nil
	}
	return &registeredTool{info: info, handler: handler}, nil
}

// inputSchema derives the schema of In, or parses override when set.
func inputSchema[In any](override json.RawMessage) (*jsonschema.Schema, error) {
	if override != nil {
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(override, s); err != nil {
			return nil, fmt.Errorf("parsing InputSchema: %w", err)
		}
		return s, nil
	}
	s, err := jsonschema.For[In](schemaOptions())
	if err != nil {
		return nil, fmt.Errorf("deriving input schema: %w", err)
	}
	if s.Type != "object" && !(len(s.Types) == 2 && s.Types[1] == "object") {
		var in In
		return nil, fmt.Errorf("input type %T must be a struct or a map with string keys", in)
	}
	return s, nil
}

// schemaOptions corrects jsonschema-go for types that encoding/json treats
// specially: json.RawMessage is any JSON value, and []byte is a base64
// string (not an array of integers).
func schemaOptions() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
		reflect.TypeFor[[]byte]():          {Types: []string{"null", "string"}, ContentEncoding: "base64"},
	}}
}

func isFalseSchema(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// info checks t and fills in what is derived from it.
func (t *Tool) info() (ToolInfo, error) {
	if err := checkPath(t.Name); err != nil {
		return ToolInfo{}, err
	}
	in := t.InputSchema
	if in == nil {
		in = json.RawMessage(`{"type":"object"}`)
	}
	props, err := propertyOrder(in)
	if err != nil {
		return ToolInfo{}, fmt.Errorf("InputSchema: %w", err)
	}
	params := t.Params
	if params == nil {
		params = props
	}
	return ToolInfo{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  in,
		OutputSchema: t.OutputSchema,
		Params:       params,
	}, nil
}

// propertyOrder returns the keys of schema's "properties" in document order.
func propertyOrder(schema json.RawMessage) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil || top == nil {
		return nil, errors.New("not a JSON object")
	}
	raw, ok := top["properties"]
	if !ok {
		return []string{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New(`"properties" is not an object`)
	}
	names := []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		names = append(names, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// checkPath checks a dotted path of tool or namespace names.
func checkPath(path string) error {
	if path == "" {
		return errors.New("empty name")
	}
	for seg := range strings.SplitSeq(path, ".") {
		if seg == "" {
			return fmt.Errorf("name %q has an empty segment", path)
		}
		if i := strings.IndexFunc(seg, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
			return fmt.Errorf("name %q contains a space or control character", path)
		}
	}
	return nil
}

// arguments decodes and validates the arguments of a typed tool.
type arguments struct {
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
	strict   bool // unknown arguments are refused
}

var emptyObject = json.RawMessage(`{}`)

// decode fills v from the JSON object raw. Its errors are *ToolError with
// CodeInvalidArgument, naming the argument that does not fit.
func (a *arguments) decode(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = emptyObject
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return Errorf(CodeInvalidArgument, "arguments are not valid JSON: %v", err)
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return Errorf(CodeInvalidArgument, "arguments must be a JSON object, not %s", jsonKind(generic))
	}
	for _, name := range a.schema.Required {
		if _, ok := obj[name]; !ok {
			return Errorf(CodeInvalidArgument, "missing required argument %q", name)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if a.strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return decodeError(err, func() string { return a.culprit(obj, v) })
	}
	if err := a.resolved.Validate(generic); err != nil {
		return schemaError(err)
	}
	return nil
}

// culprit finds the argument that does not decode into v's type, by
// decoding each argument alone; "" if none does alone.
func (a *arguments) culprit(obj map[string]any, v any) string {
	names := slices.Sorted(maps.Keys(obj))
	for _, name := range names {
		one, err := json.Marshal(map[string]any{name: obj[name]})
		if err != nil {
			continue
		}
		if json.Unmarshal(one, reflect.New(reflect.TypeOf(v).Elem()).Interface()) != nil {
			return name
		}
	}
	return ""
}

// decodeError turns an encoding/json error into a message naming the field;
// culprit finds the field when the error does not say.
func decodeError(err error, culprit func() string) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return Errorf(CodeInvalidArgument, "arguments: got %s, want %s", typeErr.Value, goKind(typeErr.Type))
		}
		return Errorf(CodeInvalidArgument, "argument %q: got %s, want %s", typeErr.Field, typeErr.Value, goKind(typeErr.Type))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return Errorf(CodeInvalidArgument, "unknown argument %s", name)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name := culprit(); name != "" {
		return Errorf(CodeInvalidArgument, "argument %q: %s", name, msg)
	}
	return Errorf(CodeInvalidArgument, "arguments: %s", msg)
}

// schemaError turns a jsonschema-go validation error, a chain of
// "validating /properties/a/properties/b: ..." wrappers, into a message that
// names the argument ("opts.depth") and the innermost cause.
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
		msg = fmt.Sprintf("got %s, want %s", m[1], strings.ReplaceAll(m[2], `"`, ""))
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
	if len(arg) == 0 {
		return Errorf(CodeInvalidArgument, "arguments do not match the tool's schema: %s", msg)
	}
	return Errorf(CodeInvalidArgument, "argument %q: %s", strings.Join(arg, "."), msg)
}

var typeMismatch = regexp.MustCompile(`^type: .* has type "(\w+)", want (.*)$`)

// goKind names the JSON type that a Go type decodes from.
func goKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
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

var nullJSON = json.RawMessage("null")

// ErrorResult returns the failed result for err: a *ToolError (anywhere in
// err's chain) keeps its code, context.Canceled becomes CodeCancelled,
// context.DeadlineExceeded CodeTimeout, and anything else CodeInternal. The
// message is err's.
func ErrorResult(err error) *CallToolResult {
	te := &ToolError{Code: CodeInternal, Message: err.Error()}
	var typed *ToolError
	switch {
	case errors.As(err, &typed):
		te.Code = typed.Code
	case errors.Is(err, context.Canceled):
		te.Code = CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		te.Code = CodeTimeout
	}
	return &CallToolResult{Content: nullJSON, IsError: true, Error: te}
}
