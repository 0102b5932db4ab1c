package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agext/levenshtein"

	"github.com/parselbox/parselbox/sdk"
)

// introspectionQuery asks for every type with its fields, arguments, input
// fields, enum values, interfaces and possible types. It uses only what
// every server since the 2015 spec answers (no args(includeDeprecated:), no
// specifiedByURL).
const introspectionQuery = `query ParselboxIntrospection {
  __schema {
    queryType { name }
    mutationType { name }
    types { ...FullType }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) {
    name description
    args { ...InputValue }
    type { ...TypeRef }
    isDeprecated deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } }
}`

// The introspection result, as the server sends it.
type (
	introspection struct {
		Schema *struct {
			QueryType    *struct{ Name string } `json:"queryType"`
			MutationType *struct{ Name string } `json:"mutationType"`
			Types        []*fullType            `json:"types"`
		} `json:"__schema"`
	}
	fullType struct {
		Kind          string       `json:"kind"`
		Name          string       `json:"name"`
		Description   string       `json:"description"`
		Fields        []field      `json:"fields"`
		InputFields   []inputValue `json:"inputFields"`
		Interfaces    []typeRef    `json:"interfaces"`
		EnumValues    []enumValue  `json:"enumValues"`
		PossibleTypes []typeRef    `json:"possibleTypes"`
	}
	field struct {
		Name              string       `json:"name"`
		Description       string       `json:"description"`
		Args              []inputValue `json:"args"`
		Type              typeRef      `json:"type"`
		IsDeprecated      bool         `json:"isDeprecated"`
		DeprecationReason string       `json:"deprecationReason"`
	}
	inputValue struct {
		Name         string  `json:"name"`
		Description  string  `json:"description"`
		Type         typeRef `json:"type"`
		DefaultValue *string `json:"defaultValue"`
	}
	enumValue struct {
		Name              string `json:"name"`
		Description       string `json:"description"`
		IsDeprecated      bool   `json:"isDeprecated"`
		DeprecationReason string `json:"deprecationReason"`
	}
	typeRef struct {
		Kind   string   `json:"kind"`
		Name   string   `json:"name"`
		OfType *typeRef `json:"ofType"`
	}
)

// String writes a type reference as GraphQL does: [Country!]!. A reference
// it cannot read is "?".
func (t *typeRef) String() string {
	if t == nil {
		return "?"
	}
	switch t.Kind {
	case "NON_NULL":
		return t.OfType.String() + "!"
	case "LIST":
		return "[" + t.OfType.String() + "]"
	}
	if t.Name == "" {
		return "?"
	}
	return t.Name
}

// schema is an introspected schema, indexed for search and describe.
type schema struct {
	types     map[string]*fullType
	names     []string    // type names in the server's order
	queryType string      // the name of the query root type
	ops       []operation // queries, then mutations, in the server's order
}

type operation struct {
	kind  string // "query" or "mutation"
	field field
}

// introspect fetches and indexes the schema.
func (c *client) introspect(ctx context.Context) (*schema, error) {
	r, err := c.do(ctx, nil, introspectionQuery, nil, "ParselboxIntrospection")
	if err != nil {
		return nil, err
	}
	var in introspection
	if len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, &in); err != nil {
			return nil, sdk.Errorf(sdk.CodeInternal, "introspection of %s: unexpected answer: %v", c.label, err)
		}
	}
	if in.Schema == nil {
		return nil, sdk.Errorf(sdk.CodeInternal, "introspection of %s failed: %s (search and describe need it; graphql() may still work)", c.label, firstError(r.Errors))
	}
	s := &schema{types: make(map[string]*fullType, len(in.Schema.Types))}
	for _, t := range in.Schema.Types {
		if t == nil || t.Name == "" {
			continue
		}
		s.types[t.Name] = t
		s.names = append(s.names, t.Name)
	}
	if q := in.Schema.QueryType; q != nil {
		s.queryType = q.Name
	}
	for _, root := range []struct {
		kind string
		typ  *struct{ Name string }
	}{{"query", in.Schema.QueryType}, {"mutation", in.Schema.MutationType}} {
		if root.typ == nil {
			continue
		}
		if t := s.types[root.typ.Name]; t != nil {
			for _, f := range t.Fields {
				s.ops = append(s.ops, operation{kind: root.kind, field: f})
			}
		}
	}
	return s, nil
}

// firstError is the message of the first GraphQL error, or a note that the
// server sent none.
func firstError(errs json.RawMessage) string {
	var list []struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(errs, &list) == nil && len(list) > 0 && list[0].Message != "" {
		return list[0].Message
	}
	return "the server sent no schema"
}

// --- search ------------------------------------------------------------------

// opSummary is one operation found by search.
type opSummary struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Args        []string `json:"args"`
	Returns     string   `json:"returns"`
}

// search finds operations. A leading word "query" or "mutation" keeps that
// kind; the rest is a case-insensitive regular expression (plain text when
// it does not compile) matched against "name description args returns";
// an empty rest matches all.
func (s *schema) search(pattern string) []opSummary {
	pattern = strings.TrimSpace(pattern)
	kind := ""
	if f := strings.Fields(pattern); len(f) > 0 && (strings.EqualFold(f[0], "query") || strings.EqualFold(f[0], "mutation")) {
		kind, pattern = strings.ToLower(f[0]), strings.TrimSpace(pattern[len(f[0]):])
	}
	match := func(string) bool { return true }
	if pattern != "" {
		if re, err := regexp.Compile("(?i)" + pattern); err == nil {
			match = re.MatchString
		} else {
			lower := strings.ToLower(pattern)
			match = func(s string) bool { return strings.Contains(strings.ToLower(s), lower) }
		}
	}
	found := []opSummary{}
	for _, op := range s.ops {
		if kind != "" && op.kind != kind {
			continue
		}
		args := make([]string, 0, len(op.field.Args))
		for _, a := range op.field.Args {
			args = append(args, argString(a))
		}
		returns := op.field.Type.String()
		if !match(strings.Join([]string{op.field.Name, op.field.Description, strings.Join(args, " "), returns}, " ")) {
			continue
		}
		found = append(found, opSummary{
			Name:        op.field.Name,
			Type:        op.kind,
			Description: truncate(op.field.Description, 120),
			Args:        args,
			Returns:     returns,
		})
	}
	return found
}

// argString writes an argument as in a GraphQL document: "sort: Sort = NAME".
func argString(a inputValue) string {
	s := a.Name + ": " + a.Type.String()
	if a.DefaultValue != nil {
		s += " = " + *a.DefaultValue
	}
	return s
}

// truncate shortens s to n characters, the last being "…", on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// --- describe ----------------------------------------------------------------

// typeDoc describes a type.
type typeDoc struct {
	Name          string     `json:"name"`
	Kind          string     `json:"kind"`
	Description   string     `json:"description,omitempty"`
	Fields        []fieldDoc `json:"fields,omitempty"`
	InputFields   []fieldDoc `json:"inputFields,omitempty"`
	Values        []fieldDoc `json:"values,omitempty"`
	Interfaces    []string   `json:"interfaces,omitempty"`
	PossibleTypes []string   `json:"possibleTypes,omitempty"`
}

// fieldDoc describes a field, an input field, an argument or an enum value.
type fieldDoc struct {
	Name        string   `json:"name"`
	Type        string   `json:"type,omitempty"`
	Description string   `json:"description,omitempty"`
	Args        []string `json:"args,omitempty"`
	Default     *string  `json:"default,omitempty"`
	Deprecated  string   `json:"deprecated,omitempty"`
}

// opDoc describes a query or mutation.
type opDoc struct {
	Name        string     `json:"name"`
	Type        string     `json:"type"`
	Description string     `json:"description,omitempty"`
	Args        []fieldDoc `json:"args"`
	Returns     string     `json:"returns"`
	Deprecated  string     `json:"deprecated,omitempty"`
}

// describe describes the type called name or, failing that, the query or
// mutation called name. Its errors are CodeInvalidArgument (ValueError).
func (s *schema) describe(name string) (any, error) {
	if name == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "empty name")
	}
	if t := s.types[name]; t != nil {
		return describeType(t), nil
	}
	for _, op := range s.ops {
		if op.field.Name == name {
			return describeOp(op), nil
		}
	}
	msg := fmt.Sprintf("no type or operation named %q in the schema", name)
	if similar := s.similar(name); len(similar) > 0 {
		msg += "; did you mean " + strings.Join(similar, ", ") + "?"
	} else if s.queryType != "" {
		msg += fmt.Sprintf("; describe(%q) lists the queries", s.queryType)
	}
	return nil, sdk.Errorf(sdk.CodeInvalidArgument, "%s", msg)
}

func describeType(t *fullType) *typeDoc {
	d := &typeDoc{Name: t.Name, Kind: t.Kind, Description: t.Description}
	for _, f := range t.Fields {
		fd := fieldDoc{Name: f.Name, Type: f.Type.String(), Description: f.Description, Deprecated: deprecated(f.IsDeprecated, f.DeprecationReason)}
		for _, a := range f.Args {
			fd.Args = append(fd.Args, argString(a))
		}
		d.Fields = append(d.Fields, fd)
	}
	for _, f := range t.InputFields {
		d.InputFields = append(d.InputFields, inputDoc(f))
	}
	for _, v := range t.EnumValues {
		d.Values = append(d.Values, fieldDoc{Name: v.Name, Description: v.Description, Deprecated: deprecated(v.IsDeprecated, v.DeprecationReason)})
	}
	for _, i := range t.Interfaces {
		d.Interfaces = append(d.Interfaces, i.String())
	}
	for _, p := range t.PossibleTypes {
		d.PossibleTypes = append(d.PossibleTypes, p.String())
	}
	return d
}

func describeOp(op operation) *opDoc {
	d := &opDoc{
		Name:        op.field.Name,
		Type:        op.kind,
		Description: op.field.Description,
		Args:        []fieldDoc{},
		Returns:     op.field.Type.String(),
		Deprecated:  deprecated(op.field.IsDeprecated, op.field.DeprecationReason),
	}
	for _, a := range op.field.Args {
		d.Args = append(d.Args, inputDoc(a))
	}
	return d
}

func inputDoc(v inputValue) fieldDoc {
	return fieldDoc{Name: v.Name, Type: v.Type.String(), Description: v.Description, Default: v.DefaultValue}
}

func deprecated(is bool, reason string) string {
	switch {
	case !is:
		return ""
	case reason == "":
		return "deprecated"
	}
	return reason
}

// similar lists up to 5 type and operation names close to name: equal but
// for case, containing it or contained in it, or at most 2 edits away.
func (s *schema) similar(name string) []string {
	lower := strings.ToLower(name)
	var found []string
	consider := func(n string) {
		if strings.HasPrefix(n, "__") || slices.Contains(found, n) {
			return
		}
		l := strings.ToLower(n)
		if strings.Contains(l, lower) || (len(l) >= 3 && strings.Contains(lower, l)) || levenshtein.Distance(l, lower, nil) <= 2 {
			found = append(found, n)
		}
	}
	for _, n := range s.names {
		consider(n)
	}
	for _, op := range s.ops {
		consider(op.field.Name)
	}
	if len(found) > 5 {
		found = found[:5]
	}
	return found
}
