package breakin

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// TestTimeAndMemory runs away with time and memory: each attempt must end
// in an error the agent can read, and the sandbox must answer the next
// execution (with a note when its state was lost).
func TestTimeAndMemory(t *testing.T) {
	t.Parallel()
	sb, _ := newSandbox(t, host.Config{Timeout: 2 * time.Second, Memory: 256})
	next := func(t *testing.T) {
		t.Helper()
		if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
			t.Errorf("the next execution: %v", v)
		}
	}
	for _, c := range []struct{ name, code, want string }{
		{"busy loop", "while True: pass", "timed out"},
		{"sleep", "import time\ntime.sleep(3600)", "timed out"},
		{"swallowed interrupts", "while True:\n    try:\n        while True: pass\n    except BaseException: pass", ""},
		{"asyncio sleep", "import asyncio\nawait asyncio.sleep(3600)", "timed out"},
		{"js busy promise", "import js\nawait js.Promise.new(lambda res, rej: None)", "timed out"},
		{"big allocation", "b = bytearray(1 << 30)", "MemoryError"},
		{"growing list", "l = []\nwhile True: l.append(bytearray(32 << 20))", ""},
		{"wasm memory grow", "import js\njs.WebAssembly.Memory.new(js.Object.fromEntries([['initial', 70000]]))", ""},
		{"huge string", "s = 'x' * (1 << 30)", "MemoryError"},
		{"recursion", "def f(): return f()\nf()", "RecursionError"},
		{"deep recursion limit", "import sys\nsys.setrecursionlimit(10**6)\ndef f(n): return f(n + 1)\nf(0)", ""},
		{"bomb of tasks", "import asyncio\nasync def f():\n    while True: asyncio.ensure_future(f()); await asyncio.sleep(0)\nawait f()", ""},
		{"bomb of tasks left behind", "import asyncio\nasync def f():\n    while True: asyncio.ensure_future(f()); await asyncio.sleep(0)\nasyncio.ensure_future(f())\nawait asyncio.sleep(3600)", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, sb, c.code)
			if r.Error == nil {
				t.Fatalf("no error: %s", resultText(r))
			}
			t.Logf("%s: %s", c.name, r.Error.Message)
			if c.want != "" && !strings.Contains(r.Error.Type+": "+r.Error.Message, c.want) {
				t.Errorf("want %q, got %s: %s", c.want, r.Error.Type, r.Error.Message)
			}
			next(t)
		})
	}
}

// TestCrashRecovery crashes the interpreter and checks that the very next
// execution runs on a fresh sandbox, says once that state was lost, and
// succeeds.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	sb, _ := newSandbox(t, host.Config{Timeout: 10 * time.Second})
	for _, c := range []struct{ name, code string }{
		{"wasm stack overflow", "import sys\nsys.setrecursionlimit(100000)\ndef f(n): return f(n + 1)\nf(0)"},
		{"os.abort", "import os\nos.abort()"},
		{"os._exit", "import os\nos._exit(3)"},
		{"emscripten exit", "import pyodide_js\npyodide_js._module._exit(1)"},
		{"ctypes null write", "import ctypes\nctypes.memset(0, 0, 1 << 30)"},
		{"fatal via api", "import pyodide_js\npyodide_js._api.fatal_error('boom')"},
		// Not a crash: an interpreter that cannot run code any more.
		{"wedged: MemoryError on every compilation", "import sys\ndef h(event, args):\n    if event == 'compile': raise MemoryError\nsys.addaudithook(h)\nraise MemoryError"},
		{"wedged: recursion limit at the depth of executions", "import sys\nf, d = sys._getframe(), 0\nwhile f: f, d = f.f_back, d + 1\nsys.setrecursionlimit(d + 1)\ndef g(): g()\ng()"},
		// The host's health check after a MemoryError is not fooled by a
		// runner the guest patched to answer anything (the next execution
		// would get 12345).
		{"forged health check", "import _parselbox.execute as ex\nasync def forged(code): return 12345\nex.run = forged\nraise MemoryError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run(t, sb, "state = 1")
			r := run(t, sb, c.code)
			r2 := run(t, sb, "'alive'")
			if r2.Error != nil || string(r2.Output) != `"alive"` {
				t.Fatalf("the call after %s (%s) failed: %s", c.name, resultText(r), resultText(r2))
			}
			lost := r.Error != nil && strings.Contains(r.Error.Message, "state was lost") || r2.Note != ""
			r3 := run(t, sb, "'state' in globals()")
			if lost && string(r3.Output) != "false" {
				t.Errorf("state was said lost but is there: %s", resultText(r3))
			}
			if r3.Note != "" {
				t.Errorf("the loss was told twice: %s", r3.Note)
			}
		})
	}
}

// TestBetweenExecutions leaves code scheduled when an execution returns
// (by design it may run on, as background tasks do): what it writes is
// held to the workspace quota, a spinning callback is interrupted, one
// that swallows the interrupt gets the sandbox restarted, and in every case
// the next execution succeeds and is not blamed.
func TestBetweenExecutions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb, logs := newSandbox(t, host.Config{OutputDir: ws, Timeout: 2 * time.Second, WorkspaceQuota: 1})
	size := func() int64 {
		var n int64
		filepath.WalkDir(ws, func(_ string, d os.DirEntry, _ error) error {
			if fi, err := d.Info(); err == nil && !d.IsDir() {
				n += fi.Size()
			}
			return nil
		})
		return n
	}
	for i, c := range []struct{ name, code string }{
		{"call_later re-arming", `
import asyncio, itertools
n = itertools.count()
def tick():
    try:
        open(f"/workspace/tick{next(n)}", "wb").write(b"x" * 100_000)
    except OSError:
        refused()
    asyncio.get_event_loop().call_later(0.02, tick)
tick()`},
		{"task", `
import asyncio, itertools
n = itertools.count()
async def loop():
    while True:
        try:
            open(f"/workspace/tick{next(n)}", "wb").write(b"x" * 100_000)
        except OSError:
            refused()
        await asyncio.sleep(0.02)
asyncio.ensure_future(loop())`},
		{"js setInterval", `
import js, itertools
n = itertools.count()
from pyodide.ffi import create_proxy
def tick():
    try:
        open(f"/workspace/tick{next(n)}", "wb").write(b"x" * 100_000)
    except OSError:
        refused()
js.setInterval(create_proxy(tick), 20)`},
	} {
		t.Run(c.name+" held to the quota", func(t *testing.T) {
			for _, e := range must(os.ReadDir(ws)) {
				os.RemoveAll(filepath.Join(ws, e.Name()))
			}
			// The callbacks say once, on stderr (the host's log), that the
			// quota refused them a write: then they have tried to go past it.
			// Each subtest's callbacks call a function of their own: those of
			// an earlier one may still run.
			said := "quota refused a write: " + c.name
			refused := fmt.Sprintf("refused_%d", i)
			run(t, sb, fmt.Sprintf(`
import js
def %[1]s(said=[]):
    if not said:
        said.append(1)
        js.console.error(%[2]q)
`, refused, said)+strings.ReplaceAll(c.code, "refused()", refused+"()"))
			waitLog(t, logs, said)
			if n := size(); n > 1<<20 {
				t.Errorf("callbacks wrote %d bytes between executions, past the quota of 1 MB", n)
			}
			if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
				t.Errorf("the next execution: %v", v)
			}
			run(t, sb, `import js
for i in range(1, 10000): js.clearInterval(i)
import asyncio
for task in asyncio.all_tasks(): task.cancel()`)
		})
	}
	t.Run("spinning callback", func(t *testing.T) {
		run(t, sb, `import asyncio, js
def spin():
    js.console.error("spinning callback spins")
    while True: pass
asyncio.get_event_loop().call_later(0.1, spin)`)
		waitLog(t, logs, "spinning callback spins")
		r := run(t, sb, "6 * 7")
		if r.Error != nil || string(r.Output) != "42" {
			t.Errorf("the execution after a spinning callback: %s", resultText(r))
		}
	})
	t.Run("spinning callback that swallows interrupts", func(t *testing.T) {
		run(t, sb, `import asyncio, js
def spin():
    js.console.error("swallowing callback spins")
    while True:
        try:
            while True: pass
        except BaseException: pass
asyncio.get_event_loop().call_later(0.1, spin)`)
		waitLog(t, logs, "swallowing callback spins")
		r := run(t, sb, "6 * 7")
		if r.Error != nil || string(r.Output) != "42" {
			t.Errorf("the execution after a runaway callback: %s", resultText(r))
		}
	})
	t.Run("JS spin in a timer", func(t *testing.T) {
		run(t, sb, `import js
from pyodide.ffi import create_proxy
def spin():
    js.console.error("spinning timer spins")
    while True: pass
js.setTimeout(create_proxy(spin), 100)`)
		waitLog(t, logs, "spinning timer spins")
		r := run(t, sb, "6 * 7")
		if r.Error != nil || string(r.Output) != "42" {
			t.Errorf("the execution after a spinning timer: %s", resultText(r))
		}
	})
}

// waitLog waits until the sandbox's log has a guest line with text (what
// the guest wrote with js.console.error).
func waitLog(t *testing.T, logs *testenv.SyncBuffer, text string) {
	t.Helper()
	testenv.WaitFor(t, "the guest's line "+strconv.Quote(text)+" in the log", func() bool { return strings.Contains(logs.String(), text) })
}

// TestBigResults returns and prints more than the limits allow: a clear
// error naming the option, and the host lives on.
func TestBigResults(t *testing.T) {
	t.Parallel()
	sb, _ := newSandbox(t, host.Config{MaxResultSize: 2, MaxMessageSize: 2, Context: map[string]any{"echo": echoTool{}}})
	for _, c := range []struct{ name, code, want string }{
		{"big output", "'x' * (3 << 20)", "max_result_size"},
		{"big bytes", "b'x' * (3 << 20)", "max_result_size"},
		{"big stdout", "print('x' * (3 << 20))", ""},
		{"many small prints", "for i in range(200000): print(i)", ""},
		{"big tool argument", "echo.say(text='x' * (3 << 20))", "max_message_size"},
		{"big tool result", "echo.repeat(text='x' * 1000, times=3000)", "max_message_size"},
		{"big display", "display('<p>' + 'x' * (3 << 20))", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, sb, c.code)
			if int64(len(resultText(r))) > 3<<20 {
				t.Errorf("a result of %d bytes passed a limit of 2 MB", len(resultText(r)))
			}
			if c.want != "" && (r.Error == nil || !strings.Contains(r.Error.Message, c.want)) {
				t.Errorf("want an error naming %s, got %.300s", c.want, resultText(r))
			}
			if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
				t.Errorf("the next execution: %v", v)
			}
		})
	}
}

// echoTool is an in-process namespace whose results the guest controls.
type echoTool struct{}

// Say returns its text.
func (echoTool) Say(text string) string { return text }

// Repeat returns text times times.
func (echoTool) Repeat(text string, times int) string { return strings.Repeat(text, times) }

// ParamNames names the parameters.
func (echoTool) ParamNames() map[string][]string {
	return map[string][]string{"Say": {"text"}, "Repeat": {"text", "times"}}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
