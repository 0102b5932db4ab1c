package router

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Signatures renders the tools the sandbox may call as compact Python, one
// class per namespace, for a model to read before it writes code (the
// describe_tools = "signatures" option):
//
//	class weather:  # Weather forecasts.
//	    def get_forecast(city: str, days: int = 3) -> dict: """The forecast for a city."""
//
// Tools a policy refuses are absent, as from all discovery. Past
// budgetTokens (estimated as a quarter of the length; 0: no budget) the
// remaining tools are left out and a last line says how many, and that
// sbx.search finds them. "" when there are no tools.
func (r *Router) Signatures(ctx context.Context, budgetTokens int) string {
	var b strings.Builder
	budget := budgetTokens * 4
	var left []string // "ns (3)": the namespaces with tools left out, how many
	nLeft := 0
	leaveOut := func(name string, n int) {
		left = append(left, fmt.Sprintf("%s (%d)", name, n))
		nLeft += n
	}
	for _, ns := range r.list() {
		if ns.builtin {
			continue
		}
		c := ns.catalog(ctx, discoveryAge)
		paths := slices.Sorted(maps.Keys(c.alias))
		if len(paths) == 0 {
			continue
		}
		if len(left) > 0 { // the budget is spent
			leaveOut(ns.name, len(paths))
			continue
		}
		head := "class " + ns.name + ":"
		if d := firstLine(c.desc.Description); d != "" {
			head += "  # " + d
		}
		head += "\n" // written with the first line that fits, then ""
		for i, py := range paths {
			t := c.tools[c.alias[py]]
			line := "    def " + listedSignature(py, t) + ":"
			if d := firstLine(t.Description); d != "" {
				line += ` """` + strings.ReplaceAll(d, `"""`, `'''`) + `"""`
			} else {
				line += " ..."
			}
			line += "\n"
			if budget > 0 && b.Len()+len(head)+len(line) > budget {
				leaveOut(ns.name, len(paths)-i)
				break
			}
			b.WriteString(head + line)
			head = ""
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, "# ... and %d more tool%s, left out to save space: %s. "+
			"Find them with sbx.search(\"pattern\") or help(ns).\n", nLeft, plural(nLeft), strings.Join(left, ", "))
	}
	return b.String()
}
