package router

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/parselbox/parselbox/sdk"
)

// Policy says which of a namespace's tools the sandbox may call, and how
// often in one execution. The zero Policy allows every tool, without limit.
//
// A pattern is a glob (path.Match: * matches any run of characters, dots
// included; ? one character; [a-z] a class) matched against a tool's path
// within its bridge and its full path, each as the bridge names it and as
// Python does: deny = ["*.delete*"] refuses github.repos.delete and
// github.delete_repo; allow = ["list_*", "get_*"] keeps only those.
type Policy struct {
	// Allow, if not empty, lists the only tools that may be called.
	Allow []string
	// Deny lists tools that may not be called; it wins over Allow.
	Deny []string
	// ReadOnly keeps only the tools that declare that they change nothing
	// (an MCP tool's readOnlyHint annotation, sdk.Tool.ReadOnly).
	ReadOnly bool
	// MaxCalls bounds the calls to the namespace's tools in one execution;
	// 0 is no bound.
	MaxCalls int
	// Source names where the policy was declared, for the messages of the
	// refusals: `bridge "github"`. Empty: the namespace.
	Source string
}

// CheckPattern reports whether a pattern of Allow or Deny is well formed.
func CheckPattern(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("must not be empty")
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("%q is not a glob pattern: %v", p, err)
	}
	return nil
}

// refusal says why the policy refuses a tool, "" when it allows it. names
// are the tool's paths within its bridge (its own name, its Python name),
// ns the namespace; read-only is what the tool declares.
func (p *Policy) refusal(ns string, readOnly bool, names ...string) string {
	if p == nil {
		return ""
	}
	var candidates []string
	for _, n := range names {
		candidates = append(candidates, n, joinPath(ns, n))
	}
	matches := func(pattern string) bool {
		return slices.ContainsFunc(candidates, func(c string) bool {
			ok, _ := path.Match(pattern, c)
			return ok
		})
	}
	for _, d := range p.Deny {
		if matches(d) {
			return fmt.Sprintf("denied by the rule deny = %q of %s", d, p.source(ns))
		}
	}
	if len(p.Allow) > 0 && !slices.ContainsFunc(p.Allow, matches) {
		return fmt.Sprintf("not allowed by %s: allow = [%s] matches none of its names", p.source(ns), quoteList(p.Allow))
	}
	if p.ReadOnly && !readOnly {
		return fmt.Sprintf("not read-only, and %s has allow_read_only = true", p.source(ns))
	}
	return ""
}

// source names where the policy of namespace ns was declared.
func (p *Policy) source(ns string) string {
	return cmp.Or(p.Source, fmt.Sprintf("namespace %q", ns))
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// budget counts one execution's calls per namespace against their
// policies' MaxCalls.
type budget struct {
	mu    sync.Mutex
	calls map[string]int
}

// take counts a call to namespace ns and refuses it past max (0: no bound).
func (b *budget) take(ns string, p *Policy) error {
	if b == nil || p == nil || p.MaxCalls <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls == nil {
		b.calls = map[string]int{}
	}
	if b.calls[ns] >= p.MaxCalls {
		return pyErr(sdk.CodePermission, "tool call budget spent: this execution has made its %d call%s to %s (max_tool_calls = %d of %s); the next execution starts a new budget",
			p.MaxCalls, plural(p.MaxCalls), ns, p.MaxCalls, p.source(ns))
	}
	b.calls[ns]++
	return nil
}
