package inproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// call decodes args (a JSON object) into the tool's parameters, calls it and
// turns what it returns, or its panic, into a result.
func (t *tool) call(ctx context.Context, req *sdk.CallToolRequest, args map[string]json.RawMessage) (res *sdk.CallToolResult) {
	// A panic in the method, or in a type's UnmarshalJSON or MarshalJSON.
	defer func() {
		if r := recover(); r != nil {
			res = errorResult(sdk.CodeInternal, fmt.Sprintf("panic: %v", r))
		}
	}()
	var in []reflect.Value
	if !t.raw {
		var msg string
		if in, msg = t.decode(args); msg != "" {
			return errorResult(sdk.CodeInvalidArgument, msg)
		}
	}
	if t.withReq {
		in = append([]reflect.Value{reflect.ValueOf(req)}, in...)
	}
	if t.withCtx {
		in = append([]reflect.Value{reflect.ValueOf(WithRequest(ctx, req))}, in...)
	}
	var out []reflect.Value
	if t.variadic {
		out = t.fn.CallSlice(in)
	} else {
		out = t.fn.Call(in)
	}

	if t.errorOut {
		if err, _ := out[len(out)-1].Interface().(error); err != nil {
			return fromError(err)
		}
	}
	if !t.valueOut {
		return &sdk.CallToolResult{Content: json.RawMessage("null")}
	}
	if r, ok := out[0].Interface().(*sdk.CallToolResult); ok && r != nil {
		return r // the method built the result itself (an sdk.ToolHandler)
	}
	content, err := encode(out[0].Interface())
	if err != nil {
		return errorResult(sdk.CodeInternal, fmt.Sprintf("encoding result: %v", err))
	}
	return &sdk.CallToolResult{Content: content}
}

// decode turns the named arguments into the values to call fn with (after
// the context and request). When an argument does not fit, it returns a
// message for the model instead.
func (t *tool) decode(args map[string]json.RawMessage) ([]reflect.Value, string) {
	var unknown, missing []string
	for name := range args {
		if !slices.ContainsFunc(t.params, func(p param) bool { return p.name == name }) {
			unknown = append(unknown, name)
		}
	}
	for _, p := range t.params {
		if _, ok := args[p.name]; !ok && p.required {
			missing = append(missing, p.name)
		}
	}
	if len(unknown) > 0 || len(missing) > 0 {
		return nil, t.argumentsMessage(unknown, missing)
	}

	var obj reflect.Value // *t.obj
	if t.obj != nil {
		obj = reflect.New(t.obj)
	}
	in := make([]reflect.Value, 0, len(t.params))
	for _, p := range t.params {
		var dst reflect.Value // addressable, of type p.typ
		if t.obj != nil {
			var err error
			if dst, err = fieldByIndex(obj.Elem(), p.index); err != nil {
				return nil, fmt.Sprintf("argument %q: %v", p.name, err)
			}
		} else {
			dst = reflect.New(p.typ).Elem()
			in = append(in, dst)
		}
		raw, ok := args[p.name]
		if !ok {
			continue
		}
		if msg := decodeArg(p.name, raw, dst); msg != "" {
			return nil, msg
		}
	}
	if t.obj != nil {
		if t.objPtr {
			in = append(in, obj)
		} else {
			in = append(in, obj.Elem())
		}
	}
	return in, ""
}

// argumentsMessage says which arguments are unknown and which are missing.
func (t *tool) argumentsMessage(unknown, missing []string) string {
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
		if len(t.params) == 0 {
			msg += " (takes no arguments)"
		} else {
			msg += fmt.Sprintf(" (parameters: %s)", strings.Join(t.paramNames(), ", "))
		}
	}
	return msg
}

// decodeArg decodes the JSON value raw of argument name into dst, then
// checks it (see check). It returns "" or what is wrong, for the model.
func decodeArg(name string, raw json.RawMessage, dst reflect.Value) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			msg := fmt.Sprintf("expected %s, got %s", jsonType(te.Type), gotValue(te.Value))
			if te.Field != "" {
				return fmt.Sprintf("argument %q: field %q: %s", name, te.Field, msg)
			}
			return fmt.Sprintf("argument %q: %s", name, msg)
		}
		return fmt.Sprintf("argument %q: %s", name, strings.TrimPrefix(err.Error(), "json: "))
	}
	if msg := check(raw, dst.Type(), ""); msg != "" {
		return fmt.Sprintf("argument %q: %s", name, msg)
	}
	return ""
}

// check finds what encoding/json lets pass but the input schema does not:
// a required field left out of an object, at any depth, and null for a type
// that has no nil (a struct, a number, a string). raw has been decoded into
// t already. It returns "" or what is wrong, naming the field by its path
// from the argument ("points[1].y", "stops[\"home\"].x").
func check(raw json.RawMessage, t reflect.Type, path string) string {
	if bytes.Equal(raw, []byte("null")) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
			return ""
		}
		return inField(path, fmt.Sprintf("expected %s, got null", jsonType(t)))
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaque(t) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, f := range fieldsOf(t) {
			p := f.name
			if path != "" {
				p = path + "." + f.name
			}
			v, ok := m[f.name]
			if !ok {
				if f.required {
					return fmt.Sprintf("missing required field %q", p)
				}
				continue
			}
			if msg := check(v, f.typ, p); msg != "" {
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
		for i, v := range a {
			if msg := check(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
	case reflect.Map:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if msg := check(m[k], t.Elem(), fmt.Sprintf("%s[%q]", path, k)); msg != "" {
				return msg
			}
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

// encode marshals v as JSON, without escaping HTML.
func encode(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// fromError is the result for an error returned by a tool: a *sdk.ToolError
// in its chain keeps its code; a cancelled or expired context becomes
// CodeCancelled or CodeTimeout; anything else is CodeInternal.
func fromError(err error) *sdk.CallToolResult {
	code := sdk.CodeInternal
	var te *sdk.ToolError
	switch {
	case errors.As(err, &te) && te.Code != "":
		code = te.Code
	case errors.Is(err, context.Canceled):
		code = sdk.CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		code = sdk.CodeTimeout
	}
	return errorResult(code, err.Error())
}

func errorResult(code sdk.ErrorCode, msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{
		Content: json.RawMessage("null"),
		IsError: true,
		Error:   &sdk.ToolError{Code: code, Message: msg},
	}
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
