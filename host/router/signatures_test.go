package router

import (
	"strings"
	"testing"
)

// Signatures shows every tool the sandbox may call as Python, grouped by
// namespace, leaves out what a policy refuses, and past its budget says
// how many tools it left out and where to find them.
func TestSignatures(t *testing.T) {
	r, _ := echoRouter(t, Options{Policies: map[string]Policy{"echo": {Deny: []string{"echo.deep.ping"}}}})
	got := r.Signatures(t.Context(), 0)
	want := "class echo:  # Echoes.\n" +
		"    def deep.er.probe(x = None): ...\n" +
		"    def get_user.v2(): \"\"\"Not an identifier.\"\"\"\n" +
		"    def say(text: str = None, times: int = None) -> str: \"\"\"Says it.\"\"\"\n"
	if got != want {
		t.Errorf("Signatures:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "ping") {
		t.Error("a denied tool is shown")
	}
	cut := r.Signatures(t.Context(), 20) // 80 characters: the head and one tool
	if !strings.HasPrefix(cut, "class echo:  # Echoes.\n    def deep.er.probe(x = None): ...\n") ||
		!strings.HasSuffix(cut, "# ... and 2 more tools, left out to save space: echo (2). Find them with sbx.search(\"pattern\") or help(ns).\n") {
		t.Errorf("cut at a budget:\n%s", cut)
	}
}
