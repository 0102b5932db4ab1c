package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parselbox/parselbox/sdk"
)

// toolkitTools are the tools of the built-in sbx namespace, in order.
var toolkitTools = []string{"help", "info", "search", "inspect", "preview", "progress"}

// newToolkit returns the built-in sbx namespace: discovery over every other
// namespace, registered on the same tool engine as any bridge.
func newToolkit(r *Router) *sdk.Bridge {
	b := sdk.NewBridge(&sdk.Info{Name: "sbx", Description: "Discovery tools for this sandbox."},
		&sdk.Options{Namespace: "sbx", Logger: r.log})
	add := func(t *sdk.Tool, fn any) {
		if err := b.AddFunc(t, fn); err != nil {
			panic(fmt.Sprintf("router: sbx.%s: %v", t.Name, err)) // a programming error
		}
	}
	add(&sdk.Tool{Name: "help", Description: "The guide to this sandbox: how to run code, find and call tools, run tasks."},
		func() string {
			if r.opts.Guide == nil {
				return ""
			}
			return r.opts.Guide()
		})
	add(&sdk.Tool{Name: "info", Description: "What this sandbox has: namespaces, globals, mounts, network and limits. Start here."},
		r.info)
	add(&sdk.Tool{Name: "search", Params: []string{"pattern"},
		Description: "Find tools across all namespaces by a regular expression (or plain text) matched against path, description and parameters; namespaces with a search of their own (REST operations, GraphQL queries and mutations) add what it finds."},
		r.search)
	add(&sdk.Tool{Name: "inspect", Params: []string{"names"},
		Description: "Details of tools or namespaces by dotted name: description, parameters (JSON Schema) and output."},
		func(ctx context.Context, names ...nameList) map[string]any {
			return r.inspect(ctx, slices.Concat(names...))
		})
	add(&sdk.Tool{Name: "preview", Params: []string{"data"},
		Description: "A structure-preserving summary of large or nested data: lists keep 2 items, long strings are cut, keys are kept."},
		func(data any) any { return Preview(data) })
	add(&sdk.Tool{Name: "progress",
		Description: "Report how far the code has got: sbx.progress(done, total=None, message=None). An MCP client that asked for progress sees it while the code runs; otherwise it does nothing."},
		func(ctx context.Context, in progressArgs) {
			if e := r.current(); e != nil {
				total := 0.0
				if in.Total != nil {
					total = *in.Total
				}
				e.progress.report(Progress{Progress: in.Done, Total: total, Message: in.Message})
			}
		})
	return b
}

// progressArgs are the arguments of sbx.progress.
type progressArgs struct {
	Done    float64  `json:"done" jsonschema:"how much is done"`
	Total   *float64 `json:"total,omitempty" jsonschema:"how much there is, if known"`
	Message string   `json:"message,omitempty" jsonschema:"what is going on"`
}

// nameList is one argument of sbx.inspect(*names): a dotted name (or a
// namespace object, which the sandbox sends as its path), or a list of them.
type nameList []string

func (n *nameList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*n = nameList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("names are strings or namespace objects")
	}
	*n = many
	return nil
}

// info is sbx.info(): the host's facts plus the namespaces.
func (r *Router) info() map[string]any {
	out := map[string]any{}
	if r.opts.Info != nil {
		maps.Copy(out, r.opts.Info())
	}
	ctx, _ := out["context"].(map[string]any)
	if ctx == nil {
		ctx = map[string]any{}
		out["context"] = ctx
	}
	var names []string
	for _, n := range r.Namespaces() {
		names = append(names, fmt.Sprintf("%s.* (%s)", n.Name, n.Kind))
	}
	ctx["namespaces"] = names
	return out
}

// search is sbx.search(pattern): tools whose path, description or
// parameters match, grouped by namespace; and, for a plugin bridge with a
// search tool of its own (the REST bridge's operations, the GraphQL
// bridge's queries and mutations), what that search finds for pattern,
// as one more entry: {"path": "gql.search", "description": ..., "results":
// [...]}. The pattern is a case-insensitive regular expression, or plain
// text when it does not compile. (MCP servers' and Go values' tools named
// search are not called: they may do anything.)
func (r *Router) search(ctx context.Context, pattern string) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	if strings.TrimSpace(pattern) == "" {
		return out
	}
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(pattern))
	}
	all := r.list()
	keys := make([]string, len(all))
	own := make([]map[string]any, len(all))
	var wg sync.WaitGroup
	for i, ns := range all {
		if ns.builtin {
			continue
		}
		key := fmt.Sprintf("%s (%s)", ns.name, ns.kind)
		keys[i] = key
		c := ns.catalog(ctx, discoveryAge)
		for _, py := range slices.Sorted(maps.Keys(c.alias)) {
			t := c.tools[c.alias[py]]
			path := joinPath(ns.name, py)
			hay := path + " " + t.Description + " " + strings.Join(t.Params, " ") + " " + t.Name
			if re.MatchString(hay) {
				out[key] = append(out[key], map[string]any{"path": path, "description": firstChars(t.Description, 120)})
			}
		}
		if _, ok := c.alias["search"]; ok && ns.plugin {
			wg.Go(func() { own[i] = r.bridgeSearch(ctx, ns.name, pattern) })
		}
	}
	wg.Wait()
	for i, found := range own {
		if found != nil {
			out[keys[i]] = append(out[keys[i]], found)
		}
	}
	return out
}

// bridgeSearchTimeout bounds one bridge's own search within sbx.search.
const bridgeSearchTimeout = 15 * time.Second

// bridgeSearch is what the search tool of namespace name finds for
// pattern: nil when it finds nothing or fails (sbx.search is best effort:
// the namespace's own search, called directly, says why it failed).
func (r *Router) bridgeSearch(ctx context.Context, name, pattern string) map[string]any {
	ctx, cancel := context.WithTimeout(ctx, bridgeSearchTimeout)
	defer cancel()
	arg, _ := json.Marshal(pattern)
	path := name + ".search"
	raw, err := r.call(ctx, &callParams{Path: path, Args: []json.RawMessage{arg}})
	if err != nil {
		r.log.Debug("a bridge's own search failed within sbx.search", "namespace", name, "error", err)
		return nil
	}
	var results []any
	if json.Unmarshal(raw, &results) != nil || len(results) == 0 {
		return nil
	}
	return map[string]any{
		"path":        path,
		"description": fmt.Sprintf("what %s(%s) finds", path, pyString(pattern)),
		"results":     results,
	}
}

// inspect is sbx.inspect(*names).
func (r *Router) inspect(ctx context.Context, names []string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		ns, rest, err := r.lookup(n)
		if err != nil {
			continue // unknown namespaces are left out
		}
		c := ns.catalog(ctx, discoveryAge)
		if name, ok := c.alias[rest]; ok {
			out[n] = toolDoc(n, c.tools[name])
			continue
		}
		tools, subs := c.children(rest)
		if len(tools)+len(subs) == 0 {
			out[n] = map[string]string{"error": fmt.Sprintf("'%s' not found", n)}
			continue
		}
		out[n] = map[string]any{"methods": tools, "namespaces": subs}
	}
	return out
}

func firstChars(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Preview summarizes data keeping its shape: lists keep their first 2 items
// and say how many more there are, strings over 200 characters are cut,
// dicts keep every key, and anything nested deeper than 4 levels is elided.
func Preview(v any) any { return preview(v, 0) }

func preview(v any, depth int) any {
	if depth > 4 {
		return "...(max depth reached)"
	}
	switch x := v.(type) {
	case []any:
		n := len(x)
		keep := min(n, 2)
		out := make([]any, 0, keep+1)
		for _, e := range x[:keep] {
			out = append(out, preview(e, depth+1))
		}
		if n > keep {
			more := n - keep
			out = append(out, fmt.Sprintf("...(%d more item%s)", more, plural(more)))
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = preview(e, depth+1)
		}
		return out
	case string:
		if r := []rune(x); len(r) > 200 {
			return string(r[:200]) + "..."
		}
		return x
	default:
		return v
	}
}
