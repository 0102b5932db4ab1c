package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/sdk"
)

// fakeBridge is a collaborator of the router under test: a description and
// a func that answers calls.
type fakeBridge struct {
	desc *sdk.Description
	call func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error)
}

func (f *fakeBridge) Describe(context.Context) (*sdk.Description, error)     { return f.desc, nil }
func (f *fakeBridge) Configure(context.Context, *sdk.ConfigureRequest) error { return nil }
func (f *fakeBridge) CallTool(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	return f.call(ctx, req)
}

var echoDesc = &sdk.Description{
	Name:        "echo",
	Description: "Echoes.",
	Namespaces:  []sdk.NamespaceInfo{{Path: "deep.er", Description: "Deeper."}},
	Tools: []sdk.ToolInfo{
		{Name: "say", Description: "Says it.", Params: []string{"text", "times"},
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"result":{"type":"string"}},"x-internal":1}`)},
		{Name: "get-user.v2", Description: "Not an identifier."},
		{Name: "deep.er.probe", Params: []string{"x"}},
		{Name: "deep.ping"},
	},
}

// echoRouter routes to a bridge that returns the arguments it got.
func echoRouter(t *testing.T, opts Options) (*Router, *[]*sdk.CallToolRequest) {
	t.Helper()
	var mu sync.Mutex
	var got []*sdk.CallToolRequest
	b := &fakeBridge{desc: echoDesc, call: func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		return &sdk.CallToolResult{Content: req.Arguments}, nil
	}}
	if opts.TaskDir == "" {
		opts.TaskDir = t.TempDir()
	}
	r := New(opts)
	if err := r.Add(t.Context(), "echo", "plugin", b); err != nil {
		t.Fatal(err)
	}
	return r, &got
}

func serve(t *testing.T, r *Router, method, params string) (string, error) {
	t.Helper()
	v, err := r.ServeSandbox(t.Context(), method, json.RawMessage(params))
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(v)
	return string(b), nil
}

func TestCallBinding(t *testing.T) {
	t.Parallel()
	r, _ := echoRouter(t, Options{})
	tests := map[string]struct{ params, want, errType string }{
		"kwargs":       {`{"path":"echo.say","kwargs":{"text":"hi"}}`, `{"text":"hi"}`, ""},
		"positional":   {`{"path":"echo.say","args":["hi",2]}`, `{"text":"hi","times":2}`, ""},
		"mixed":        {`{"path":"echo.say","args":["hi"],"kwargs":{"times":3}}`, `{"text":"hi","times":3}`, ""},
		"bytes":        {`{"path":"echo.say","args":[{"__b64__":"AP8="}]}`, `{"text":"AP8="}`, ""},
		"nested bytes": {`{"path":"echo.say","kwargs":{"text":[{"__b64__":"AA=="},{"k":{"__b64__":"AQ=="}}]}}`, `{"text":["AA==",{"k":"AQ=="}]}`, ""},
		"python name":  {`{"path":"echo.get_user.v2"}`, `{}`, ""},
		"original":     {`{"path":"echo.get-user.v2"}`, `{}`, ""},
		"nested":       {`{"path":"echo.deep.er.probe","args":[1]}`, `{"x":1}`, ""},
		"too many":     {`{"path":"echo.say","args":[1,2,3]}`, "", "ValueError"},
		"duplicate":    {`{"path":"echo.say","args":["a"],"kwargs":{"text":"b"}}`, "", "ValueError"},
		"unknown tool": {`{"path":"echo.nope"}`, "", "AttributeError"},
		"unknown ns":   {`{"path":"nope.say"}`, "", "AttributeError"},
		"namespace":    {`{"path":"echo.deep"}`, "", "AttributeError"},
	}
	for name, tt := range tests {
		got, err := serve(t, r, "call", tt.params)
		if tt.errType != "" {
			var re *sandbox.RemoteError
			if !errors.As(err, &re) || re.Type != tt.errType {
				t.Errorf("%s: want %s, got %v", name, tt.errType, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %s, %v; want %s", name, got, err, tt.want)
		}
	}
}

func TestToolErrorsMapToPython(t *testing.T) {
	t.Parallel()
	codes := map[sdk.ErrorCode]string{
		sdk.CodePermission: "PermissionError", sdk.CodeTimeout: "TimeoutError", sdk.CodeInvalidArgument: "ValueError",
		sdk.CodeNotFound: "AttributeError", sdk.CodeInternal: "RuntimeError", sdk.CodeCancelled: "CancelledError",
		sdk.CodeUnavailable: "ConnectionError", "something-new": "RuntimeError",
	}
	for code, want := range codes {
		b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "f"}}}, call: func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Error: &sdk.ToolError{Code: code, Message: "the bridge's words"}}, nil
		}}
		r := New(Options{})
		r.Add(t.Context(), "b", "plugin", b)
		_, err := serve(t, r, "call", `{"path":"b.f"}`)
		var re *sandbox.RemoteError
		if !errors.As(err, &re) || re.Type != want || re.Message != "the bridge's words" {
			t.Errorf("%s: got %v, want %s", code, err, want)
		}
	}
	// A failure to reach the bridge names it.
	b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "f"}}}, call: func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, errors.New("connection refused")
	}}
	r := New(Options{})
	r.Add(t.Context(), "gone", "plugin", b)
	_, err := serve(t, r, "call", `{"path":"gone.f"}`)
	var re *sandbox.RemoteError
	if !errors.As(err, &re) || re.Type != "ConnectionError" || !strings.Contains(re.Message, `bridge "gone"`) {
		t.Errorf("unreachable bridge: %v", err)
	}
}

type refuser struct{ calls []string }

func (h *refuser) PreToolCall(_ context.Context, c *Call) error {
	h.calls = append(h.calls, c.Path)
	if strings.HasSuffix(c.Path, "ping") {
		return errors.New("no pinging")
	}
	return nil
}

func (h *refuser) PostToolCall(context.Context, *Call, json.RawMessage) error { return nil }

func TestHookRefusal(t *testing.T) {
	t.Parallel()
	h := &refuser{}
	r, got := echoRouter(t, Options{Hooks: h})
	_, err := serve(t, r, "call", `{"path":"echo.deep.ping"}`)
	var re *sandbox.RemoteError
	if !errors.As(err, &re) || re.Type != "PermissionError" || re.Message != "no pinging" {
		t.Errorf("refused call: %v", err)
	}
	if len(*got) != 0 {
		t.Errorf("the refused call reached the bridge")
	}
	serve(t, r, "call", `{"path":"echo.say","args":["x"]}`)
	if diff := cmp.Diff([]string{"echo.deep.ping", "echo.say"}, h.calls); diff != "" {
		t.Errorf("hook saw (-want +got):\n%s", diff)
	}
}

func TestHelpTree(t *testing.T) {
	t.Parallel()
	r, _ := echoRouter(t, Options{})
	got, err := r.help(t.Context(), "echo", false)
	if err != nil {
		t.Fatal(err)
	}
	want := `Description: Echoes.

Methods:
├── say(text: str = None, times: int = None) -> str  # Says it.
├── deep
│   ├── ping()
│   └── er
│       └── probe(x = None)
└── get_user
    └── v2()  # Not an identifier.`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	doc, _ := r.help(t.Context(), "echo.say", false)
	wantDoc := map[string]string{"tool": `echo.say(text: str = None, times: int = None) -> str

Says it.

JSON Schemas: sbx.inspect('echo.say').`}
	if diff := cmp.Diff(wantDoc, doc); diff != "" {
		t.Errorf("tool doc (-want +got):\n%s", diff)
	}
	if sub, _ := r.help(t.Context(), "echo.deep.er", false); !strings.HasPrefix(sub.(string), "Description: Deeper.") {
		t.Errorf("nested namespace doc: %v", sub)
	}
	if names, _ := r.dir(t.Context(), "echo.deep"); !cmp.Equal(names, []string{"er", "ping"}) {
		t.Errorf("dir: %v", names)
	}
}

func TestSearchAndInspect(t *testing.T) {
	t.Parallel()
	r, _ := echoRouter(t, Options{})
	got := r.search(t.Context(), "SAYS")
	want := map[string][]map[string]any{"echo (echo)": {{"path": "echo.say", "description": "Says it."}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
	if got := r.search(t.Context(), "probe|ping"); len(got["echo (echo)"]) != 2 {
		t.Errorf("regex search: %v", got)
	}
	if got := r.search(t.Context(), "[unclosed"); len(got) != 0 {
		t.Errorf("invalid regex as text: %v", got)
	}
	if got := r.search(t.Context(), "times"); len(got["echo (echo)"]) != 1 {
		t.Errorf("search by parameter: %v", got)
	}
	if got := r.search(t.Context(), "inspect"); len(got) != 0 {
		t.Errorf("sbx's own tools are searched: %v", got)
	}
	ins := r.inspect(t.Context(), []string{"echo.deep", "echo.say", "echo.zzz", "other.x"})
	if !cmp.Equal(ins["echo.deep"], map[string]any{"methods": []string{"ping"}, "namespaces": []string{"er"}}) {
		t.Errorf("inspect namespace: %v", ins["echo.deep"])
	}
	if _, ok := ins["other.x"]; ok || ins["echo.zzz"] == nil {
		t.Errorf("inspect: %v", ins)
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	var deep any = "deep"
	for range 6 {
		deep = map[string]any{"k": deep}
	}
	in := map[string]any{"list": []any{1, 2, 3}, "one": []any{"a"}, "s": strings.Repeat("é", 250), "deep": deep}
	got := Preview(in).(map[string]any)
	if diff := cmp.Diff([]any{1, 2, "...(1 more item)"}, got["list"]); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"a"}, got["one"]); diff != "" {
		t.Errorf("short list (-want +got):\n%s", diff)
	}
	if s := got["s"].(string); len([]rune(s)) != 203 {
		t.Errorf("string cut at %d runes", len([]rune(s)))
	}
	d := got["deep"]
	for range 4 {
		d = d.(map[string]any)["k"]
	}
	if d != "...(max depth reached)" {
		t.Errorf("depth: %v", d)
	}
}

func TestTaskMessagesBeforeTheCallArrives(t *testing.T) {
	t.Parallel()
	received := make(chan string, 3)
	b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "listen"}}}, call: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for range 2 {
			select {
			case m := <-req.Messages():
				received <- string(m)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		req.Log("line one")
		req.Progress(1, 4, "a quarter")
		return &sdk.CallToolResult{Content: json.RawMessage(`"done"`)}, nil
	}}
	dir := t.TempDir()
	r := New(Options{TaskDir: dir})
	r.Add(t.Context(), "b", "plugin", b)
	// The sends overtake the call, as concurrent serving allows.
	for _, m := range []string{`"first"`, `"second"`} {
		if _, err := serve(t, r, "task", `{"op":"send","id":"b_1","message":`+m+`}`); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := serve(t, r, "call", `{"path":"b.listen","task_id":"b_1"}`); err != nil || got != `"done"` {
		t.Fatalf("call: %s %v", got, err)
	}
	if a, b := <-received, <-received; a != `"first"` || b != `"second"` {
		t.Errorf("order: %s, %s", a, b)
	}
	log, _ := readFile(dir + "/b_1.log")
	if log != "line one\n[1/4] (25%) a quarter\n" {
		t.Errorf("log: %q", log)
	}
	// After the task ended, a send is an error and a cancel is a no-op.
	if _, err := serve(t, r, "task", `{"op":"send","id":"b_1","message":"late"}`); err == nil {
		t.Error("send to a finished task succeeded")
	}
	if _, err := serve(t, r, "task", `{"op":"cancel","id":"b_1"}`); err != nil {
		t.Errorf("cancel of a finished task: %v", err)
	}
}

// Sends and cancels to task ids that no call takes (the guest can make ids
// up) keep at most maxWaitingSlots slots waiting: past it, a send fails
// and a cancel does nothing, and a call that takes a slot frees it.
func TestTaskSlotsForMadeUpIDs(t *testing.T) {
	t.Parallel()
	b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "quick"}}}, call: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: json.RawMessage(`1`)}, nil
	}}
	r := New(Options{TaskDir: t.TempDir()})
	r.Add(t.Context(), "b", "plugin", b)
	for i := range maxWaitingSlots {
		op := []string{"send", "cancel"}[i%2]
		if _, err := serve(t, r, "task", fmt.Sprintf(`{"op":%q,"id":"made_up_%d","message":1}`, op, i)); err != nil {
			t.Fatalf("%s %d: %v", op, i, err)
		}
	}
	var re *sandbox.RemoteError
	if _, err := serve(t, r, "task", `{"op":"send","id":"one_more","message":1}`); !errors.As(err, &re) || re.Type != sdk.CodeNotFound.Python() {
		t.Errorf("a send past %d waiting slots: %v", maxWaitingSlots, err)
	}
	if _, err := serve(t, r, "task", `{"op":"cancel","id":"one_more"}`); err != nil {
		t.Errorf("a cancel past %d waiting slots: %v", maxWaitingSlots, err)
	}
	if n := len(r.tasks.byID); n != maxWaitingSlots {
		t.Errorf("%d slots", n)
	}
	if _, err := serve(t, r, "call", `{"path":"b.quick","task_id":"made_up_0"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := serve(t, r, "task", `{"op":"send","id":"one_more","message":1}`); err != nil {
		t.Errorf("a send once a call took a slot: %v", err)
	}
}

// A cancel reaches a call that is running in its bridge: the test cancels
// only once the bridge has been entered (with a live context), so a cancel
// that arrives before the call (which begin applies at once) cannot pass it.
func TestTaskCancelReachesTheBridge(t *testing.T) {
	t.Parallel()
	entered := make(chan error, 1)
	sawCancel := make(chan struct{})
	b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "wait"}}}, call: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		entered <- ctx.Err()
		<-ctx.Done()
		close(sawCancel)
		return nil, ctx.Err()
	}}
	r := New(Options{TaskDir: t.TempDir()})
	r.Add(t.Context(), "b", "plugin", b)
	errc := make(chan error, 1)
	go func() {
		_, err := r.ServeSandbox(t.Context(), "call", json.RawMessage(`{"path":"b.wait","task_id":"b_2"}`))
		errc <- err
	}()
	if err := <-entered; err != nil {
		t.Fatalf("the bridge was entered with a done context (%v): the call did not run before the cancel", err)
	}
	if _, err := serve(t, r, "task", `{"op":"cancel","id":"b_2"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sawCancel:
	case <-time.After(time.Minute): // a deadline for a hang, not a measure of speed
		t.Fatal("the bridge never saw the cancellation")
	}
	var re *sandbox.RemoteError
	if err := <-errc; !errors.As(err, &re) || re.Type != "CancelledError" {
		t.Errorf("cancelled call: %v", err)
	}
}

// A cancel that overtakes its call (the requests are served concurrently)
// still cancels it: the call starts with a done context.
func TestTaskCancelBeforeTheCall(t *testing.T) {
	t.Parallel()
	entered := make(chan error, 1)
	b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "wait"}}}, call: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		entered <- ctx.Err()
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	r := New(Options{TaskDir: t.TempDir()})
	r.Add(t.Context(), "b", "plugin", b)
	if _, err := serve(t, r, "task", `{"op":"cancel","id":"b_3"}`); err != nil {
		t.Fatal(err)
	}
	_, err := serve(t, r, "call", `{"path":"b.wait","task_id":"b_3"}`)
	var re *sandbox.RemoteError
	if !errors.As(err, &re) || re.Type != "CancelledError" {
		t.Errorf("cancelled call: %v", err)
	}
	if err := <-entered; !errors.Is(err, context.Canceled) {
		t.Errorf("the call started with context error %v, want context.Canceled", err)
	}
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// A plugin's tools may change (an MCP server's list_changed): the router
// describes it again when a call misses or discovery finds it stale.
func TestDynamicBridgeRefresh(t *testing.T) {
	var mu sync.Mutex
	tools := []sdk.ToolInfo{{Name: "old"}}
	b := &dynBridge{fakeBridge: fakeBridge{call: func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: json.RawMessage(`"` + req.Name + `"`)}, nil
	}}, tools: func() []sdk.ToolInfo { mu.Lock(); defer mu.Unlock(); return tools }}
	r := New(Options{})
	if err := r.Add(t.Context(), "mcp", "mcp", b); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	tools = []sdk.ToolInfo{{Name: "old"}, {Name: "new", Description: "appeared later"}}
	mu.Unlock()
	time.Sleep(missAge + 50*time.Millisecond)
	if got, err := serve(t, r, "call", `{"path":"mcp.new"}`); err != nil || got != `"new"` {
		t.Errorf("call to a new tool: %s %v", got, err)
	}
	mu.Lock()
	tools = []sdk.ToolInfo{{Name: "new", Description: "appeared later"}, {Name: "newer", Description: "appeared later still"}}
	mu.Unlock()
	old := discoveryAge
	discoveryAge = 0
	defer func() { discoveryAge = old }()
	if got := r.search(t.Context(), "later"); len(got["mcp (mcp)"]) != 2 {
		t.Errorf("search after a change: %v", got)
	}
	// An in-process bridge is described once.
	if names, _ := r.dir(t.Context(), "sbx"); len(names) != len(toolkitTools) {
		t.Errorf("sbx dir: %v", names)
	}
}

type dynBridge struct {
	fakeBridge
	tools func() []sdk.ToolInfo
	n     atomic.Int32
}

func (d *dynBridge) Describe(context.Context) (*sdk.Description, error) {
	d.n.Add(1)
	return &sdk.Description{Tools: d.tools()}, nil
}

// help(ns) shows a long description (an MCP bridge's, with the server's
// instructions) cut to its first paragraph, with a line that says how many lines are left
// and how to read them; help(ns, full=True) shows it whole. A short one
// is whole either way. A long default value is "..." in the lists.
func TestHelpLongDescription(t *testing.T) {
	t.Parallel()
	intro := "MCP server \"docs\": 1 tool."
	instructions := "# Server instructions\n\n" + strings.Repeat("- Always check the roots first before any call.\n", 15) + "- Last line."
	r := New(Options{})
	r.Add(t.Context(), "docs", "mcp", &fakeBridge{desc: &sdk.Description{Description: intro + "\n\n" + instructions,
		Tools: []sdk.ToolInfo{{Name: "read", Description: "Reads a page.", Params: []string{"page", "site"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"page":{"type":"integer","default":1},` +
				`"site":{"type":"string","default":"https://docs.example.com/reference/latest/"}}}`)}}}})
	short, err := serve(t, r, "help", `{"path":"docs"}`)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	_ = json.Unmarshal([]byte(short), &got)
	want := "Description: " + intro + "\n(17 more lines: help(docs, full=True))\n\n" +
		"Methods:\n└── read(page: int = 1, site: str = ...)  # Reads a page."
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("help(docs) (-want +got):\n%s", diff)
	}
	long, err := serve(t, r, "help", `{"path":"docs","full":true}`)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(long), &got)
	if !strings.Contains(got, instructions+"\n\nMethods:\n└── read(page: int = 1, site: str = ...)") || strings.Contains(got, "full=True") {
		t.Errorf("help(docs, full=True):\n%s", got)
	}
	// A long default shows as "..." in the lists of signatures, whole in
	// help(ns.tool).
	if got, _ := r.help(t.Context(), "docs.read", false); !strings.HasPrefix(got.(map[string]string)["tool"],
		"docs.read(page: int = 1, site: str = 'https://docs.example.com/reference/latest/')\n\nReads a page.") {
		t.Errorf("help(docs.read): %v", got)
	}
	if got := r.Signatures(t.Context(), 0); !strings.Contains(got, `    def read(page: int = 1, site: str = ...): """Reads a page."""`) {
		t.Errorf("Signatures:\n%s", got)
	}
}

// A bridge with no tools still answers help (with its description) and dir.
func TestEmptyNamespace(t *testing.T) {
	t.Parallel()
	r := New(Options{})
	r.Add(t.Context(), "down", "mcp", &fakeBridge{desc: &sdk.Description{Description: "The server is not reachable."}})
	if got, _ := r.help(t.Context(), "down", false); got != "Description: The server is not reachable.\n\nNo tools." {
		t.Errorf("help: %q", got)
	}
	if got, err := serve(t, r, "dir", `{"path":"down"}`); err != nil || got != "[]" {
		t.Errorf("dir: %s %v", got, err)
	}
}

// A tool whose Python name would be "task" (the background-call accessor)
// or a keyword gets a trailing "_", so that it can be called at all.
func TestReservedToolNames(t *testing.T) {
	t.Parallel()
	b := &fakeBridge{desc: &sdk.Description{Tools: []sdk.ToolInfo{{Name: "task"}, {Name: "import"}, {Name: "a-b"}, {Name: "a_b"}}},
		call: func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: json.RawMessage(`"` + req.Name + `"`)}, nil
		}}
	r := New(Options{})
	r.Add(t.Context(), "ns", "plugin", b)
	for path, want := range map[string]string{"ns.task_": `"task"`, "ns.import_": `"import"`, "ns.a_b": `"a_b"`, "ns.a-b": `"a-b"`} {
		if got, err := serve(t, r, "call", `{"path":"`+path+`"}`); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", path, got, err, want)
		}
	}
}

// sbx.search adds what a plugin bridge's own search finds (the GraphQL
// bridge finds a mutation by a name that is no tool's).
func TestSearchAsksTheBridgesOwnSearch(t *testing.T) {
	t.Parallel()
	desc := &sdk.Description{Name: "graphql", Tools: []sdk.ToolInfo{
		{Name: "graphql", Description: "Run a query.", Params: []string{"query"}, InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
		{Name: "search", Description: "Find operations.", Params: []string{"pattern"}, InputSchema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
	}}
	var asked []string
	var mu sync.Mutex
	b := &fakeBridge{desc: desc, call: func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mu.Lock()
		asked = append(asked, req.Name+" "+string(req.Arguments))
		mu.Unlock()
		if strings.Contains(string(req.Arguments), "createUser") {
			return &sdk.CallToolResult{Content: json.RawMessage(`[{"name":"createUser","type":"mutation"}]`)}, nil
		}
		return &sdk.CallToolResult{Content: json.RawMessage(`[]`)}, nil
	}}
	r := New(Options{TaskDir: t.TempDir()})
	if err := r.Add(t.Context(), "gql", "plugin", b); err != nil {
		t.Fatal(err)
	}
	// An MCP server's tool named search is not called: it may do anything.
	mcp := &fakeBridge{desc: desc, call: func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		t.Error("an MCP server's search was called")
		return &sdk.CallToolResult{Content: json.RawMessage(`[]`)}, nil
	}}
	if err := r.Add(t.Context(), "web", "mcp", mcp); err != nil {
		t.Fatal(err)
	}
	got := r.search(t.Context(), "createUser")
	want := map[string][]map[string]any{"gql (graphql)": {{
		"path": "gql.search", "description": "what gql.search('createUser') finds",
		"results": []any{map[string]any{"name": "createUser", "type": "mutation"}},
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`search {"pattern":"createUser"}`}, asked); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	// Nothing found by either: no entry.
	if got := r.search(t.Context(), "nothing-here"); len(got) != 0 {
		t.Errorf("search for nothing: %v", got)
	}
}
