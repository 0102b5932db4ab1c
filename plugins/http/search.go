package main

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// searchHit is one operation found by search.
type searchHit struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Summary string `json:"summary"`
	// Tool is the name of the bridge's tool that calls the operation.
	Tool string `json:"tool"`
	// Params maps each parameter to its type, "(required)" when it is.
	Params map[string]string `json:"params,omitempty"`
	// Body maps each field of a JSON object body to its type.
	Body map[string]string `json:"body,omitempty"`
}

// searchMethods may lead a query ("GET /pet") to keep only that method.
var searchMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// regexChars make a query a regular expression.
const regexChars = `|\()[]{}^$+`

// search finds operations, as the original bridge did:
//   - an optional leading method ("GET", "POST", ... in capitals) keeps
//     that method's operations; the rest of the query (default "*") is
//     the pattern;
//   - a pattern with any of | \ ( ) [ ] { } ^ $ + that compiles is a
//     case-insensitive regular expression, matched against the path, the
//     summary, the method and the operationId;
//   - else a pattern with * or ? is a glob matched against the whole path;
//   - else it is a keyword: operations with a word (a path segment, a
//     summary word) equal to it, else containing it, else all, whose
//     "path summary" contains it. When that finds nothing, operations
//     whose path, summary, operationId and description contain all of the
//     query's words.
func (s *spec) search(query string) []searchHit {
	q := strings.TrimSpace(query)
	if q == "" {
		return []searchHit{}
	}
	method := ""
	if first, rest, _ := strings.Cut(q, " "); slices.Contains(searchMethods, first) {
		method, q = first, cmp.Or(strings.TrimSpace(rest), "*")
	}
	ops := filter(s.ops, func(op *operation) bool { return method == "" || op.method == method })
	hits := []searchHit{}
	for _, op := range matching(ops, q) {
		hits = append(hits, op.hit())
	}
	return hits
}

func matching(ops []*operation, q string) []*operation {
	if strings.ContainsAny(q, regexChars) {
		if re, err := regexp.Compile("(?i)" + q); err == nil {
			return filter(ops, func(op *operation) bool {
				return re.MatchString(op.path) || re.MatchString(strings.ToLower(op.summary)) ||
					re.MatchString(op.method) || op.id != "" && re.MatchString(op.id)
			})
		}
	}
	if strings.ContainsAny(q, "*?") {
		re := globRegexp(q)
		return filter(ops, func(op *operation) bool { return re.MatchString(op.path) })
	}
	ql := strings.ToLower(q)
	candidates := filter(ops, func(op *operation) bool { return slices.Contains(op.tokens(), ql) })
	if len(candidates) == 0 {
		candidates = filter(ops, func(op *operation) bool {
			return slices.ContainsFunc(op.tokens(), func(t string) bool { return strings.Contains(t, ql) })
		})
	}
	if len(candidates) == 0 {
		candidates = ops
	}
	found := filter(candidates, func(op *operation) bool {
		return strings.Contains(op.path+" "+strings.ToLower(op.summary), ql)
	})
	if len(found) > 0 {
		return found
	}
	words := strings.Fields(ql)
	return filter(ops, func(op *operation) bool {
		hay := strings.ToLower(strings.Join([]string{op.path, op.summary, op.id, op.tool, op.description}, " "))
		return !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(hay, w) })
	})
}

func filter(ops []*operation, keep func(*operation) bool) []*operation {
	var out []*operation
	for _, op := range ops {
		if keep(op) {
			out = append(out, op)
		}
	}
	return out
}

// globRegexp compiles a shell glob (* and ?) matched against a whole path.
func globRegexp(glob string) *regexp.Regexp {
	quoted := regexp.QuoteMeta(glob) // * and ? are \* and \? in it
	return regexp.MustCompile("^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(quoted) + "$")
}

// tokens are the words by which a keyword finds an operation: its path
// segments without braces, and its summary's words of two characters or
// more, in lower case.
func (op *operation) tokens() []string {
	var out []string
	for seg := range strings.SplitSeq(op.path, "/") {
		if seg = strings.ToLower(strings.Trim(seg, "{}")); seg != "" {
			out = append(out, seg)
		}
	}
	for _, w := range strings.Fields(strings.ToLower(op.summary)) {
		if len(w) > 1 {
			out = append(out, w)
		}
	}
	return out
}

func (op *operation) hit() searchHit {
	h := searchHit{Method: op.method, Path: op.path, Summary: op.summary, Tool: op.tool}
	for _, p := range op.params {
		if h.Params == nil {
			h.Params = map[string]string{}
		}
		t := typeName(p.Schema)
		if p.Schema == nil && p.Content != nil {
			t = "JSON"
		}
		if p.Required {
			t += " (required)"
		}
		h.Params[p.Name] = t
	}
	if op.body != nil && op.body.schema != nil && op.body.schema.Value != nil {
		b := op.body.schema.Value
		props := openapi3.Schemas{}
		maps.Copy(props, b.Properties)
		for _, sub := range b.AllOf { // allOf: [{$ref: Base}, {properties: ...}]
			if sub != nil && sub.Value != nil {
				maps.Copy(props, sub.Value.Properties)
			}
		}
		for name, ref := range props {
			if h.Body == nil {
				h.Body = map[string]string{}
			}
			t := typeName(ref)
			if slices.Contains(b.Required, name) {
				t += " (required)"
			}
			h.Body[name] = t
		}
		if h.Body == nil {
			h.Body = map[string]string{op.body.arg: fmt.Sprintf("%s (%s)", typeName(op.body.schema), op.body.mediaType)}
		}
	}
	return h
}
