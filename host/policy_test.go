package host_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
)

// Tool policies from real Python: a refused tool is absent from help(),
// dir(), sbx.info() and sbx.search, a call to it by path raises PermissionError naming
// the rule, and the call budget ends an execution's calls with an error
// that names max_tool_calls; for an in-process value and a plugin alike.
func TestToolPolicies(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tp := host.BridgeConfig{Plugin: exe, Config: map[string]any{"marker": t.TempDir() + "/m", "label": "x"}}
	tp.Deny = []string{"*crash*", "files.*"}
	tp.MaxToolCalls = 3
	sb := newSandbox(t, host.Config{
		Context: map[string]any{"mission": &mission{Nav: &nav{}}},
		ContextPolicies: map[string]host.ToolPolicy{
			"mission": {Allow: []string{"add", "nav.*"}},
		},
		Bridges: map[string]host.BridgeConfig{"tp": tp},
	})

	for _, tc := range []struct{ code, want string }{
		{"mission.fail('x')", `mission.fail: not allowed by context "mission": allow = ["add", "nav.*"] matches none of its names`},
		{"tp.crash()", `tp.crash: denied by the rule deny = "*crash*" of bridge "tp"`},
		{"tp.files.label()", `tp.files.label: denied by the rule deny = "files.*" of bridge "tp"`},
	} {
		if e := raised(t, exec(t, sb, tc.code), "PermissionError"); e.Message != tc.want {
			t.Errorf("%s: %q, want %q", tc.code, e.Message, tc.want)
		}
	}
	if got := value(t, exec(t, sb, "[mission.add(1, 2), mission.nav.distance({'x': 0, 'y': 0}, {'x': 3, 'y': 4})]")); !cmp.Equal(got, []any{3.0, 5.0}) {
		t.Errorf("allowed tools: %v", got)
	}
	if got := value(t, exec(t, sb, "sorted(dir(mission))")); !cmp.Equal(got, []any{"add", "nav"}) {
		t.Errorf("dir(mission): %v", got)
	}
	help := value(t, exec(t, sb, "help(tp)")).(string)
	if strings.Contains(help, "crash") || strings.Contains(help, "label") || !strings.Contains(help, "echo(") {
		t.Errorf("help(tp) shows refused tools or lacks allowed ones:\n%s", help)
	}
	if info, _ := json.Marshal(value(t, exec(t, sb, "sbx.info()"))); strings.Contains(string(info), "crash") || strings.Contains(string(info), "label") ||
		!strings.Contains(string(info), "tp.* (") {
		t.Errorf("sbx.info() shows refused tools or lacks the namespace: %s", info)
	}
	found := value(t, exec(t, sb, "sbx.search('crash|label|fail')"))
	if !cmp.Equal(found, map[string]any{}) {
		t.Errorf("search finds refused tools: %v", found)
	}

	// max_tool_calls = 3 per execution, tasks included.
	r := exec(t, sb, `out = [tp.echo('a'), await tp.echo.task('b').wait(60)]
out.append(tp.echo('c'))
try:
    tp.echo('d')
except PermissionError as e:
    out.append(str(e))
out`)
	want := []any{"a", map[string]any{}, "c",
		`tool call budget spent: this execution has made its 3 calls to tp (max_tool_calls = 3 of bridge "tp"); the next execution starts a new budget`}
	got := value(t, r).([]any)
	if len(got) == 4 {
		got[1] = map[string]any{} // the task's status, whatever it holds
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
	if got := value(t, exec(t, sb, "tp.echo('again')")); got != "again" {
		t.Errorf("the next execution has a new budget: %v", got)
	}
}
