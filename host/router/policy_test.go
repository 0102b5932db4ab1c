package router

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/sdk"
)

var adminDesc = &sdk.Description{Tools: []sdk.ToolInfo{
	{Name: "list_repos", ReadOnly: true},
	{Name: "get-repo", ReadOnly: true},
	{Name: "delete_repo"},
	{Name: "repos.delete"},
	{Name: "admin.users.list", ReadOnly: true},
	{Name: "create_issue"},
}}

func policyRouter(t *testing.T, p Policy) (*Router, *[]string) {
	t.Helper()
	var called []string
	b := &fakeBridge{desc: adminDesc, call: func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		called = append(called, req.Name)
		return &sdk.CallToolResult{Content: json.RawMessage(`"ok"`)}, nil
	}}
	r := New(Options{TaskDir: t.TempDir(), Policies: map[string]Policy{"gh": p}})
	if err := r.Add(t.Context(), "gh", "plugin", b); err != nil {
		t.Fatal(err)
	}
	return r, &called
}

func remote(t *testing.T, err error) *sandbox.RemoteError {
	t.Helper()
	var re *sandbox.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("want a Python exception, got %v", err)
	}
	return re
}

// Denied tools are absent from discovery and refused by path with the rule
// named; the others are called as before.
func TestPolicyAllowDeny(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		policy  Policy
		visible []string // dir(gh), tools and namespaces
		refused map[string]string
	}{
		"deny": {
			policy:  Policy{Deny: []string{"*.delete*", "admin.*"}, Source: `bridge "gh"`},
			visible: []string{"create_issue", "get_repo", "list_repos"},
			refused: map[string]string{
				"gh.delete_repo":      `gh.delete_repo: denied by the rule deny = "*.delete*" of bridge "gh"`,
				"gh.repos.delete":     `gh.repos.delete: denied by the rule deny = "*.delete*" of bridge "gh"`,
				"gh.admin.users.list": `gh.admin.users.list: denied by the rule deny = "admin.*" of bridge "gh"`,
			},
		},
		"allow": {
			policy:  Policy{Allow: []string{"list_*", "get_*"}},
			visible: []string{"get_repo", "list_repos"},
			refused: map[string]string{
				"gh.create_issue": `gh.create_issue: not allowed by namespace "gh": allow = ["list_*", "get_*"] matches none of its names`,
			},
		},
		"deny wins over allow": {
			policy:  Policy{Allow: []string{"*"}, Deny: []string{"gh.create_*"}},
			visible: []string{"admin", "delete_repo", "get_repo", "list_repos", "repos"},
			refused: map[string]string{"gh.create_issue": `gh.create_issue: denied by the rule deny = "gh.create_*" of namespace "gh"`},
		},
		"read-only": {
			policy:  Policy{ReadOnly: true, Source: `mcp_server "gh"`},
			visible: []string{"admin", "get_repo", "list_repos"},
			refused: map[string]string{"gh.delete_repo": `gh.delete_repo: not read-only, and mcp_server "gh" has allow_read_only = true`},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, called := policyRouter(t, tt.policy)
			names, err := r.dir(t.Context(), "gh")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.visible, names); diff != "" {
				t.Errorf("dir (-want +got):\n%s", diff)
			}
			for path, want := range tt.refused {
				_, err := serve(t, r, "call", `{"path":"`+path+`"}`)
				if re := remote(t, err); re.Type != "PermissionError" || re.Message != want {
					t.Errorf("%s: %s: %s, want PermissionError: %s", path, re.Type, re.Message, want)
				}
				short := strings.TrimPrefix(path, "gh.")
				if found := r.search(t.Context(), short); len(found) != 0 {
					t.Errorf("search(%q) finds a refused tool: %v", short, found)
				}
				if doc, _ := r.help(t.Context(), "gh", false); strings.Contains(doc.(string), short[strings.LastIndex(short, ".")+1:]+"()") {
					t.Errorf("help(gh) shows %s:\n%s", path, doc)
				}
				if got := r.inspect(t.Context(), []string{path}); !cmp.Equal(got[path], map[string]string{"error": "'" + path + "' not found"}) {
					t.Errorf("inspect(%s): %v", path, got[path])
				}
			}
			if len(*called) != 0 {
				t.Errorf("refused calls reached the bridge: %v", *called)
			}
			for _, v := range tt.visible {
				if v == "admin" || v == "repos" {
					continue
				}
				if got, err := serve(t, r, "call", `{"path":"gh.`+v+`"}`); err != nil || got != `"ok"` {
					t.Errorf("allowed %s: %s %v", v, got, err)
				}
			}
		})
	}
}

// max_tool_calls: an execution's calls past the budget fail with an error
// naming the key; the next execution starts afresh; sbx's discovery does
// not count.
func TestPolicyBudget(t *testing.T) {
	t.Parallel()
	r, called := policyRouter(t, Policy{MaxCalls: 2, Source: `bridge "gh"`})
	e := r.Begin(t.Context(), "", "")
	for range 2 {
		if _, err := serve(t, r, "call", `{"path":"gh.list_repos"}`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := serve(t, r, "call", `{"path":"sbx.search","args":["repo"]}`); err != nil {
		t.Fatal(err)
	}
	_, err := serve(t, r, "call", `{"path":"gh.get_repo","task_id":"t1"}`)
	want := `tool call budget spent: this execution has made its 2 calls to gh (max_tool_calls = 2 of bridge "gh"); the next execution starts a new budget`
	if re := remote(t, err); re.Type != "PermissionError" || re.Message != want {
		t.Errorf("over budget: %s: %s", re.Type, re.Message)
	}
	if len(*called) != 2 {
		t.Errorf("calls that reached the bridge: %v", *called)
	}
	e.End("ok", "", "")
	r.Begin(t.Context(), "", "")
	if _, err := serve(t, r, "call", `{"path":"gh.list_repos"}`); err != nil {
		t.Errorf("a new execution has a new budget: %v", err)
	}
}

func TestCheckPattern(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"*.delete*": "",
		"":          "must not be empty",
		"[a-":       `"[a-" is not a glob pattern: syntax error in pattern`,
	} {
		got := ""
		if err := CheckPattern(p); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckPattern(%q) = %q, want %q", p, got, want)
		}
	}
}
