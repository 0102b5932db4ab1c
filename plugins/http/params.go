package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/parselbox/parselbox/sdk"
)

// Parameters are serialized as OpenAPI's style and explode say
// (https://spec.openapis.org/oas/v3.1.0#style-values), so that the request
// validator reads back what the caller gave.

// scalar is a JSON scalar as it goes in a URL or header: strings as they
// are, numbers as written, true/false; anything else as JSON.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func styleOf(p *param) *openapi3.SerializationMethod {
	sm, err := p.SerializationMethod()
	if err != nil || sm == nil {
		return &openapi3.SerializationMethod{Style: openapi3.SerializationSimple}
	}
	return sm
}

// content reports a parameter given as a media type (content: instead of
// schema:); its value is JSON.
func content(p *param, v any) (string, bool) {
	if p.Schema != nil || p.Content == nil {
		return "", false
	}
	b, _ := json.Marshal(v)
	return string(b), true
}

// joined is the value of an array or object in one string: items (or key,
// value pairs, or key=value with explode) separated by sep.
func joined(v any, sep string, explode bool) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = scalar(x)
		}
		return strings.Join(parts, sep)
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if explode {
				parts = append(parts, k+"="+scalar(v[k]))
			} else {
				parts = append(parts, k, scalar(v[k]))
			}
		}
		return strings.Join(parts, sep)
	}
	return scalar(v)
}

// serializePath is a path parameter's value, before escaping.
func serializePath(p *param, v any) string {
	if s, ok := content(p, v); ok {
		return s
	}
	sm := styleOf(p)
	switch sm.Style {
	case openapi3.SerializationLabel:
		if sm.Explode {
			return "." + joined(v, ".", true)
		}
		return "." + joined(v, ",", false)
	case openapi3.SerializationMatrix:
		switch v := v.(type) {
		case []any:
			if sm.Explode {
				var b strings.Builder
				for _, x := range v {
					b.WriteString(";" + p.Name + "=" + scalar(x))
				}
				return b.String()
			}
		case map[string]any:
			if sm.Explode {
				return ";" + joined(v, ";", true)
			}
		}
		return ";" + p.Name + "=" + joined(v, ",", false)
	}
	return joined(v, ",", sm.Explode)
}

// serializeSimple is a header or cookie parameter's value.
func serializeSimple(p *param, v any) string {
	if s, ok := content(p, v); ok {
		return s
	}
	return joined(v, ",", styleOf(p).Explode)
}

// serializeQuery adds a query parameter to q.
func serializeQuery(q url.Values, p *param, v any) {
	if s, ok := content(p, v); ok {
		q.Add(p.Name, s)
		return
	}
	sm := styleOf(p)
	switch sm.Style {
	case openapi3.SerializationDeepObject:
		if obj, ok := v.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				q.Add(p.Name+"["+k+"]", scalar(obj[k]))
			}
			return
		}
	case openapi3.SerializationSpaceDelimited, openapi3.SerializationPipeDelimited:
		if !sm.Explode {
			sep := map[string]string{openapi3.SerializationSpaceDelimited: " ", openapi3.SerializationPipeDelimited: "|"}[sm.Style]
			q.Add(p.Name, joined(v, sep, false))
			return
		}
	}
	switch v := v.(type) {
	case []any:
		if sm.Explode {
			for _, x := range v {
				q.Add(p.Name, scalar(x))
			}
			return
		}
	case map[string]any:
		if sm.Explode {
			for _, k := range slices.Sorted(maps.Keys(v)) {
				q.Add(k, scalar(v[k]))
			}
			return
		}
	}
	q.Add(p.Name, joined(v, ",", false))
}

// queryValues are the values of one query parameter given to a raw verb
// (params={"a": 1, "tags": ["x", "y"]}): a scalar, or a list of scalars
// that repeats the parameter.
func queryValues(raw json.RawMessage) ([]string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a JSON value")
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			switch x.(type) {
			case []any, map[string]any:
				return nil, fmt.Errorf("a list may hold only strings, numbers and booleans")
			}
			out = append(out, scalar(x))
		}
		return out, nil
	case map[string]any:
		return nil, fmt.Errorf("want a string, number, boolean or list, not a dict")
	}
	return []string{scalar(v)}, nil
}

// headerValue is the value of a header given to a raw verb.
func headerValue(name string, raw json.RawMessage) (string, error) {
	vals, err := queryValues(raw)
	if err != nil {
		return "", sdk.Errorf(sdk.CodeInvalidArgument, "headers: %s: %v", name, err)
	}
	v := strings.Join(vals, ", ")
	if strings.ContainsAny(v, "\r\n\x00") {
		return "", sdk.Errorf(sdk.CodeInvalidArgument, "headers: %s: a header value cannot hold a line break", name)
	}
	return v, nil
}
