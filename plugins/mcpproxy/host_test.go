package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// accessCode is a value of server-everything's env in TestHost.
const accessCode = "ac-8Fw2Lq9Zr4Tn7Vd1"

// TestHost drives MCP servers from real Python through host.New, with an
// mcp.json: server-everything from npm, the go-sdk test server, and an
// entry that is "Parselbox itself" (it exits at once, as parselbox does
// when the proxy's probe variable is set). This test binary is the
// mcpproxy plugin, found as parselbox-bridge-mcpproxy in a plugin dir.
func TestHost(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	node, index := fixture(t, everythingJS)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "parselbox-bridge-"+host.MCPPlugin)); err != nil {
		t.Fatal(err)
	}
	goEnv := func(mode string) map[string]string {
		return map[string]string{serverModeEnv: mode, "GORACE": "atexit_sleep_ms=0"}
	}
	mcpJSON, err := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{
			"everything": map[string]any{"command": node, "args": []string{index, "stdio"}, "env": map[string]string{"ACCESS_CODE": accessCode}},
			"go-test":    map[string]any{"command": exe, "env": goEnv("basic")},
			"parselbox":  map[string]any{"command": exe, "env": goEnv("probe")},
			"off":        map[string]any{"command": "/nonexistent", "disabled": true},
		},
		"globalShortcut": "Ctrl+Space", // another client's key
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, mcpJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: rt.Dir,
		CacheDir:   testenv.CacheDir(t),
		MCP:        path,
		PluginDirs: []string{dir},
		Logger:     testenv.Logger(t),
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })

	run := func(code string) *host.Result {
		t.Helper()
		r, err := sb.Execute(t.Context(), code)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		return r
	}
	value := func(code string) any {
		t.Helper()
		r := run(code)
		if r.Error != nil {
			t.Fatalf("%s: %s: %s\n%s", code, r.Error.Type, r.Error.Message, r.Error.Traceback)
		}
		var v any
		if err := json.Unmarshal(r.Output, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	raised := func(code, typ string) string {
		t.Helper()
		r := run(code)
		if r.Error == nil || r.Error.Type != typ {
			t.Fatalf("%s: want %s, got %s %+v", code, typ, r.Output, r.Error)
		}
		return r.Error.Message
	}

	for code, want := range map[string]any{
		`everything.echo(message="hi")`:                                     "Echo: hi",
		`everything.get_sum(2, 3)`:                                          "The sum of 2 and 3 is 5.",
		`everything.get_structured_content(location="Chicago")["humidity"]`: 82.0,
		`type(everything.get_tiny_image()[1]["data"]).__name__`:             "bytes",
		`go_test.sub(10, 3)`:                                                7.0, // positional: the schema's order
		`go_test.json()["k"]`:                                               []any{1.0, 2.0},
		`"parselbox" in globals()`:                                          false, // the loopback guard: left out
		`[n for n in sbx.info()["context"]["namespaces"] if "mcp" in n]`:    []any{"everything.* (mcp)", "go_test.* (mcp)"},
		`sbx.search("Echoes back")["everything (mcp)"][0]["path"]`:          "everything.echo",
		// help(ns) leaves the server's long instructions to full=True.
		`[s in help(everything) for s in ("13 tools", "help(everything, full=True)", "Easter Egg", "└── trigger_long_running_operation(")]`: []any{true, true, false, true},
		`"Easter Egg" in help(everything, full=True)`: true,
	} {
		diff(t, code, want, value(code))
	}
	// The server echoes its environment: the value the configuration gave it
	// reaches it, and not Python. The proxy does not take ACCESS_CODE for a
	// credential (its name does not say so); the host takes every value of
	// an MCP server's env for one, and its router removes it.
	env := value(`everything.get_env()`).(map[string]any)
	if env["ACCESS_CODE"] != "[REDACTED]" {
		t.Errorf("get_env()[ACCESS_CODE] = %v", env["ACCESS_CODE"])
	}
	shown := run(`t = everything.get_env.task()
await t
[t.result(), t.tail(20), sbx.inspect("everything.get_env")]`)
	for _, form := range []string{accessCode, base64.StdEncoding.EncodeToString([]byte(accessCode)), hex.EncodeToString([]byte(accessCode))} {
		if strings.Contains(string(shown.Output), form) || strings.Contains(fmt.Sprint(env), form) {
			t.Errorf("Python sees %q, a form of the server's env value", form)
		}
	}
	if msg := raised(`go_test.fail()`, "RuntimeError"); msg != "it broke: disk full" {
		t.Errorf("isError: %q", msg)
	}
	if msg := raised(`go_test.sub(zeta=1)`, "ValueError"); !strings.Contains(msg, `"alpha"`) {
		t.Errorf("missing argument: %q", msg)
	}

	// Progress and logs of a task reach its log.
	got := value(`t = everything.trigger_long_running_operation.task(duration=0.3, steps=3)
r = await t
[r, t.tail(3)]`).([]any)
	diff(t, "progress in the task's log", "[1/3] (33%)\n[2/3] (67%)\n[3/3] (100%)", got[1])
	diff(t, "logs in the task's log", "[3/3] (100%) step 3\n[info] plain message\n[warning] db: structured",
		value(`t = go_test.notify.task()
await t
t.tail(3)`))

	// tools/list_changed: the new tool appears, the removed one goes.
	diff(t, "grown", "new", value(`go_test.grow()
import asyncio
for _ in range(100):
    try:
        r = go_test.grown()
        break
    except AttributeError:
        await asyncio.sleep(0.05)
r`))
	raised(`go_test.json()`, "AttributeError")

	// A server that dies fails the call naming it; the next call restarts it.
	pid := value(`go_test.pid()`)
	if msg := raised(`go_test.die()`, "ConnectionError"); !strings.Contains(msg, `MCP server "go-test"`) || !strings.Contains(msg, "exit status 3") {
		t.Errorf("die: %q", msg)
	}
	if got := value(`go_test.pid()`); got == pid {
		t.Errorf("not restarted: %v", got)
	}
}

// TestHostConfigErrors: MCP configuration problems stop host.New with a
// ConfigError that names the file and line.
func TestHostConfigErrors(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		file string
		want string
	}{
		"no mcpServers": {`{"servers": {}}`, `no "mcpServers" key`},
		"bad entry":     {"{\"mcpServers\": {\n  \"x\": {\"command\": \"a\", \"url\": \"http://h\"}\n}}", `mcp.json:2: mcpServers "x".url: is for http servers; this one is stdio`},
		"bad type":      {"{\"mcpServers\": {\n  \"x\": {\"args\": \"-y\"}\n}}", `mcp.json:2: mcpServers "x": args: must be a list of strings, got a string`},
		"syntax":        {"{\"mcpServers\": {\n  \"x\": {,\n}}", `mcp.json:2: invalid character`},
		"namespace":     {`{"mcpServers": {"my-server": {"command": "a"}, "my_server": {"command": "b"}}}`, `mcpServers "my_server": the namespace "my_server" is also that of mcpServers "my-server" in `},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"), "mcp.json")
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(tc.file), 0o644)
			sb, err := host.New(t.Context(), host.Config{RuntimeDir: rt.Dir, MCP: path})
			if sb != nil {
				sb.Close()
			}
			var ce *host.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("host.New: %v, want a ConfigError containing %q", err, tc.want)
			}
		})
	}
}
