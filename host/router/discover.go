package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// children lists what is directly under a Python path prefix of a
// namespace ("" is the namespace itself): tools and nested namespaces,
// sorted, each list empty rather than nil.
func (c *catalog) children(prefix string) (tools, subs []string) {
	tools, subs = []string{}, []string{}
	for py := range c.alias {
		rest := py
		if prefix != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(py, prefix+"."); !ok {
				continue
			}
		}
		if head, _, nested := strings.Cut(rest, "."); nested {
			subs = append(subs, head)
		} else if rest != "" {
			tools = append(tools, rest)
		}
	}
	slices.Sort(tools)
	slices.Sort(subs)
	return tools, slices.Compact(subs)
}

func (r *Router) dir(ctx context.Context, path string) ([]string, error) {
	ns, rest, err := r.lookup(path)
	if err != nil {
		return nil, err
	}
	tools, subs := ns.catalog(ctx, discoveryAge).children(rest)
	names := append(tools, subs...)
	slices.Sort(names)
	return names, nil
}

// help answers help(ns.path): a tool's help (toolHelp), or the tree of
// what is under a namespace, after its description: all of it with full,
// else shortDoc: its first paragraph when it is long, and a line that says
// how to read the rest (an MCP server's instructions: a model reads the
// answer on every later turn, and needs the signatures more).
func (r *Router) help(ctx context.Context, path string, full bool) (any, error) {
	ns, rest, err := r.lookup(path)
	if err != nil {
		return nil, err
	}
	c := ns.catalog(ctx, discoveryAge)
	tools, subs := c.children(rest)
	if name, ok := c.alias[rest]; ok && len(tools)+len(subs) == 0 {
		return map[string]string{"tool": toolHelp(path, c.tools[name])}, nil
	}
	doc := c.desc.Description
	if rest != "" {
		doc = c.nsDocs[rest]
	}
	if !full {
		doc = shortDoc(doc, path)
	}
	if len(tools)+len(subs) == 0 {
		// A bridge with no tools may say why (an MCP server that is down).
		if rest == "" && doc != "" {
			return "Description: " + doc + "\n\nNo tools.", nil
		}
		return "No documentation for '" + path + "'", nil
	}
	var b strings.Builder
	if doc != "" {
		b.WriteString("Description: " + doc + "\n\n")
	}
	b.WriteString("Methods:\n")
	c.writeTree(&b, rest, "")
	return strings.TrimRight(b.String(), "\n"), nil
}

// maxDoc bounds the description help(ns) shows without full=True.
const maxDoc = 600

// shortDoc is a namespace's description for help(ns): whole up to maxDoc
// characters, else its first paragraph (an MCP bridge's own line, before
// the server's instructions), then how many lines were left out and where
// they are.
func shortDoc(doc, path string) string {
	doc = strings.TrimSpace(doc)
	if len(doc) <= maxDoc {
		return doc
	}
	kept, rest, _ := strings.Cut(doc, "\n\n")
	if rest = strings.TrimSpace(rest); rest == "" {
		return kept
	}
	n := 0
	for l := range strings.SplitSeq(rest, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return kept + fmt.Sprintf("\n(%d more line%s: help(%s, full=True))", n, plural(n), path)
}

// writeTree renders the tools (first) and namespaces under prefix.
func (c *catalog) writeTree(b *strings.Builder, prefix, indent string) {
	tools, subs := c.children(prefix)
	n := len(tools) + len(subs)
	i := 0
	for _, name := range tools {
		i++
		t := c.tools[c.alias[joinPath(prefix, name)]]
		line := indent + connector(i == n) + listedSignature(name, t)
		if d := firstLine(t.Description); d != "" {
			line += "  # " + d
		}
		b.WriteString(line + "\n")
	}
	for _, s := range subs {
		i++
		b.WriteString(indent + connector(i == n) + s + "\n")
		next := indent + "│   "
		if i == n {
			next = indent + "    "
		}
		c.writeTree(b, joinPath(prefix, s), next)
	}
}

func connector(last bool) string {
	if last {
		return "└── "
	}
	return "├── "
}

// toolHelp is help(ns.tool): the signature line (with the full path),
// the description, the parameters' own descriptions, and where the JSON
// Schemas are (how to call a tool, or start it as a task, is the guide's).
func toolHelp(path string, t *sdk.ToolInfo) string {
	var b strings.Builder
	b.WriteString(Signature(path, t) + "\n")
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString("\n" + d + "\n")
	}
	if docs := ParamDocs(t); len(docs) > 0 {
		b.WriteString("\nParameters:\n")
		for _, d := range docs {
			b.WriteString("  " + d + "\n")
		}
	}
	b.WriteString("\nJSON Schemas: sbx.inspect(" + pyString(path) + ").")
	return b.String()
}

// maxSummary bounds the description shown next to a tool in help(ns).
const maxSummary = 100

// firstLine is the first sentence of a description's first line, cut to
// maxSummary characters: the summary next to a tool in help(ns) and in the
// signatures (a model reads it on every turn; help(ns.tool) has the rest).
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = firstSentence(strings.TrimSpace(s))
	if r := []rune(s); len(r) > maxSummary {
		s = strings.TrimSpace(string(r[:maxSummary-1])) + "…"
	}
	return s
}

// firstSentence is s up to the end of its first sentence (a period
// followed by a space, not after "e.g" or "i.e"), or s.
func firstSentence(s string) string {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '.' || s[i+1] != ' ' {
			continue
		}
		if head := s[:i]; !strings.HasSuffix(head, "e.g") && !strings.HasSuffix(head, "i.e") {
			return head + "."
		}
	}
	return s
}

// toolDoc is what sbx.inspect returns for the tool at a
// Python path: its description, Python signature (Signature:
// "fire(target: str, power: int = 100)"), parameters (the JSON Schema,
// defaults included) and output.
func toolDoc(path string, t *sdk.ToolInfo) map[string]any {
	return map[string]any{
		"description": t.Description,
		"signature":   Signature(path[strings.LastIndex(path, ".")+1:], t),
		"parameters":  rawOrEmptyObject(t.InputSchema),
		"output":      cleanOutput(t.OutputSchema),
	}
}

// pyLiteral writes a JSON value as a Python literal: True, None, 'text',
// [1, 2], {'k': 'v'}.
func pyLiteral(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	var b strings.Builder
	writePy(&b, v)
	return b.String()
}

func writePy(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if v {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case json.Number:
		b.WriteString(v.String())
	case string:
		b.WriteString(pyString(v))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyString(k) + ": ")
			writePy(b, v[k])
		}
		b.WriteByte('}')
	}
}

// pyString is Python's repr of a str (for printable text).
func pyString(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}

func rawOrEmptyObject(s json.RawMessage) any {
	if len(s) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return s
}

// cleanOutput simplifies an output schema for reading: "x-" keys go, and a
// schema whose only property is "result" becomes that property's schema.
func cleanOutput(s json.RawMessage) any {
	if len(s) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(s, &m); err != nil {
		return s
	}
	maps.DeleteFunc(m, func(k string, _ any) bool { return strings.HasPrefix(k, "x-") })
	if props, ok := m["properties"].(map[string]any); ok && len(props) == 1 {
		if res, ok := props["result"]; ok {
			return res
		}
	}
	return m
}
