package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/parselbox/parselbox/sdk"
)

// toolInfo declares the tool that calls op: its description from the
// operation's summary and description, its parameters from the operation's
// parameters and request body, its output from the 2xx response.
func (op *operation) toolInfo() *sdk.Tool {
	var required []string
	props := map[string]any{}
	for _, p := range op.params {
		s := inline(p.Schema)
		if p.Schema == nil && p.Content != nil {
			for _, mt := range p.Content {
				s = inline(mt.Schema)
				break
			}
		}
		where := p.In + " parameter"
		if p.alias != "" {
			where += ", also accepted as " + p.alias
		}
		s["description"] = strings.TrimSpace(strings.TrimSpace(p.Description) + " (" + where + ")")
		if p.Deprecated {
			s["deprecated"] = true
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
	}
	if b := op.body; b != nil {
		s := inline(b.schema)
		s["description"] = fmt.Sprintf("%s (%s)", cmp.Or(b.description, "The request body"), b.mediaType)
		props[b.arg] = s
		if b.required {
			required = append(required, b.arg)
		}
	}
	data := inline(op.responseRef)
	data["description"] = "the body: parsed JSON, or text"
	output := objectSchema([]string{"ok", "status", "data", "headers"}, map[string]any{
		"ok":      map[string]any{"type": "boolean", "description": "whether the status is 2xx"},
		"status":  map[string]any{"type": "integer", "description": "the HTTP status code"},
		"data":    data,
		"headers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": "the response headers, by lower-case name"},
	}, nil, false)
	return &sdk.Tool{
		Name:         op.tool,
		Description:  op.doc(),
		InputSchema:  objectSchema(op.args, props, required, true),
		OutputSchema: output,
		Params:       slices.Clone(op.args),
	}
}

// doc is the tool's description: summary, description, then the method and
// path.
func (op *operation) doc() string {
	var parts []string
	if op.summary != "" {
		parts = append(parts, op.summary)
	}
	if op.description != "" && op.description != op.summary {
		parts = append(parts, op.description)
	}
	line := op.method + " " + op.path
	if op.deprecated {
		line += " (deprecated)"
	}
	parts = append(parts, line)
	return strings.Join(parts, "\n\n")
}

// lookup finds the parameter that an argument names (by its name or its
// Python alias); nil for the request body or an unknown argument.
func (op *operation) lookup(arg string) *param {
	for _, p := range op.params {
		if p.Name == arg {
			return p
		}
	}
	for _, p := range op.params {
		if p.alias == arg {
			return p
		}
	}
	return nil
}

// request builds the HTTP request for a call of op (with no credentials yet)
// and validates it against the document. Every argument that does not fit
// is named in the error, a ValueError in Python.
func (op *operation) request(ctx context.Context, c *client, raw json.RawMessage) (*http.Request, error) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, sdk.Errorf(sdk.CodeInvalidArgument, "%s: arguments must be a JSON object", op.tool)
		}
	}
	var problems []string
	values := map[*param]any{}
	var body json.RawMessage
	for _, name := range slices.Sorted(maps.Keys(args)) {
		v := args[name]
		if op.body != nil && name == op.body.arg {
			if !isNull(v) {
				body = v
			}
			continue
		}
		p := op.lookup(name)
		if p == nil {
			problems = append(problems, fmt.Sprintf("%s: unknown argument (the arguments are %s)", name, cmp.Or(strings.Join(op.args, ", "), "none")))
			continue
		}
		if _, dup := values[p]; dup {
			problems = append(problems, fmt.Sprintf("%s: given twice (as %s and %s)", p.Name, p.Name, p.alias))
			continue
		}
		var x any
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&x); err != nil {
			problems = append(problems, fmt.Sprintf("%s: not a JSON value", name))
			continue
		}
		if x != nil {
			values[p] = x
		}
	}
	if len(problems) > 0 {
		return nil, invalid(op, problems)
	}

	// Serialize the parameters as the document says (style, explode).
	urlPath := op.path
	pathParams := map[string]string{}
	query := url.Values{}
	header := http.Header{}
	var cookies []*http.Cookie
	for _, p := range op.params {
		v, ok := values[p]
		if !ok {
			continue
		}
		switch p.In {
		case openapi3.ParameterInPath:
			s := serializePath(p, v)
			pathParams[p.Name] = s
			urlPath = strings.ReplaceAll(urlPath, "{"+p.Name+"}", url.PathEscape(s))
		case openapi3.ParameterInQuery:
			serializeQuery(query, p, v)
		case openapi3.ParameterInHeader:
			header.Set(p.Name, serializeSimple(p, v))
		case openapi3.ParameterInCookie:
			cookies = append(cookies, &http.Cookie{Name: p.Name, Value: serializeSimple(p, v)})
		}
	}
	for name, vals := range header {
		if strings.ContainsAny(vals[0], "\r\n\x00") {
			return nil, invalid(op, []string{http.CanonicalHeaderKey(name) + ": a header value cannot hold a line break"})
		}
	}
	u, err := c.resolve(urlPath)
	if err != nil {
		return nil, err
	}
	u.RawQuery = query.Encode()

	var payload []byte
	var contentType string
	validateBody := true
	if op.body != nil && body != nil {
		if payload, contentType, err = encodeBody(op.body.mediaType, body); err != nil {
			return nil, invalid(op, []string{op.body.arg + ": " + err.Error()})
		}
		mt := baseMediaType(contentType)
		validateBody = isJSON(mt) || mt == "application/x-www-form-urlencoded" || strings.HasPrefix(mt, "text/plain")
	}
	r, err := newRequest(ctx, op.method, u, payload, contentType)
	if err != nil {
		return nil, err
	}
	maps.Copy(r.Header, header)
	for _, ck := range cookies {
		r.AddCookie(ck)
	}

	opts := &openapi3filter.Options{
		MultiError:          true,
		AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc, // the bridge adds the credentials after validation
		SkipSettingDefaults: true,                                  // send what the caller gave
		ExcludeRequestBody:  !validateBody,
	}
	opts.WithCustomSchemaErrorFunc(func(e *openapi3.SchemaError) string { return e.Reason })
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: pathParams, Route: op.route, Options: opts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		return nil, invalid(op, validationProblems(op, err))
	}
	return r, nil
}

func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func invalid(op *operation, problems []string) error {
	return sdk.Errorf(sdk.CodeInvalidArgument, "%s: invalid arguments: %s", op.tool, strings.Join(problems, "; "))
}

// encodeBody encodes the body argument as the media type says: JSON as is;
// a form from a dict; text from a string.
func encodeBody(mediaType string, v json.RawMessage) ([]byte, string, error) {
	mt := baseMediaType(mediaType)
	switch {
	case isJSON(mt):
		var b bytes.Buffer
		if err := json.Compact(&b, v); err != nil {
			return nil, "", errors.New("not valid JSON")
		}
		return b.Bytes(), mediaType, nil
	case mt == "application/x-www-form-urlencoded":
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return nil, "", errors.New("want a dict of form fields")
		}
		form := url.Values{}
		for k, x := range obj {
			vals, err := queryValues(x)
			if err != nil {
				return nil, "", fmt.Errorf("field %s: %w", k, err)
			}
			form[k] = vals
		}
		return []byte(form.Encode()), mediaType, nil
	case strings.Contains(mt, "multipart/"):
		return nil, "", fmt.Errorf("%s bodies are not supported", mt)
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil, "", fmt.Errorf("want a string (the body is %s)", mt)
	}
	return []byte(s), mediaType, nil
}

// validationProblems turns openapi3filter's errors into one line per
// argument.
func validationProblems(op *operation, err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		re, ok := err.(*openapi3filter.RequestError)
		if !ok {
			var me openapi3.MultiError
			if errors.As(err, &me) {
				for _, e := range me {
					walk(e)
				}
				return
			}
			if !errors.As(err, &re) {
				out = append(out, err.Error())
				return
			}
		}
		arg := "arguments"
		switch {
		case re.Parameter != nil:
			arg = re.Parameter.Name
		case re.RequestBody != nil && op.body != nil:
			arg = op.body.arg
		}
		out = append(out, problems(arg, re)...)
	}
	walk(err)
	sort.Strings(out)
	return slices.Compact(out)
}

// problems lists what is wrong with arg in one RequestError: each schema
// error with where in the value it is, or the error's own reason.
func problems(arg string, re *openapi3filter.RequestError) []string {
	var out []string
	var schema func(error) bool
	schema = func(err error) bool {
		var me openapi3.MultiError
		if errors.As(err, &me) {
			found := false
			for _, e := range me {
				found = schema(e) || found
			}
			return found
		}
		var se *openapi3.SchemaError
		if errors.As(err, &se) {
			at := arg
			if p := strings.Join(se.JSONPointer(), "."); p != "" {
				at += "." + p
			}
			out = append(out, at+": "+schemaReason(se))
			return true
		}
		return false
	}
	if re.Err != nil && schema(re.Err) {
		return out
	}
	text := re.Reason
	var pe *openapi3filter.ParseError
	switch {
	case errors.Is(re.Err, openapi3filter.ErrInvalidRequired):
		text = "required, but missing"
	case errors.Is(re.Err, openapi3filter.ErrInvalidEmptyValue):
		text = "must not be empty"
	case errors.As(re.Err, &pe):
		text = parseReason(pe)
	case re.Err != nil:
		text = re.Err.Error()
	}
	return []string{arg + ": " + text}
}

func parseReason(pe *openapi3filter.ParseError) string {
	for pe.Cause != nil {
		inner, ok := pe.Cause.(*openapi3filter.ParseError)
		if !ok {
			break
		}
		pe = inner
	}
	switch {
	case pe.Value != nil && strings.HasPrefix(pe.Reason, "an invalid "):
		return fmt.Sprintf("%q is %s", fmt.Sprint(pe.Value), pe.Reason)
	case pe.Value != nil && pe.Reason != "":
		return fmt.Sprintf("%q: %s", fmt.Sprint(pe.Value), pe.Reason)
	case pe.Reason != "":
		return pe.Reason
	}
	return pe.Error()
}

// The JSON Schema 2020-12 validator (OpenAPI 3.1) starts its reasons with
// where the value is, which the message says already, and words them
// "keyword: got X, want Y".
var (
	locationPrefix = regexp.MustCompile(`^(error at "[^"]*": )?(at '[^']*': )?`)
	gotWant        = regexp.MustCompile(`^(\w+): got (.*), want (.*)$`)
)

func schemaReason(se *openapi3.SchemaError) string {
	msg := locationPrefix.ReplaceAllString(se.Reason, "")
	if m := gotWant.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s is %s, got %s", m[1], m[3], m[2])
	}
	return msg
}
