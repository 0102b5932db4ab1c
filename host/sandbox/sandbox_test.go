package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/testenv"
)

// start boots a sandbox for t with the shared cache; opts may adjust options.
func start(t *testing.T, opts sandbox.Options) *sandbox.Supervisor {
	t.Helper()
	rt, err := sandbox.FindRuntime(testenv.Runtime(t).Dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Runtime = rt
	if opts.CacheDir == "" {
		opts.CacheDir = testenv.CacheDir(t)
	}
	if opts.Workspace == "" {
		opts.Workspace = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = testenv.Logger(t)
	}
	if opts.BootTimeout == 0 {
		// A deadline, not a measure: a cold boot took over 60 s (the
		// default) on a 2-core machine under a load of 50.
		opts.BootTimeout = 5 * time.Minute
	}
	sb, err := sandbox.Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// run executes code and fails the test on a host error.
func run(t *testing.T, sb *sandbox.Supervisor, code string) *sandbox.Result {
	t.Helper()
	return runTimeout(t, sb, code, time.Minute)
}

func runTimeout(t *testing.T, sb *sandbox.Supervisor, code string, timeout time.Duration) *sandbox.Result {
	t.Helper()
	r, err := sb.Exec(t.Context(), code, timeout)
	if err != nil {
		t.Fatalf("Exec(%q): %v", code, err)
	}
	return r
}

// output decodes a successful result's output.
func output(t *testing.T, r *sandbox.Result) any {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("unexpected error: %s: %s\n%s", r.Error.Type, r.Error.Message, r.Error.Traceback)
	}
	var v any
	if err := json.Unmarshal(r.Output, &v); err != nil {
		t.Fatalf("output %q: %v", r.Output, err)
	}
	return v
}

func wantError(t *testing.T, r *sandbox.Result, typ, contains string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("want %s, got output %s", typ, r.Output)
	}
	if r.Error.Type != typ || !strings.Contains(r.Error.Message, contains) {
		t.Fatalf("want %s containing %q, got %s: %s", typ, contains, r.Error.Type, r.Error.Message)
	}
}

func TestExecResult(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	tests := []struct {
		name, code string
		want       any
	}{
		{"last expression", "x = 10 + 32\nx", 42.0},
		{"no expression", "y = 1", nil},
		{"trailing semicolon", "1;", nil},
		{"string", "'héllo'", "héllo"},
		{"nested", "{'a': [1, 2.5, None, True], 3: (4, 5)}", map[string]any{"a": []any{1.0, 2.5, nil, true}, "3": []any{4.0, 5.0}}},
		{"nan and inf", "[float('nan'), float('inf')]", []any{nil, nil}},
		{"bytes", "b'ab'", map[string]any{"__b64__": "YWI="}},
		{"date", "import datetime; datetime.date(2023, 10, 27)", "2023-10-27"},
		{"set", "sorted({3, 1, 2})", []any{1.0, 2.0, 3.0}},
		{"not serializable", "class C:\n    def __repr__(self): return 'C()'\nC()", map[string]any{"type": "not_serializable", "repr": "C()"}},
		{"circular", "a = [1]; a.append(a); a", []any{1.0, map[string]any{"type": "circular_reference", "repr": "[1, [...]]"}}},
		{"shared is not circular", "s = [1]; [s, s]", []any{[]any{1.0}, []any{1.0}}},
		{"__json__", "class T:\n    def __json__(self): return {'ok': 1}\nT()", map[string]any{"ok": 1.0}},
		{"shadowed builtins", "str = None; repr = None; isinstance = None; [1, 'a']", []any{1.0, "a"}},
		{"top-level await", "import asyncio\nawait asyncio.sleep(0.01)\n'slept'", "slept"},
	}
	for _, tt := range tests {
		// Sequential: they share one interpreter.
		r := run(t, sb, tt.code)
		if diff := cmp.Diff(tt.want, output(t, r)); diff != "" {
			t.Errorf("%s: output (-want +got):\n%s", tt.name, diff)
		}
	}
	// shadowed builtins above must not leak into later executions' results
	run(t, sb, "del str, repr, isinstance")

	// Exactly, as JSON text: a big int, and a JS object with no Python form.
	if r := run(t, sb, "2**64 + 1"); string(r.Output) != "18446744073709551617" {
		t.Errorf("big int: %s", r.Output)
	}
	r := run(t, sb, "import js\nfrom pyodide.ffi import create_proxy\njs.setTimeout(create_proxy(lambda: None), 10**6)")
	if v, ok := output(t, r).(map[string]any); !ok || v["type"] != "not_serializable" {
		t.Errorf("a JS timer object: %s", r.Output)
	}
}

func TestExecStateAndStreams(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "counter = 1")
	if got := output(t, run(t, sb, "counter += 1\ncounter")); got != 2.0 {
		t.Errorf("state not kept: counter = %v", got)
	}
	r := run(t, sb, "print('hello'); import sys; print('oops', file=sys.stderr); print('no newline', end='')")
	if r.Stdout != "hello\nno newline" || r.Stderr != "oops\n" {
		t.Errorf("stdout %q, stderr %q", r.Stdout, r.Stderr)
	}
	if r := run(t, sb, "1"); r.Stdout != "" {
		t.Errorf("stdout of a previous execution leaked: %q", r.Stdout)
	}
	// A module written by the agent is importable from the workspace.
	run(t, sb, "open('helpers.py', 'w').write('def double(x):\\n    return 2 * x\\n')")
	if got := output(t, run(t, sb, "from helpers import double\ndouble(21)")); got != 42.0 {
		t.Errorf("workspace module: %v", got)
	}
}

func TestExecErrors(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	r := run(t, sb, "def f():\n    raise ValueError('bad value')\nf()")
	wantError(t, r, "ValueError", "bad value")
	tb := r.Error.Traceback
	for _, want := range []string{`File "scratchpad.py", line 3`, `File "scratchpad.py", line 2, in f`, "raise ValueError('bad value')", "ValueError: bad value"} {
		if !strings.Contains(tb, want) {
			t.Errorf("traceback lacks %q:\n%s", want, tb)
		}
	}
	for _, internal := range []string{"_pyodide", "<parselbox>", "webloop"} {
		if strings.Contains(tb, internal) {
			t.Errorf("traceback shows runtime frames (%s):\n%s", internal, tb)
		}
	}
	wantError(t, run(t, sb, "1/0"), "ZeroDivisionError", "division by zero")
	r = run(t, sb, "def (:")
	wantError(t, r, "SyntaxError", "")
	wantError(t, run(t, sb, "undefined_name"), "NameError", "undefined_name")
	// The interpreter is fine afterwards.
	if got := output(t, run(t, sb, "'alive'")); got != "alive" {
		t.Errorf("after errors: %v", got)
	}
}

func TestFilesReported(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws})
	r := run(t, sb, `
import os
open('a.txt', 'w').write('A')
os.makedirs('sub/dir', exist_ok=True)
open('sub/dir/b.bin', 'wb').write(b'B')
open('gone.txt', 'w').write('x'); os.remove('gone.txt')
open('moved.txt', 'w').write('m'); os.rename('moved.txt', 'renamed.txt')
os.makedirs('.parselbox/tasks', exist_ok=True); open('.parselbox/tasks/t.log', 'w').write('log')
open('/tmp/scratch.txt', 'w').write('not a workspace file')
`)
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	want := []string{"/workspace/a.txt", "/workspace/sub/dir/b.bin", "/workspace/renamed.txt"}
	if diff := cmp.Diff(want, r.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "sub", "dir", "b.bin")); err != nil || string(b) != "B" {
		t.Errorf("file on disk: %q, %v", b, err)
	}
	// Modifying an existing file reports it again; reading does not.
	r = run(t, sb, "open('a.txt', 'a').write('more'); open('renamed.txt').read()")
	if diff := cmp.Diff([]string{"/workspace/a.txt"}, r.Files); diff != "" {
		t.Errorf("files after append (-want +got):\n%s", diff)
	}
}

func TestTimeoutKeepsState(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "kept = 'yes'")
	for _, tc := range []struct{ name, code string }{
		{"cpu loop", "n = 0\nwhile True: n += 1"},
		{"time.sleep", "import time; time.sleep(60)"},
		{"asyncio.sleep", "import asyncio\nawait asyncio.sleep(60)"},
	} {
		// The error type and the kept state prove that the soft interrupt
		// worked: a hard one would be a TimeoutError, and state lost.
		r := runTimeout(t, sb, tc.code, time.Second)
		wantError(t, r, "KeyboardInterrupt", "timed out after 1s")
		if got := output(t, run(t, sb, "kept")); got != "yes" {
			t.Errorf("%s: state lost: %v", tc.name, got)
		}
	}
	if sb.Ready().Snapshot != true {
		t.Errorf("not booted from the snapshot")
	}
}

// The interrupt is a real KeyboardInterrupt raised where the code waits: a
// handler sees it, and code that handles it finishes normally.
func TestKeyboardInterruptCatchable(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	r := runTimeout(t, sb, "import time\ntry:\n    time.sleep(30)\n    caught = False\nexcept KeyboardInterrupt:\n    caught = True\ncaught", time.Second)
	if got := output(t, r); got != true {
		t.Errorf("KeyboardInterrupt did not reach the user's handler: caught = %v", got)
	}
}

var waitFor = testenv.WaitFor

// poll polls cond until it holds or a deadline passes, and says which.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(2 * time.Minute) // ends with the event; long for a loaded machine
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func TestHardTimeoutRestarts(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{Grace: time.Second})
	run(t, sb, "kept = 1")
	pid := sb.PID()
	// Swallowing every KeyboardInterrupt defeats the soft interrupt.
	r := runTimeout(t, sb, "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n        while True: pass\n    except BaseException:\n        pass", time.Second)
	wantError(t, r, sandbox.ErrorTypeTimeout, "all state was lost")
	if got := output(t, run(t, sb, "'works'")); got != "works" {
		t.Errorf("after restart: %v", got)
	}
	if sb.PID() == pid {
		t.Errorf("process was not replaced")
	}
	wantError(t, run(t, sb, "kept"), "NameError", "kept")
}

func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws})
	run(t, sb, "kept = 1")
	victim := sb.PID()
	// Killed once the execution is running (it writes a marker), not a
	// fixed time after sending it.
	go func() {
		waitFile(t, filepath.Join(ws, "running"))
		_ = syscall.Kill(victim, syscall.SIGKILL)
	}()
	r := run(t, sb, "import time; open('running', 'w').close(); time.sleep(30)")
	wantError(t, r, sandbox.ErrorTypeCrash, "killed")
	if !strings.Contains(r.Error.Message, "state was lost") {
		t.Errorf("crash message does not say state was lost: %s", r.Error.Message)
	}
	if got := output(t, run(t, sb, "1 + 1")); got != 2.0 {
		t.Errorf("after crash: %v", got)
	}
	// A crash between executions is noticed too, and the sandbox restarted
	// without waiting for the next execution.
	pid := sb.PID()
	_ = syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "a restart", func() bool { p := sb.PID(); return p != 0 && p != pid })
	if got := output(t, run(t, sb, "'next'")); got != "next" {
		t.Errorf("after idle crash: %v", got)
	}
}

func TestInterruptByContext(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		waitFile(t, filepath.Join(ws, "running"))
		cancel()
	}()
	r, err := sb.Exec(ctx, "open('running', 'w').close()\nwhile True: pass", 0)
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, r, "KeyboardInterrupt", "interrupted")
	if got := output(t, run(t, sb, "'after'")); got != "after" {
		t.Errorf("after interrupt: %v", got)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	info, err := sb.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Pyodide != "314.0.7" || !strings.HasPrefix(info.Python, "3.") || info.WasmMemoryBytes <= 0 || info.RSSMB <= 0 {
		t.Errorf("info: %+v", info)
	}
}

// A fatal error of the Python runtime ("Pyodide already fatally failed") is
// reported for the execution in flight, and the sandbox restarts.
func TestFatalRuntimeErrorRestarts(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "kept = 1")
	pid := sb.PID()
	r := run(t, sb, "import pyodide_js\npyodide_js._api.fatal_error(RuntimeError('boom'))")
	wantError(t, r, sandbox.ErrorTypeCrash, "all state was lost")
	waitFor(t, "a restart", func() bool { p := sb.PID(); return p != 0 && p != pid })
	if got := output(t, run(t, sb, "'fresh'")); got != "fresh" {
		t.Errorf("after a fatal error: %v", got)
	}
	wantError(t, run(t, sb, "kept"), "NameError", "kept")
}

// An interpreter that can no longer run code (broken here on purpose by
// the guest: every compilation fails, or the recursion limit is the depth
// that executions run at) is noticed after the first error it gives: that
// execution says that it was restarted and state was lost, the next one
// works and says nothing more.
func TestWedgedInterpreterRestarts(t *testing.T) {
	t.Parallel()
	causes := make(chan string, 10)
	sb := start(t, sandbox.Options{OnRestart: func(cause string) { causes <- cause }})
	const hook = "import sys\ndef h(event, args):\n    if event == 'compile': raise %s\nsys.addaudithook(h)"
	for _, c := range []struct{ name, wedge, typ string }{
		{"MemoryError on every compilation", fmt.Sprintf(hook, "MemoryError"), "MemoryError"},
		{"SystemError on every compilation", fmt.Sprintf(hook, "SystemError('wedged')"), "SystemError"},
		{"recursion limit at the depth of executions",
			"import sys\nf, d = sys._getframe(), 0\nwhile f: f, d = f.f_back, d + 1\nsys.setrecursionlimit(d + 1)", "RecursionError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := run(t, sb, "kept = 1\n"+c.wedge); r.Error != nil {
				t.Fatalf("wedging: %s: %s", r.Error.Type, r.Error.Message)
			}
			pid := sb.PID()
			wantError(t, run(t, sb, "6 * 7"), c.typ, "the sandbox was restarted and all state was lost.")
			r := run(t, sb, "6 * 7")
			if got := output(t, r); got != 42.0 || r.Note != "" {
				t.Errorf("after the restart: %v, note %q", got, r.Note)
			}
			if sb.PID() == pid {
				t.Errorf("the process was not replaced")
			}
			select { // told before the restart that the execution waited for
			case cause := <-causes:
				if cause != "wedged" {
					t.Errorf("restarted for %q", cause)
				}
			default:
				t.Errorf("OnRestart was not told")
			}
			wantError(t, run(t, sb, "kept"), "NameError", "kept")
		})
	}
}

// Code that raises those errors itself, or runs out of memory or stack the
// ordinary way, leaves an interpreter that runs code: it keeps its state.
func TestErrorsThatKeepState(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{MemoryMB: 256})
	run(t, sb, "kept = 1")
	pid := sb.PID()
	for _, c := range []struct{ code, typ string }{
		{"raise MemoryError()", "MemoryError"},
		{"raise SystemError('mine')", "SystemError"},
		{"raise RecursionError", "RecursionError"},
		{"def f(): return f()\nf()", "RecursionError"},
		{"b = bytearray(1 << 30)", "MemoryError"},
	} {
		r := run(t, sb, c.code)
		wantError(t, r, c.typ, "")
		if strings.Contains(r.Error.Message, "state was lost") {
			t.Errorf("%q: %s", c.code, r.Error.Message)
		}
	}
	caught := "def f(): return f()\ntry:\n    f()\nexcept RecursionError:\n    kept += 1\nkept"
	if got := output(t, run(t, sb, caught)); got != 2.0 || sb.PID() != pid {
		t.Errorf("state after the errors: kept = %v; pid %d, was %d", got, sb.PID(), pid)
	}
}

// The host's RSS watchdog kills a process above its hard limit, even when
// the allocation is within the WebAssembly cap, and the sandbox restarts.
func TestHardMemoryLimit(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{MemoryMB: 1024, HardMemoryMB: 400})
	// Only the kill ends it (the RSS watchdog's, or the test's timeout).
	r := run(t, sb, "import time\nb = b'x' * (500 * 1024 * 1024)\nwhile True: time.sleep(1)")
	wantError(t, r, "MemoryError", "memory limit (400 MB)")
	if !strings.Contains(r.Error.Message, "state was lost") {
		t.Errorf("message: %s", r.Error.Message)
	}
	if got := output(t, run(t, sb, "'fine'")); got != "fine" {
		t.Errorf("after the kill: %v", got)
	}
}
