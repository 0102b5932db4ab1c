package router

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// Signature renders a tool as one line of Python for people and models to
// read: its name, each parameter with its type and default, and what it
// returns, from the tool's JSON Schemas:
//
//	graphql(query: str, variables: dict = None) -> dict
//	scan(sector: str = 'alpha', depth: int = 3, encrypt: bool = True)
//	sum(label: str, *xs: int)
//
// A required parameter has no default; an optional one without a default
// shows "= None"; a variadic last parameter is *name with its items' type.
// A parameter whose schema names no type has no annotation, and the return
// type is left out when the output schema names none. help() uses it, as
// sbx.inspect does (its "signature"); name is what the line starts with (a
// tool's name, or its dotted path).
func Signature(name string, t *sdk.ToolInfo) string { return signature(name, t, 0) }

// maxListedDefault bounds a default value in the lists of signatures
// (help(ns), describe_tools = "signatures"): a longer one shows as
// "= ...", as in a Python stub; help(ns.tool) shows it.
const maxListedDefault = 32

// listedSignature is Signature for a list of tools: long defaults as "...".
func listedSignature(name string, t *sdk.ToolInfo) string {
	return signature(name, t, maxListedDefault)
}

// signature renders the line; a default longer than maxDefault characters
// (0: no bound) is written "...".
func signature(name string, t *sdk.ToolInfo, maxDefault int) string {
	s := parseSchema(t.InputSchema)
	params := t.Params
	if params == nil {
		params = slices.Sorted(maps.Keys(s.Properties))
	}
	parts := make([]string, 0, len(params))
	for i, p := range params {
		prop := parseSchema(s.Properties[p])
		part := annotated(p, pyType(prop))
		switch {
		case t.Variadic && i == len(params)-1:
			part = "*" + annotated(p, pyType(parseSchema(prop.Items)))
		case prop.Default != nil:
			def := pyLiteral(prop.Default)
			if maxDefault > 0 && len(def) > maxDefault {
				def = "..."
			}
			part += " = " + def
		case !slices.Contains(s.Required, p):
			part += " = None"
		}
		parts = append(parts, part)
	}
	line := name + "(" + strings.Join(parts, ", ") + ")"
	if ret := returnType(t.OutputSchema); ret != "" {
		line += " -> " + ret
	}
	return line
}

// ParamDocs are the descriptions of a tool's parameters that have one, in
// the order of the signature, as "name: description" lines.
func ParamDocs(t *sdk.ToolInfo) []string {
	s := parseSchema(t.InputSchema)
	params := t.Params
	if params == nil {
		params = slices.Sorted(maps.Keys(s.Properties))
	}
	var out []string
	for _, p := range params {
		if d := strings.TrimSpace(parseSchema(s.Properties[p]).Description); d != "" {
			out = append(out, p+": "+strings.Join(strings.Fields(d), " "))
		}
	}
	return out
}

func annotated(name, typ string) string {
	if typ == "" {
		return name
	}
	return name + ": " + typ
}

// schema is the part of a JSON Schema a signature reads.
type schema struct {
	Type        json.RawMessage            `json:"type"` // a name or a list of names
	Items       json.RawMessage            `json:"items"`
	Enum        []json.RawMessage          `json:"enum"`
	AnyOf       []json.RawMessage          `json:"anyOf"`
	OneOf       []json.RawMessage          `json:"oneOf"`
	Default     json.RawMessage            `json:"default"`
	Description string                     `json:"description"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Required    []string                   `json:"required"`
}

func parseSchema(raw json.RawMessage) schema {
	var s schema
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// maxLiterals is the most enum values a type spells out as Literal[...].
const maxLiterals = 6

// pyType is the Python type a schema describes: str, int, float, bool,
// None, list[T], dict, Literal['a', 'b'] or a union of them with |; "" when
// it names none.
func pyType(s schema) string {
	if n := len(s.Enum); n > 0 && n <= maxLiterals {
		lits := make([]string, n)
		for i, e := range s.Enum {
			lits[i] = pyLiteral(e)
		}
		return "Literal[" + strings.Join(lits, ", ") + "]"
	}
	if alts := slices.Concat(s.AnyOf, s.OneOf); len(alts) > 0 {
		var types []string
		for _, a := range alts {
			t := pyType(parseSchema(a))
			if t == "" {
				return ""
			}
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		return strings.Join(types, " | ")
	}
	var names []string
	var one string
	if json.Unmarshal(s.Type, &one) == nil && one != "" {
		names = []string{one}
	} else {
		_ = json.Unmarshal(s.Type, &names)
	}
	var types []string
	for _, n := range names {
		t := pyTypes[n]
		if n == "array" && s.Items != nil {
			if it := pyType(parseSchema(s.Items)); it != "" {
				t = "list[" + it + "]"
			}
		}
		if t != "" && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if i := slices.Index(types, "None"); i >= 0 && len(types) > 1 { // list[str] | None
		types = append(slices.Delete(types, i, i+1), "None")
	}
	return strings.Join(types, " | ")
}

// pyTypes are the Python types of JSON Schema's type names.
var pyTypes = map[string]string{
	"string": "str", "integer": "int", "number": "float", "boolean": "bool",
	"null": "None", "object": "dict", "array": "list",
}

// returnType is the type of a tool's result: that of its output schema,
// or of the schema's one "result" property (how a bridge wraps a value
// that is not an object).
func returnType(raw json.RawMessage) string {
	s := parseSchema(raw)
	if len(s.Properties) == 1 {
		if res, ok := s.Properties["result"]; ok {
			return pyType(parseSchema(res))
		}
	}
	return pyType(s)
}
