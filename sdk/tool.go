package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool declares a tool of a bridge.
type Tool struct {
	// Name is the tool's dotted path within the bridge: "greet", or
	// "files.read" for a tool in the nested namespace "files". The empty
	// name is the namespace itself: the tool is called as ns(...) in Python.
	Name string
	// Description is the tool's doc string, shown by help() in Python.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema whose
	// properties are the parameters. AddTool and AddFunc derive it from the
	// Go types when it is nil; given to AddTool, it replaces the derived one
	// and the arguments are validated against it.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the result. AddTool and AddFunc
	// derive it from the result's Go type when it is nil.
	OutputSchema json.RawMessage
	// Params lists the parameter names in order, for positional arguments
	// from Python. When nil it is the order of InputSchema's properties: the
	// field order of the input struct for AddTool. For AddFunc it names the
	// function's parameters (see AddFunc).
	Params []string
	// ReadOnly declares that the tool changes nothing outside itself (as an
	// MCP tool's readOnlyHint does). A host configured with
	// allow_read_only = true keeps only such tools.
	ReadOnly bool
}

// ToolHandler runs a tool whose arguments it decodes itself (see
// (*Bridge).AddTool). An error return becomes a failed result, as for
// ToolHandlerFor.
type ToolHandler func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)

// ToolHandlerFor runs a tool with typed arguments. In is decoded from the
// call's JSON arguments and checked against its schema before the handler
// runs; Out is encoded as the result's JSON.
//
// Inside the handler, ctx has the caller's deadline, if any, and is
// cancelled when the call is cancelled; req.Log and req.Progress report to
// the caller, and req.Messages delivers the messages sent into the call.
// An error return fails the call: a *ToolError (see Errorf) keeps its
// code, context.Canceled becomes CodeCancelled, context.DeadlineExceeded
// CodeTimeout, and any other error CodeInternal.
type ToolHandlerFor[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (Out, error)

// AddTool adds a tool with typed arguments and result to b. In must be a
// struct (or a map with string keys): its fields are the parameters, in
// field order, named by their `json` tags (see the package documentation
// for the rules: descriptions, required fields, defaults). The output
// schema is derived from Out. t.InputSchema and t.OutputSchema, when set,
// replace the derived schemas.
//
// AddTool panics if t.Name is not a valid dotted path, collides with another
// tool or namespace, or if a schema cannot be derived from In or Out: these
// are programming errors, found the first time the bridge runs.
func AddTool[In, Out any](b *Bridge, t *Tool, h ToolHandlerFor[In, Out]) {
	rt, err := newTypedTool(t, h)
	if err != nil {
		panic(fmt.Sprintf("sdk: AddTool %q: %v", t.Name, err))
	}
	if err := b.add(rt); err != nil {
		panic("sdk: " + err.Error())
	}
}

func newTypedTool[In, Out any](t *Tool, h ToolHandlerFor[In, Out]) (*registeredTool, error) {
	in := reflect.TypeFor[In]()
	var sig *signature
	var err error
	switch {
	case t.InputSchema != nil:
		sig, err = explicitSignature(t.InputSchema)
	case isObject(in):
		sig, err = objectSignature(in)
	case in.Kind() == reflect.Map && in.Key().Kind() == reflect.String:
		sig, err = mapSignature(in)
	default:
		return nil, fmt.Errorf("input type %s must be a struct or a map with string keys", in)
	}
	if err != nil {
		return nil, err
	}
	tt := *t
	if tt.InputSchema == nil {
		tt.InputSchema = sig.schema
	}
	if tt.OutputSchema == nil {
		out, err := jsonschema.ForType(reflect.TypeFor[Out](), schemaOptions())
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
	handler := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		var v In
		if err := sig.decodeInto(req.Arguments, reflect.ValueOf(&v).Elem()); err != nil {
			return nil, err
		}
		out, err := h(ctx, req, v)
		if err != nil {
			return nil, err
		}
		return encodeResult(out)
	}
	return &registeredTool{info: info, handler: handler}, nil
}

// AddFunc adds a Go function as a tool: its parameters, decoded from the
// call's JSON arguments, and its results are those of fn, found by
// reflection. It is how the host turns the methods of in-process Go values
// into tools; a bridge may use it for plain functions too:
//
//	b.AddFunc(&sdk.Tool{Name: "add", Params: []string{"a", "b"}}, func(a, b int) int { return a + b })
//
// fn's parameters are, in order: an optional context.Context (the call's,
// carrying req: see RequestFromContext); an optional *CallToolRequest; then
// either one struct or *struct, a parameter object whose fields are the
// parameters as for AddTool, or any number of plain parameters, named by
// t.Params (arg0, arg1, … when nil). Naming a lone struct makes it one
// parameter of that name. A variadic last parameter takes the remaining
// positional arguments from Python, and may be left out. fn returns
// nothing, a value, an error, or a value and an error; a func of the shape
// of ToolHandler reads req.Arguments itself. t.InputSchema must be nil: it
// is derived; t.OutputSchema is derived when nil, and left out when the
// result's type has none.
//
// AddFunc returns an error, saying what does not fit, when fn has none of
// these shapes or a parameter has no JSON Schema.
func (b *Bridge) AddFunc(t *Tool, fn any) error {
	if t.InputSchema != nil {
		return errors.New("AddFunc derives the input schema from fn: leave Tool.InputSchema nil")
	}
	f := reflect.ValueOf(fn)
	if f.Kind() != reflect.Func || f.IsNil() {
		return fmt.Errorf("%T is not a func", fn)
	}
	sig, err := funcSignature(f, t.Params)
	if err != nil {
		return err
	}
	tt := *t
	tt.InputSchema = sig.schema
	tt.Params = nil
	if tt.OutputSchema == nil {
		tt.OutputSchema = sig.outputSchema
	}
	info, err := tt.info()
	if err != nil {
		return err
	}
	info.Variadic = sig.variadic
	return b.add(&registeredTool{info: info, handler: sig.call})
}

// schemaOptions corrects jsonschema-go for types that encoding/json treats
// specially: json.RawMessage is any JSON value, []byte is a base64 string
// (not an array of integers), and Duration and Secret are what they decode
// from.
func schemaOptions() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
		reflect.TypeFor[[]byte]():          {Types: []string{"null", "string"}, ContentEncoding: "base64"},
		reflect.TypeFor[Duration]():        {Types: []string{"number", "string"}, Description: `seconds, or a duration such as "30s"`},
		reflect.TypeFor[Secret]():          {Type: "string"},
	}}
}

// info checks t and fills in what is derived from it.
func (t *Tool) info() (ToolInfo, error) {
	if t.Name != "" {
		if err := checkPath(t.Name); err != nil {
			return ToolInfo{}, err
		}
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
	if params == nil && len(props) > 0 {
		params = props
	}
	return ToolInfo{
		Name:         t.Name,
		Description:  t.Description,
		InputSchema:  in,
		OutputSchema: t.OutputSchema,
		Params:       params,
		ReadOnly:     t.ReadOnly,
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

// encodeResult is a handler's value as a result: JSON without HTML
// escaping, or the *CallToolResult itself when the handler built one.
func encodeResult(v any) (*CallToolResult, error) {
	if r, ok := v.(*CallToolResult); ok && r != nil {
		return r, nil
	}
	content, err := encodeJSON(v)
	if err != nil {
		return nil, Errorf(CodeInternal, "encoding result: %v", err)
	}
	return &CallToolResult{Content: content}, nil
}

// encodeJSON marshals v as JSON, without escaping HTML.
func encodeJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
