package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
)

// Point is a parameter object: a dict from Python arrives as this struct.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// mission is an in-process bridge with a nested namespace.
type mission struct {
	Nav *nav

	running, maxRunning atomic.Int32
	cancelled           atomic.Int32
	received            chan string
}

type nav struct{}

func (nav) Distance(a, b Point) float64     { return math.Hypot(b.X-a.X, b.Y-a.Y) }
func (nav) ParamNames() map[string][]string { return map[string][]string{"Distance": {"a", "b"}} }

func (*mission) Add(a, b int) int        { return a + b }
func (*mission) Norm(p Point) float64    { return math.Hypot(p.X, p.Y) }
func (*mission) Echo(data []byte) []byte { return data }
func (*mission) Fail(msg string) error   { return errors.New("Kaboom! " + msg) }
func (*mission) Forbidden() error        { return sdk.Errorf(sdk.CodePermission, "not for you") }
func (*mission) Weird() map[string]any   { return map[string]any{"ok": true} }
func (*mission) ToolDocs() map[string]string {
	return map[string]string{"Add": "Adds two numbers.", "": "Mission control."}
}
func (*mission) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "b"}, "Norm": {"p"}, "Fail": {"msg"}, "Echo": {"data"}, "Sleep": {"seconds"}, "Listen": {"seconds"}}
}

// Sleep logs, counts how many run at once, and stops when cancelled.
func (m *mission) Sleep(ctx context.Context, seconds float64) (string, error) {
	n := m.running.Add(1)
	defer m.running.Add(-1)
	for {
		cur := m.maxRunning.Load()
		if n <= cur || m.maxRunning.CompareAndSwap(cur, n) {
			break
		}
	}
	req := inproc.Request(ctx)
	req.Log(fmt.Sprintf("sleeping %gs", seconds))
	select {
	case <-time.After(time.Duration(seconds * float64(time.Second))):
		req.Log("woke up")
		return "rested", nil
	case <-ctx.Done():
		m.cancelled.Add(1)
		return "", ctx.Err()
	}
}

// Listen logs every message sent into it until cancelled or timed out.
func (m *mission) Listen(ctx context.Context, seconds float64) ([]string, error) {
	req := inproc.Request(ctx)
	var got []string
	deadline := time.After(time.Duration(seconds * float64(time.Second)))
	for {
		select {
		case msg := <-req.Messages():
			var s string
			json.Unmarshal(msg, &s)
			got = append(got, s)
			req.Log("got: " + s)
			if s == "stop" {
				return got, nil
			}
		case <-deadline:
			return got, nil
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

func newMissionSandbox(t *testing.T, hooks ...host.Hook) (*host.Sandbox, *mission) {
	t.Helper()
	m := &mission{Nav: &nav{}}
	sb := newSandbox(t, host.Config{
		Context: map[string]any{
			"mission": m,
			"double":  func(x int) int { return 2 * x },
		},
		Globals: map[string]any{"threshold": 0.5, "name": "apollo"},
		Hooks:   hooks,
	})
	return sb, m
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	sb, _ := newMissionSandbox(t)
	for _, tc := range []struct {
		code string
		want any
	}{
		{"mission.add(a=1, b=2)", 3.0},
		{"mission.add(40, 2)", 42.0},
		{"mission.add(40, b=2)", 42.0},
		{"mission.norm(p={'x': 3, 'y': 4})", 5.0},
		{"mission.norm({'x': 6, 'y': 8})", 10.0},
		{"mission.nav.distance({'x': 0, 'y': 0}, {'x': 3, 'y': 4})", 5.0},
		{"double(21)", 42.0},
		{"mission.weird()", map[string]any{"ok": true}},
		{"[mission.add(i, i) for i in range(3)]", []any{0.0, 2.0, 4.0}},
		{"sorted([3, 1, 2], key=lambda x: mission.add(0, -x))", []any{3.0, 2.0, 1.0}},
		{"threshold + 1, name", []any{1.5, "apollo"}},
		{"import base64; base64.b64decode(mission.echo(b'\\x00\\xff'))", map[string]any{"__b64__": "AP8="}},
	} {
		if diff := cmp.Diff(tc.want, value(t, exec(t, sb, tc.code))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.code, diff)
		}
	}
	// Calls work from an imported module too: namespaces are builtins.
	exec(t, sb, "open('lib.py', 'w').write('def f():\\n    return mission.add(1, 1)\\n')")
	if got := value(t, exec(t, sb, "import lib; lib.f()")); got != 2.0 {
		t.Errorf("from a module: %v", got)
	}
}

func TestToolErrors(t *testing.T) {
	t.Parallel()
	sb, _ := newMissionSandbox(t)
	for _, tc := range []struct {
		code, typ, msg string
	}{
		{"mission.fail('now')", "RuntimeError", "Kaboom! now"},
		{"mission.forbidden()", "PermissionError", "not for you"},
		{"mission.norm(p={'x': 'three', 'y': 4})", "ValueError", `"x"`},
		{"mission.add(1)", "ValueError", `"b"`},
		{"mission.add(1, 2, 3)", "ValueError", "positional"},
		{"mission.add(1, a=2)", "ValueError", "multiple values"},
		{"mission.nope()", "AttributeError", "Tool 'mission.nope' not found"},
		{"mission._secret", "AttributeError", "has no attribute '_secret'"},
		{"nonexistent_ns", "NameError", "nonexistent_ns"},
	} {
		r := exec(t, sb, tc.code)
		e := raised(t, r, tc.typ)
		if !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: message %q lacks %q", tc.code, e.Message, tc.msg)
		}
		if strings.Contains(e.Traceback, "<parselbox>") {
			t.Errorf("%s: traceback shows the bootstrap:\n%s", tc.code, e.Traceback)
		}
	}
	// Python can catch them like any exception.
	if got := value(t, exec(t, sb, "try:\n    mission.forbidden()\nexcept PermissionError as e:\n    r = str(e)\nr")); got != "not for you" {
		t.Errorf("caught: %v", got)
	}
}

func TestTasks(t *testing.T) {
	t.Parallel()
	sb, m := newMissionSandbox(t)

	// A task returns at once, runs in the background and survives the execution.
	r := exec(t, sb, "t = mission.sleep.task(0.5)\n[t.status()['state'], t.done(), t.name]")
	if diff := cmp.Diff([]any{"running", false, "mission.sleep"}, value(t, r)); diff != "" {
		t.Errorf("fresh task (-want +got):\n%s", diff)
	}
	r = exec(t, sb, "s = await t.wait(5)\n[s.state, s['result'], t.result(), t.tail(5).splitlines(), await t]")
	if diff := cmp.Diff([]any{"done", "rested", "rested", []any{"sleeping 0.5s", "woke up"}, "rested"}, value(t, r)); diff != "" {
		t.Errorf("finished task (-want +got):\n%s", diff)
	}

	// gather runs them concurrently on the host.
	m.maxRunning.Store(0)
	r = exec(t, sb, "import time\nt0 = time.time()\nres = await asyncio.gather(*[mission.sleep.task(1) for _ in range(20)])\n[len(res), time.time() - t0]")
	got := value(t, r).([]any)
	if got[0] != 20.0 {
		t.Errorf("gather: %v", got)
	}
	if n := m.maxRunning.Load(); n < 20 {
		t.Errorf("only %d of 20 tasks ran at once", n)
	}

	// cancel reaches the tool.
	before := m.cancelled.Load()
	// (once the tool is running: its log says so)
	r = exec(t, sb, `t = mission.sleep.task(30)
for _ in range(3000):
    if t.tail(1) == "sleeping 30s":
        break
    await asyncio.sleep(0.01)
log = t.tail(1)
t.cancel()
await t.wait(60)
[log, t.status().state, t.error()]`)
	if diff := cmp.Diff([]any{"sleeping 30s", "cancelled", "cancelled"}, value(t, r)); diff != "" {
		t.Errorf("cancelled task (-want +got):\n%s", diff)
	}
	waitUntil(t, "the tool to see the cancellation", func() bool { return m.cancelled.Load() > before })
	raised(t, exec(t, sb, "await t"), "CancelledError")

	// send delivers messages in order.
	r = exec(t, sb, "t = mission.listen.task(10)\nfor i in range(5):\n    t.send(f'm{i}')\nt.send('stop')\nawait t")
	if diff := cmp.Diff([]any{"m0", "m1", "m2", "m3", "m4", "stop"}, value(t, r)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}

	// A failed task reports its error; awaiting raises it.
	r = exec(t, sb, "t = mission.fail.task('late')\nawait t.wait()\n[t.status().state, t.error()]")
	if diff := cmp.Diff([]any{"failed", "Kaboom! late"}, value(t, r)); diff != "" {
		t.Errorf("failed task (-want +got):\n%s", diff)
	}
	raised(t, exec(t, sb, "await t"), "RuntimeError")

	// The task logs live in the workspace but are never reported as files.
	r = exec(t, sb, "t = mission.sleep.task(0.1)\nawait t\nt.logfile")
	if len(r.Files) != 0 {
		t.Errorf("task log reported as a file: %v", r.Files)
	}

	// A task id is never given twice in an interpreter: a random draw that
	// repeats one is drawn again (os.urandom made to repeat itself here).
	r = exec(t, sb, `import os
real, draws = os.urandom, [b"\0\0\1", b"\0\0\1", b"\0\0\1", b"\0\0\2"]
os.urandom = lambda n: draws.pop(0) if draws else real(n)
try:
    a = mission.sleep.task(0.01)
    b = mission.sleep.task(0.01)
finally:
    os.urandom = real
await asyncio.gather(a, b)
[a.id.rsplit("_", 1)[1], b.id.rsplit("_", 1)[1], draws]`)
	if diff := cmp.Diff([]any{"000001", "000002", []any{}}, value(t, r)); diff != "" {
		t.Errorf("task ids from repeating draws (-want +got):\n%s", diff)
	}
}

func TestDiscovery(t *testing.T) {
	t.Parallel()
	sb, _ := newMissionSandbox(t)
	// help(ns): the description, then the tree of signatures; how to call
	// a tool is the guide's, not repeated in every namespace's help.
	tree := value(t, exec(t, sb, "help(mission)")).(string)
	if !strings.HasPrefix(tree, "Description: Mission control.") {
		t.Errorf("help(mission) does not start with its description:\n%s", tree)
	}
	for _, want := range []string{"├── add(a: int, b: int) -> int  # Adds two numbers.", "└── nav\n    └── distance("} {
		if !strings.Contains(tree, want) {
			t.Errorf("help(mission) lacks %q:\n%s", want, tree)
		}
	}
	if full := value(t, exec(t, sb, "help(mission, full=True)")); full != tree {
		t.Errorf("help(mission, full=True) of a short description differs:\n%s", full)
	}
	// help(ns.tool): the signature line, then the description; the
	// schemas through sbx.inspect.
	doc := value(t, exec(t, sb, "help(mission.add)")).(string)
	if !strings.HasPrefix(doc, "mission.add(a: int, b: int) -> int\n\nAdds two numbers.\n") {
		t.Errorf("help(mission.add):\n%s", doc)
	}
	addDoc := value(t, exec(t, sb, "sbx.inspect('mission.add')['mission.add']")).(map[string]any)
	if props := addDoc["parameters"].(map[string]any)["properties"].(map[string]any); props["a"] == nil || props["b"] == nil {
		t.Errorf("parameters: %v", addDoc["parameters"])
	}
	if got := value(t, exec(t, sb, "mission.add.__doc__ == help(mission.add)")); got != true {
		t.Errorf("mission.add.__doc__ differs from help(mission.add)")
	}
	if got := value(t, exec(t, sb, "dir(mission)")).([]any); !cmp.Equal(got[:3], []any{"add", "echo", "fail"}) || got[len(got)-1] != "weird" {
		t.Errorf("dir(mission): %v", got)
	}
	if got := value(t, exec(t, sb, "help(double)")).(string); !strings.HasPrefix(got, "double(") {
		t.Errorf("help(double): %v", got)
	}
	guide := value(t, exec(t, sb, "help()")).(string)
	if guide != sb.Prompt() || !strings.Contains(guide, "`mission` (go)") {
		t.Errorf("help() is not the guide naming the namespaces:\n%s", guide)
	}

	found := value(t, exec(t, sb, "sbx.search('distance|norm')")).(map[string]any)
	paths := []string{}
	for _, hit := range found["mission (go)"].([]any) {
		paths = append(paths, hit.(map[string]any)["path"].(string))
	}
	if diff := cmp.Diff([]string{"mission.nav.distance", "mission.norm"}, paths); diff != "" {
		t.Errorf("sbx.search (-want +got):\n%s", diff)
	}
	ins := value(t, exec(t, sb, "sbx.inspect('mission.add', mission.nav, 'mission.nope', 'nowhere.x')")).(map[string]any)
	if ins["mission.add"].(map[string]any)["description"] != "Adds two numbers." {
		t.Errorf("inspect tool: %v", ins["mission.add"])
	}
	if !cmp.Equal(ins["mission.nav"], map[string]any{"methods": []any{"distance"}, "namespaces": []any{}}) {
		t.Errorf("inspect namespace: %v", ins["mission.nav"])
	}
	if _, ok := ins["mission.nope"].(map[string]any)["error"]; !ok {
		t.Errorf("inspect unknown tool: %v", ins)
	}
	if _, ok := ins["nowhere.x"]; ok {
		t.Errorf("unknown namespace not left out: %v", ins)
	}
	info := value(t, exec(t, sb, "sbx.info()")).(map[string]any)
	ctx := info["context"].(map[string]any)
	if diff := cmp.Diff([]any{"double.* (go)", "mission.* (go)", "sbx.* (namespace)"}, sortAny(ctx["namespaces"])); diff != "" {
		t.Errorf("info namespaces (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"name (str)", "threshold (float)"}, ctx["globals"]); diff != "" {
		t.Errorf("info globals (-want +got):\n%s", diff)
	}
	prev := value(t, exec(t, sb, "sbx.preview({'items': list(range(100)), 'text': 'x' * 300, 'a': {'b': {'c': {'d': {'e': 'deep'}}}}})")).(map[string]any)
	if diff := cmp.Diff([]any{0.0, 1.0, "...(98 more items)"}, prev["items"]); diff != "" {
		t.Errorf("preview list (-want +got):\n%s", diff)
	}
	if s := prev["text"].(string); len(s) != 203 || !strings.HasSuffix(s, "...") {
		t.Errorf("preview string: %d chars", len(s))
	}
	if got := prev["a"].(map[string]any)["b"].(map[string]any)["c"].(map[string]any)["d"].(map[string]any)["e"]; got != "...(max depth reached)" {
		t.Errorf("preview depth: %v", got)
	}
	if got := value(t, exec(t, sb, "repr(mission), repr(mission.nav.distance)")); !cmp.Equal(got, []any{"<RemoteNamespace: mission>", "<RemoteTool: mission.nav.distance>"}) {
		t.Errorf("repr: %v", got)
	}
}

func sortAny(v any) []any {
	l, _ := v.([]any)
	out := append([]any(nil), l...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if fmt.Sprint(out[j]) < fmt.Sprint(out[i]) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// recorder is a hook that records events and refuses calls to one path.
type recorder struct {
	host.NopHook
	mu     sync.Mutex
	events []string
	refuse string
}

func (h *recorder) add(e string) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

func (h *recorder) PreExecute(_ context.Context, code string) error {
	h.add("pre_execute")
	if strings.Contains(code, "forbidden_code") {
		return errors.New("no forbidden code")
	}
	return nil
}

func (h *recorder) PostExecute(context.Context, string, *host.Result) error {
	h.add("post_execute")
	return nil
}

func (h *recorder) PreToolCall(_ context.Context, c *host.ToolCall) error {
	h.add("pre_tool_call " + c.Path + " " + string(c.Arguments))
	if c.Path == h.refuse {
		return fmt.Errorf("calls to %s need approval", c.Path)
	}
	return nil
}

func (h *recorder) PostToolCall(_ context.Context, c *host.ToolCall, result json.RawMessage) error {
	h.add("post_tool_call " + c.Path + " " + string(result))
	return nil
}

func TestHooks(t *testing.T) {
	t.Parallel()
	h := &recorder{refuse: "mission.forbidden"}
	sb, _ := newMissionSandbox(t, h)
	exec(t, sb, "mission.add(1, 2)")
	want := []string{"pre_execute", `pre_tool_call mission.add {"a":1,"b":2}`, "post_tool_call mission.add 3", "post_execute"}
	h.mu.Lock()
	if diff := cmp.Diff(want, h.events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	h.mu.Unlock()

	e := raised(t, exec(t, sb, "mission.forbidden()"), "PermissionError")
	if e.Message != "calls to mission.forbidden need approval" {
		t.Errorf("refusal message: %q", e.Message)
	}
	e = raised(t, exec(t, sb, "forbidden_code = 1"), "PermissionError")
	if !strings.Contains(e.Message, "Blocked by hook: no forbidden code") {
		t.Errorf("pre-execute refusal: %q", e.Message)
	}
	if got := value(t, exec(t, sb, "('forbidden' + '_code') in globals()")); got != false {
		t.Errorf("refused code ran")
	}
}

var waitUntil = testenv.WaitFor

// An execution waiting for a tool is interruptible: at the timeout Python
// gets a KeyboardInterrupt, the tool's context is cancelled, and the state
// is kept.
func TestTimeoutWhileWaitingForATool(t *testing.T) {
	t.Parallel()
	m := &mission{Nav: &nav{}}
	sb := newSandbox(t, host.Config{Context: map[string]any{"mission": m}, Timeout: time.Second})
	exec(t, sb, "kept = 'yes'")
	// The error type says that the soft interrupt reached the waiting call
	// (a hard kill would have lost the state, checked below).
	e := raised(t, exec(t, sb, "mission.sleep(60)"), "KeyboardInterrupt")
	if !strings.Contains(e.Message, "timed out after 1s") {
		t.Errorf("message: %s", e.Message)
	}
	waitUntil(t, "the tool to be cancelled", func() bool { return m.cancelled.Load() == 1 })
	if got := value(t, exec(t, sb, "kept")); got != "yes" {
		t.Errorf("state lost: %v", got)
	}
}
