package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// The test binary doubles as the bridge: started as a plugin (by sdktest or
// by a host, which set go-plugin's magic cookie), it serves.
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		main()
		return
	}
	// The race detector otherwise sleeps 1 s in every plugin exit.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestPluginSubprocess drives the bridge as a real plugin process.
func TestPluginSubprocess(t *testing.T) {
	t.Parallel()
	c := sdktest.Start(t, exec.Command(testBinary(t)))

	err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"max_outputs":1}`)})
	var ce *sdk.ConfigError
	if !errors.As(err, &ce) || ce.Key != "max_outputs" || ce.Message != `unknown key (did you mean "max_output"?)` {
		t.Errorf("Configure with an unknown key: %v, want a *sdk.ConfigError naming it", err)
	}
	configure(t, c, map[string]any{"command": "sh", "env": map[string]string{"WHO": "plugin"}})

	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var tools [][]string
	for _, tool := range d.Tools {
		tools = append(tools, append([]string{tool.Name}, tool.Params...))
	}
	if diff := cmp.Diff([][]string{{"exec", "command", "timeout"}, {"shell", "first_command"}}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	var got execOut
	call(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: `echo "hi $WHO"; echo oops >&2; exit 2`})}, &got)
	if diff := cmp.Diff(execOut{Exit: 2, Stdout: "hi plugin\n", Stderr: "oops\n"}, got); diff != "" {
		t.Errorf("exec (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := startSession(t, ctx, c, shellIn{FirstCommand: "x=21"})
	s.send(t, "echo $((x*2))")
	waitLine(t, &s.rec, "42")
	s.send(t, "sleep 1000 & echo pids $$ $!")
	line := waitLine(t, &s.rec, "pids ")
	cancel()
	failed(t, s.result(t), sdk.CodeCancelled)
	for _, pid := range pids(t, line) {
		waitGone(t, pid)
	}
}

// TestFromPython runs the bridge as a plugin of a real host and drives it
// from Python in the sandbox: exec, a timeout, and live sessions with send,
// tail, cancel and exit.
func TestFromPython(t *testing.T) {
	t.Parallel()
	cfg := host.Config{
		RuntimeDir: testenv.Runtime(t).Dir,
		CacheDir:   testenv.CacheDir(t),
		Logger:     testenv.Logger(t),
		Bridges: map[string]host.BridgeConfig{
			// No env: the plugin gets nothing of the host's environment
			// (GORACE only keeps the race detector quick).
			"sh": {Plugin: testBinary(t), Env: []string{"GORACE"}, Config: map[string]any{"timeout": 30}},
		},
	}
	sb, err := host.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })

	run := func(code string) any {
		t.Helper()
		r, err := sb.Execute(t.Context(), code)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if r.Error != nil {
			t.Fatalf("%s: %s\n%s", r.Error.Type, r.Error.Message, r.Error.Traceback)
		}
		var v any
		if err := json.Unmarshal(r.Output, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(what string, want, got any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}

	check("exec", map[string]any{"exit": 3.0, "stdout": "out\n", "stderr": "err\n"},
		run(`sh.exec("echo out; echo err >&2; exit 3")`))
	check("default environment", map[string]any{"exit": 0.0, "stdout": sdk.DefaultPath + "\n[]\n/usr/bin/python3\n", "stderr": ""},
		run(`sh.exec('echo "$PATH"; echo "[$HOME]"; command -v python3')`))
	check("timeout", []any{"TimeoutError", "command timed out after 1s; it was killed with its process group\n--- stdout ---\nstarted"},
		run(`
try:
    sh.exec("echo started; sleep 1000", timeout=1)
    r = None
except TimeoutError as e:
    r = [type(e).__name__, str(e)]
r`))

	// A live bash session: state persists between sends; cancel kills it
	// with its children.
	got := run(`
import asyncio

async def until(t, pred):
    for _ in range(800):  # 40 s, within the execution's timeout
        if pred(t.tail(1)):
            return t.tail(1)
        await asyncio.sleep(0.05)
    return "timed out waiting; log: " + t.tail(20)

t = sh.shell.task()
t.send("x=21")
t.send("echo $((x*2))")
answer = await until(t, lambda line: line == "42")
t.send("sleep 1000 & echo pids $$ $!")
line = await until(t, lambda line: line.startswith("pids "))
[answer, line, t.status().state]`).([]any)
	check("session", []any{"42", "running"}, []any{got[0], got[2]})
	line, _ := got[1].(string)
	procs := pids(t, line)
	check("cancel", []any{true, "cancelled", "cancelled"}, run(`[t.cancel(), t.status().state, t.error()]`))
	for _, pid := range procs {
		waitGone(t, pid)
	}

	// A session that ends by itself ends its task with the exit status.
	// first_command execs Python in place of bash: the session is Python.
	// (-q: without the banner, which Python prints on stderr, no other
	// complete line can follow "42".)
	got = run(`
p = sh.shell.task("exec python3 -qi")
p.send("x = 21")
p.send("print(x * 2)")
answer = await until(p, lambda line: line == "42")
p.send("exit(5)")
result = await p
[answer, result, p.status().state, p.tail(10).splitlines()[0]]`).([]any)
	check("python session", []any{"42", map[string]any{"exit": 5.0}, "done"}, got[:3])
	if first, _ := got[3].(string); !strings.HasPrefix(first, "shell started: bash (pid ") {
		t.Errorf("first log line: %q", first)
	}

	// Called synchronously, a session gets first_command and end of input.
	check("synchronous shell", map[string]any{"exit": 4.0}, run(`sh.shell("exit 4")`))

	// help(sh) describes the tools.
	help, _ := run(`sh.__doc__`).(string)
	for _, want := range []string{"exec(command, timeout=None)", "shell(first_command=None)"} {
		if !strings.Contains(help, want) {
			t.Errorf("help(sh) lacks %q:\n%s", want, help)
		}
	}
}
