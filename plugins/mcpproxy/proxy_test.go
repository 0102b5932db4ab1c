package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

func TestTools(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, goServer(t, "basic"))

	names := toolNames(t, c)
	for _, want := range []string{"sub", "echo_text", "json", "notify", "grow", "die"} {
		if !slices.Contains(names, want) {
			t.Errorf("tool %q missing from %v", want, names)
		}
	}
	sub := findTool(t, c, "sub")
	diff(t, "sub's parameters, in the schema's order", []string{"zeta", "alpha"}, sub.Params)
	diff(t, "sub's description", "Subtracts alpha from zeta.", sub.Description)
	if !strings.Contains(string(sub.InputSchema), `"properties":{"zeta"`) {
		t.Errorf("input schema not as the server wrote it: %s", sub.InputSchema)
	}
	if !strings.Contains(string(sub.OutputSchema), `"result"`) {
		t.Errorf("output schema: %s", sub.OutputSchema)
	}

	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`MCP server "go-basic"`, "gotest v1", "A server for the proxy's tests."} {
		if !strings.Contains(d.Description, want) {
			t.Errorf("description lacks %q:\n%s", want, d.Description)
		}
	}
}

func TestResults(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, goServer(t, "basic"))
	for _, tc := range []struct {
		tool, args string
		want       any
	}{
		{"sub", `{"zeta": 10, "alpha": 3}`, 7.0},                       // {"result": x} is x
		{"echo_text", `{"text": "hi"}`, "hi"},                          // one text block: the text
		{"json", `{}`, map[string]any{"k": []any{1.0, 2.0}, "s": "x"}}, // JSON text: its value
		{"number_text", `{}`, "42"},                                    // text that is a number stays text
		{"nothing", ``, nil},                                           // no content
		{"env", `{"name": "NOT_SET_ANYWHERE"}`, nil},                   // structured {"result": null}
		{"blocks", `{}`, []any{
			map[string]any{"type": "text", "text": "a picture:"},
			map[string]any{"type": "image", "mimeType": "image/png", "data": map[string]any{"__b64__": "iVBORw=="}},
			map[string]any{"type": "resource", "resource": map[string]any{
				"uri": "file:///x.bin", "mimeType": "application/octet-stream", "blob": map[string]any{"__b64__": "AAE="}}},
		}},
	} {
		diff(t, tc.tool+"("+tc.args+")", tc.want, callValue(t, c, tc.tool, tc.args))
	}

	e := callError(t, c, "fail", `{}`)
	diff(t, "isError", &sdk.ToolError{Code: sdk.CodeInternal, Message: "it broke: disk full"}, e)
	e = callError(t, c, "sub", `{"zeta": 1}`)
	diff(t, "missing argument", &sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: `missing required argument "alpha"`}, e)
	if e = callError(t, c, "sub", `[1, 2]`); e.Code != sdk.CodeInvalidArgument {
		t.Errorf("arguments not an object: %+v", e)
	}
}

// TestEnvironment: a stdio server gets a default PATH, its own env and the
// loopback probe, and nothing else of the proxy's environment.
func TestEnvironment(t *testing.T) {
	t.Setenv("MCPPROXY_TEST_SECRET", "s3cret")
	c, _ := startProxy(t, goServer(t, "basic"))
	for name, want := range map[string]any{
		"PATH":                 sdk.DefaultPath,
		ProbeEnv:               "1",
		serverModeEnv:          "basic",
		"MCPPROXY_TEST_SECRET": nil,
		"HOME":                 nil,
	} {
		if name == "PATH" {
			exe, _ := os.Executable()
			want = exe[:strings.LastIndex(exe, "/")] + ":" + sdk.DefaultPath
		}
		diff(t, "env "+name, want, callValue(t, c, "env", `{"name": "`+name+`"}`))
	}
}

var threeSteps = []sdktest.Progress{
	{Progress: 1, Total: 3, Message: "step 1"},
	{Progress: 2, Total: 3, Message: "step 2"},
	{Progress: 3, Total: 3, Message: "step 3"},
}

func TestTaskEvents(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, goServer(t, "basic"))
	for range 5 { // the notifications race the result: try it a few times
		var rec sdktest.Recorder
		res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "notify", Arguments: json.RawMessage(`{}`), TaskID: "t1", Events: &rec})
		if err != nil || res.IsError {
			t.Fatalf("notify: %v %+v", err, res)
		}
		diff(t, "progress", threeSteps, rec.ProgressReports())
		diff(t, "log", []string{"[info] plain message", "[warning] db: structured"}, rec.Lines())
	}
	// A call that is not a task asks for no progress.
	var rec sdktest.Recorder
	if _, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "notify", Arguments: json.RawMessage(`{}`), Events: &rec}); err != nil {
		t.Fatal(err)
	}
	if len(rec.ProgressReports()) != 0 {
		t.Errorf("progress without a task: %v", rec.ProgressReports())
	}
}

func TestListChanged(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, goServer(t, "basic"))
	if slices.Contains(toolNames(t, c), "grown") {
		t.Fatal("grown before grow")
	}
	diff(t, "grow", "grew", callValue(t, c, "grow", `{}`))
	waitFor(t, "the new tool", func() bool {
		names := toolNames(t, c)
		return slices.Contains(names, "grown") && !slices.Contains(names, "json")
	})
	diff(t, "grown", "new", callValue(t, c, "grown", `{}`))
	diff(t, "grown's description", "Added at run time.", findTool(t, c, "grown").Description)
	if e := callError(t, c, "json", `{}`); e.Code != sdk.CodeNotFound {
		t.Errorf("removed tool: %+v", e)
	}
}

// TestRestart: a server that dies fails the call in flight with a message
// naming it; the next call starts it again.
func TestRestart(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, goServer(t, "basic"))
	pid := callValue(t, c, "pid", `{}`)
	e := callError(t, c, "die", `{}`)
	if e.Code != sdk.CodeUnavailable || !strings.Contains(e.Message, `MCP server "go-basic"`) ||
		!strings.Contains(e.Message, "exit status 3") || !strings.Contains(e.Message, "dying on purpose") {
		t.Errorf("die: %+v", e)
	}
	if got := callValue(t, c, "pid", `{}`); got == pid {
		t.Errorf("not restarted: pid %v", got)
	}
	diff(t, "after the restart", 7.0, callValue(t, c, "sub", `{"zeta": 10, "alpha": 3}`))
}

// TestRestartFails: while the server cannot be started again, its tools
// stay and their calls say why; once it can, the next call starts it.
func TestRestartFails(t *testing.T) {
	t.Parallel()
	block := filepath.Join(t.TempDir(), "block")
	cfg := goServer(t, "basic")
	cfg["env"].(map[string]string)[blockEnv] = block
	c, _ := startProxy(t, cfg)
	callError(t, c, "die", `{}`)
	os.WriteFile(block, nil, 0o644)
	e := callError(t, c, "sub", `{"zeta": 1, "alpha": 1}`)
	if e.Code != sdk.CodeUnavailable || !strings.Contains(e.Message, "exit status 1") || !strings.Contains(e.Message, "blocked by") {
		t.Errorf("restart failed: %+v", e)
	}
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) == 0 || !strings.Contains(d.Description, "is not available (a call tries to start it again)") {
		t.Errorf("while down: %d tools, %q", len(d.Tools), d.Description)
	}
	os.Remove(block)
	diff(t, "back up", 0.0, callValue(t, c, "sub", `{"zeta": 1, "alpha": 1}`))
}

func TestCancel(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, goServer(t, "basic"))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	res, err := c.CallTool(ctx, &sdk.CallToolRequest{Name: "wait", Arguments: json.RawMessage(`{}`)})
	if err == nil && (res.Error == nil || (res.Error.Code != sdk.CodeCancelled && res.Error.Code != sdk.CodeTimeout)) {
		t.Errorf("wait: %+v %+v", res, res.Error)
	}
	// The session survives a cancelled call.
	diff(t, "after a cancel", "hi", callValue(t, c, "echo_text", `{"text": "hi"}`))
}

// TestLoopbackProbe: a stdio server that exits 0 at once (as parselbox
// does when PARSELBOX_MCP_PROBE is set) makes the bridge decline (the host
// leaves the namespace out), saying why; it is not started again.
func TestLoopbackProbe(t *testing.T) {
	t.Parallel()
	c, p, err := configureProxy(t, goServer(t, "probe"))
	var de *sdk.DeclineError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, `MCP server "go-probe" is Parselbox itself`) || !strings.Contains(de.Reason, ProbeEnv) {
		t.Fatalf("Configure: %v, want a DeclineError", err)
	}
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) != 0 || !strings.Contains(d.Description, "is skipped") || !strings.Contains(d.Description, ProbeEnv) {
		t.Errorf("probe: %d tools, %q", len(d.Tools), d.Description)
	}
	p.mu.Lock()
	first := p.lastTry
	p.mu.Unlock()
	time.Sleep(2 * retryInterval) // a server that failed would now be tried again
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	tried := p.lastTry
	p.mu.Unlock()
	if !tried.Equal(first) {
		t.Errorf("a skipped server was tried again (last try %v, first %v)", tried, first)
	}
}

// TestLoopbackName: a server whose serverInfo.name is Parselbox is
// skipped, over stdio and over HTTP.
func TestLoopbackName(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer("parselbox") }, nil))
	t.Cleanup(srv.Close)
	for name, cfg := range map[string]map[string]any{
		"stdio": goServer(t, "parselbox"),
		"http":  {"name": "self", "type": "http", "url": srv.URL},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _, err := configureProxy(t, cfg)
			var de *sdk.DeclineError
			if !errors.As(err, &de) || !strings.Contains(de.Reason, `serverInfo.name "Parselbox"`) {
				t.Fatalf("Configure: %v, want a DeclineError", err)
			}
			d, err := c.Describe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Tools) != 0 || !strings.Contains(d.Description, `serverInfo.name "Parselbox"`) {
				t.Errorf("%d tools, %q", len(d.Tools), d.Description)
			}
		})
	}
}

// TestHTTP reaches a go-sdk server over streamable HTTP, with headers.
func TestHTTP(t *testing.T) {
	t.Parallel()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer("basic") }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, _ := startProxy(t, map[string]any{"name": "remote", "url": srv.URL, "headers": map[string]string{"Authorization": "Bearer t0ken"}})
	diff(t, "sub's parameters over HTTP", []string{"zeta", "alpha"}, findTool(t, c, "sub").Params)
	diff(t, "sub(10, 3)", 7.0, callValue(t, c, "sub", `{"zeta": 10, "alpha": 3}`))
	var rec sdktest.Recorder
	if _, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "notify", Arguments: json.RawMessage(`{}`), TaskID: "t", Events: &rec}); err != nil {
		t.Fatal(err)
	}
	diff(t, "progress over HTTP", threeSteps, rec.ProgressReports())
	diff(t, "log over HTTP", []string{"[info] plain message", "[warning] db: structured"}, rec.Lines())

	// Without the header, the server refuses: no tools, and the reason.
	c2, _ := startProxy(t, map[string]any{"name": "anon", "url": srv.URL})
	d, err := c2.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) != 0 || !strings.Contains(d.Description, "not available") {
		t.Errorf("without the token: %d tools, %q", len(d.Tools), d.Description)
	}
}

// TestUnavailable: a server that cannot start leaves the bridge up without
// tools, saying why; a bad entry is a configuration error.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	c, _ := startProxy(t, map[string]any{"name": "ghost", "command": "no-such-mcp-server"})
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) != 0 || !strings.Contains(d.Description, `command "no-such-mcp-server" not found in PATH`) {
		t.Errorf("%d tools, %q", len(d.Tools), d.Description)
	}
	c, _ = startProxy(t, map[string]any{"name": "crash", "command": "/bin/sh", "args": []string{"-c", "echo oops >&2; exit 2"}})
	if d, _ = c.Describe(t.Context()); !strings.Contains(d.Description, "exit status 2") || !strings.Contains(d.Description, "oops") {
		t.Errorf("crash: %q", d.Description)
	}

	for name, cfg := range map[string]string{
		"no command or url": `{"name": "x"}`,
		"both":              `{"name": "x", "command": "a", "url": "http://h"}`,
		"bad type":          `{"name": "x", "type": "ws", "url": "ws://h"}`,
		"bad url":           `{"name": "x", "url": "ftp://h"}`,
		"unknown key":       `{"name": "x", "command": "a", "cwd": "/"}`,
		"bad env":           `{"name": "x", "command": "a", "env": {"A=B": "c"}}`,
	} {
		err := newProxy(sdktest.Logger(t)).Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(cfg)})
		var ce *sdk.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *sdk.ConfigError", name, err)
		}
	}
}

// TestRetry: a server that was down when the bridge started is reached by
// a later Describe (in the background), and its tools appear.
func TestRetry(t *testing.T) {
	t.Parallel()
	var handler http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer("basic") }, nil)
	ready := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ready:
			handler.ServeHTTP(w, r)
		default:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	c, _ := startProxy(t, map[string]any{"name": "late", "url": srv.URL})
	if n := len(toolNames(t, c)); n != 0 {
		t.Fatalf("%d tools before the server is up", n)
	}
	close(ready)
	waitFor(t, "the tools of a server that came up", func() bool { return slices.Contains(toolNames(t, c), "sub") })
}

// TestSubprocess runs the proxy as a real plugin process.
func TestSubprocess(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := sdktest.Start(t, exec.Command(exe))
	raw, _ := json.Marshal(goServer(t, "basic"))
	if err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: raw}); err != nil {
		t.Fatal(err)
	}
	diff(t, "sub over a plugin", 7.0, callValue(t, c, "sub", `{"zeta": 10, "alpha": 3}`))
	var rec sdktest.Recorder
	if _, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "notify", Arguments: json.RawMessage(`{}`), TaskID: "t", Events: &rec}); err != nil {
		t.Fatal(err)
	}
	diff(t, "log through the plugin", []string{"[info] plain message", "[warning] db: structured"}, rec.Lines())
	if err := c.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkCall measures one call through the proxy (gRPC, in-process) to
// a stdio MCP server (the go-sdk test server, a subprocess) and back.
func BenchmarkCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p := newProxy(sdktest.Logger(b))
	c := sdktest.NewHarness(b, p)
	raw, _ := json.Marshal(map[string]any{"name": "bench", "command": exe,
		"env": map[string]string{serverModeEnv: "basic", "GORACE": "atexit_sleep_ms=0"}})
	if err := c.Configure(b.Context(), &sdk.ConfigureRequest{Config: raw}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.shutdown(context.Background()) })
	req := &sdk.CallToolRequest{Name: "echo_text", Arguments: json.RawMessage(`{"text": "x"}`)}
	for b.Loop() {
		if res, err := c.CallTool(b.Context(), req); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
