package router

import "testing"

// The summary next to a tool (help(ns), the signatures) is the first
// sentence of the description's first line, at most maxSummary characters.
func TestFirstLine(t *testing.T) {
	long := "Run a query against the API and return everything it answers, with its errors, its extensions and its headers"
	for in, want := range map[string]string{
		"Adds two numbers.":                              "Adds two numbers.",
		"Find pet by ID\n\nReturns a single pet.":        "Find pet by ID",
		"Find the API's operations. search(\"x\") finds": "Find the API's operations.",
		"Uses a unit, e.g. km. Then more.":               "Uses a unit, e.g. km.",
		"Version 1.2.3 of it":                            "Version 1.2.3 of it",
		"  Ends with a period.  ":                        "Ends with a period.",
		long:                                             long[:99] + "…",
		"":                                               "",
	} {
		if got := firstLine(in); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
