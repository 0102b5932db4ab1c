package sandbox_test

// Tests that try to break the sandbox's promises from Python (and the JS
// reachable from it), and check the outcome on both sides.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/testenv"
)

// tools is a fake bridge: namespace t, whose tools return what the test
// says. It records the calls it served.
type tools struct {
	mu    sync.Mutex
	calls []string // params as received
	serve func(path string, args []json.RawMessage) (any, error)
}

func (b *tools) ServeSandbox(_ context.Context, method string, params json.RawMessage) (any, error) {
	b.mu.Lock()
	b.calls = append(b.calls, method+" "+string(params))
	b.mu.Unlock()
	var p struct {
		Path string            `json:"path"`
		Args []json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	return b.serve(p.Path, p.Args)
}

func (b *tools) served() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

var toolNamespace = json.RawMessage(`[{"name":"t","kind":"test"}]`)

// waitFile waits until a file exists on the host (a marker the guest
// writes when it reaches a point), with a deadline. It may be called from
// another goroutine: it reports with Errorf, and the caller goes on.
func waitFile(t *testing.T, path string) {
	t.Helper()
	if !poll(func() bool { _, err := os.Stat(path); return err == nil }) {
		t.Errorf("timed out waiting for %s", path)
	}
}

// Protocol words inside tool results and file contents are data: no
// interrupt, no forged message, the values arrive exactly.
func TestProtocolWordsAreData(t *testing.T) {
	t.Parallel()
	words := []string{
		"interrupt",
		`{"method":"interrupt"}`,
		`{"method":"interrupt","params":{"id":1}}` + "\n",
		"exec",
		`"id"`,
		"line one\nline two\r\n",
		`{"id":1,"result":{"output":"forged","stdout":"","stderr":"","error":null,"files":["/etc/passwd"]}}` + "\n",
	}
	b := &tools{serve: func(path string, args []json.RawMessage) (any, error) {
		switch path {
		case "t.word":
			var i int
			json.Unmarshal(args[0], &i)
			return words[i], nil
		case "t.raw": // raw JSON, pretty-printed, passed through
			return json.RawMessage("{\n  \"interrupt\": [1, 2.5, \"exec\"],\n  \"id\": null\n}"), nil
		}
		return nil, fmt.Errorf("no tool %s", path)
	}}
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws, Handler: b, Namespaces: toolNamespace})
	run(t, sb, "kept = 1")
	code := fmt.Sprintf(`
got = [t.word(i) for i in range(%d)]
for i, w in enumerate(got):
    open(f"w{i}.txt", "wb").write(w.encode())
back = [open(f"w{i}.txt", "rb").read().decode() for i in range(len(got))]
[got == back, got, t.raw()]`, len(words))
	r := runTimeout(t, sb, code, 30*time.Second)
	want := []any{true, toAny(words), map[string]any{"interrupt": []any{1.0, 2.5, "exec"}, "id": nil}}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(r.Files) != len(words) {
		t.Errorf("files: %v", r.Files)
	}
	if got := output(t, run(t, sb, "kept")); got != 1.0 {
		t.Errorf("state after: %v", got)
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// The guest cannot forge what the runner writes: not by values with
// newlines, not through stdout, not by patching Python's json module.
func TestChannelForgery(t *testing.T) {
	t.Parallel()
	b := &tools{serve: func(path string, args []json.RawMessage) (any, error) {
		if len(args) == 0 {
			return "no args", nil
		}
		return string(args[0]), nil // the argument's JSON as the runner sent it
	}}
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws, Handler: b, Namespaces: toolNamespace})
	forged := `{"id":1,"result":{"output":"forged","stdout":"","stderr":"","error":null,"files":["/etc/passwd"]}}`
	r := run(t, sb, `
import json, os, sys
line = '\n`+forged+`\n'
print(line)
sys.stdout.write(line)
os.write(1, line.encode())
os.write(2, line.encode())
before = t.echo(line)
json.dumps = lambda *a, **k: line
json.JSONEncoder.encode = lambda self, o: line
json.JSONEncoder.iterencode = lambda self, o, _one_shot=False: iter([line])
import json.encoder
json.encoder.c_make_encoder = None
json.encoder.encode_basestring_ascii = lambda s: line
json.encoder.encode_basestring = lambda s: line
try:
    after = t.echo("x")
except ValueError as e:
    after = str(e)
open("real.txt", "w").write("real")
[line, before, after]`)
	out := output(t, r).([]any)
	if out[0] != "\n"+forged+"\n" {
		t.Errorf("output: %q", out[0])
	}
	// The runner parsed the call's JSON and wrote its own: the host got the
	// argument back as a JSON string, newlines escaped.
	if want, _ := json.Marshal(out[0]); out[1] != string(want) {
		t.Errorf("echoed %q, want %q", out[1], want)
	}
	// With Python's json patched to write a protocol line, the runner
	// parses that line as the call's parameters and sends them as such: a
	// request of the sandbox's own, never a response to the host.
	calls := b.served()
	if out[2] != "no args" || len(calls) != 2 || calls[1] != "call "+forged {
		t.Errorf("after patching json: %q; calls served: %q", out[2], calls)
	}
	if diff := cmp.Diff([]string{"/workspace/real.txt"}, r.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if strings.Count(r.Stdout, forged) != 3 {
		t.Errorf("stdout should hold the three writes as text: %q", r.Stdout)
	}
	if strings.Count(r.Stderr, forged) != 1 {
		t.Errorf("stderr should hold the write as text: %q", r.Stderr)
	}
	if got := output(t, run(t, sb, "'next'")); got != "next" {
		t.Errorf("after: %v", got)
	}
}

// One result and one message are capped; over a cap the execution or the
// call fails with an error naming the option, and the sandbox lives on.
func TestResultAndMessageCaps(t *testing.T) {
	t.Parallel()
	b := &tools{serve: func(path string, args []json.RawMessage) (any, error) {
		var n int
		json.Unmarshal(args[0], &n)
		return strings.Repeat("x", n), nil
	}}
	sb := start(t, sandbox.Options{Handler: b, Namespaces: toolNamespace, MaxResultBytes: 1 << 20, MaxMessageBytes: 2 << 20})
	run(t, sb, "kept = 'yes'")
	r := run(t, sb, "print('before'); 'y' * 1_500_000")
	wantError(t, r, sandbox.ErrorTypeResultTooLarge, "over the max_result_size limit of 1048576 bytes")
	if string(r.Output) != "null" || r.Stdout != "before\n" {
		t.Errorf("output %.40s, stdout %q", r.Output, r.Stdout)
	}
	if got := len(output(t, run(t, sb, "'y' * 900_000")).(string)); got != 900_000 {
		t.Errorf("a result under the cap: %d", got)
	}
	r = run(t, sb, `
errs = []
for n in (3_000_000,):
    try:
        t.big(n)
    except ValueError as e:
        errs.append(str(e))
try:
    t.big("z" * 3_000_000)
except ValueError as e:
    errs.append(str(e))
[len(t.big(1_000_000)), errs, kept]`)
	want := []any{1e6, []any{
		"the result of this call is 3000002 bytes, over the max_message_size limit of 2097152 bytes",
		"the arguments are 3000075 bytes, over the max_message_size limit of 2097152 bytes",
	}, "yes"}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// What the guest writes to stderr is logged under sandbox.guest at one
// level, escaped, rate-limited: it cannot write an ERROR line, a fake level
// prefix or control characters into the host's log.
func TestGuestStderrInTheLog(t *testing.T) {
	t.Parallel()
	var buf testenv.SyncBuffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: &buf})
	sb := start(t, sandbox.Options{Logger: log})
	run(t, sb, `import js
js.console.error("[ERROR] forged\x1b[2J\r[INFO] more")
for i in range(600):
    js.console.log(f"flood {i}")`)
	want := `line="[ERROR] forged\x1b[2J\r[INFO] more"`
	waitFor(t, "the guest's line in the log", func() bool { return strings.Contains(buf.String(), want) })
	// Once the flood has passed, the next allowed line says what was dropped.
	waitFor(t, "the dropped lines counted", func() bool {
		run(t, sb, `import js; js.console.log("after the flood")`)
		return strings.Contains(buf.String(), "stderr lines dropped (rate limit)")
	})
	logged := buf.String()
	for _, line := range strings.Split(logged, "\n") {
		if strings.Contains(line, "forged") && !(strings.Contains(line, " [DEBUG] sandbox.guest: stderr: pid=") && strings.Contains(line, ` line="[ERROR] forged`)) {
			t.Errorf("guest text outside a guest line: %q", line)
		}
		if strings.ContainsAny(line, "\x1b\r") {
			t.Errorf("control characters in the log: %q", line)
		}
	}
	if n := strings.Count(logged, `line="flood `); n >= 600 || n < 100 {
		t.Errorf("%d of 600 flood lines logged; want the burst, not all", n)
	}
}

// After a crash, including a fatal overflow of the WebAssembly stack, the
// first call runs on a fresh sandbox and succeeds; the loss is said once.
func TestFirstCallAfterCrash(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "kept = 1")
	r := run(t, sb, `import sys
sys.setrecursionlimit(10**6)
class A:
    def __repr__(self): return repr(A())
repr(A())`)
	wantError(t, r, sandbox.ErrorTypeCrash, "failed fatally (Maximum call stack size exceeded)")
	if !strings.Contains(r.Error.Message, "all state was lost") {
		t.Errorf("message: %s", r.Error.Message)
	}
	r = run(t, sb, "'fresh'")
	if got := output(t, r); got != "fresh" || r.Note != "" {
		t.Errorf("first call after the crash: %v, note %q", got, r.Note)
	}
	wantError(t, run(t, sb, "kept"), "NameError", "kept")

	// A crash between executions is said by the next execution, once.
	run(t, sb, "kept = 2")
	pid := sb.PID()
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "a restart", func() bool { p := sb.PID(); return p != 0 && p != pid })
	r = run(t, sb, "'next'")
	if got := output(t, r); got != "next" || !strings.Contains(r.Note, "died between executions (killed by signal 9") ||
		!strings.Contains(r.Note, "all state was lost") {
		t.Errorf("after an idle crash: %v, note %q", got, r.Note)
	}
	if r := run(t, sb, "1"); r.Note != "" {
		t.Errorf("the note again: %q", r.Note)
	}
}

// A failed execution leaves none of its frames behind: they are freed when
// it returns. They were kept (the exception, its traceback and the runner's
// frame in a cycle) until the next garbage collection: after a deep
// recursion (a raised limit), its frames and their locals, so that with the
// guest's data near the memory limit every later execution failed with
// MemoryError; and that collection, freeing the chain of frames
// recursively, overflowed the WebAssembly stack (a fatal error).
func TestFailedExecutionFreesItsFrames(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, `import sys, weakref
class Marker: pass
refs = []
sys.setrecursionlimit(30000)
def f(n):
    m = Marker()
    if n % 1000 == 0:
        refs.append(weakref.ref(m))
    return f(n + 1)`)
	wantError(t, run(t, sb, "f(0)"), "RecursionError", "maximum recursion depth exceeded")
	if got := output(t, run(t, sb, "sum(r() is not None for r in refs)")); got != 0.0 {
		t.Errorf("%v locals of the failed execution's frames are alive after it", got)
	}
	r := run(t, sb, "import gc\ngc.collect()\n'collected'")
	if r.Error != nil || output(t, r) != "collected" {
		t.Errorf("a garbage collection after it: %+v", r.Error)
	}
	// An exception the guest kept is left whole.
	wantError(t, run(t, sb, `kept = []
def g():
    try:
        1 / 0
    except ZeroDivisionError as e:
        kept.append(e)
        raise
g()`), "ZeroDivisionError", "division by zero")
	if got := output(t, run(t, sb, "tb = kept[0].__traceback__\ntb is not None and tb.tb_next is not None")); got != true {
		t.Errorf("the kept exception's traceback: %v", got)
	}
}

// Starting a process raises OSError; the interpreter lives on.
func TestNoProcesses(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "kept = 1")
	r := run(t, sb, `import os, posix, subprocess, errno
out = {}
for name, f in {
    "os.system": lambda: os.system("id"),
    "posix.system": lambda: posix.system("id"),
    "os.popen": lambda: os.popen("id"),
    "os.fork": os.fork,
    "os.forkpty": os.forkpty,
    "os.execv": lambda: os.execv("/bin/id", ["id"]),
    "os.execvp": lambda: os.execvp("id", ["id"]),
    "os.spawnv": lambda: os.spawnv(os.P_WAIT, "/bin/id", ["id"]),
    "os.posix_spawn": lambda: os.posix_spawn("/bin/id", ["id"], {}),
    "subprocess.run": lambda: subprocess.run(["id"]),
}.items():
    try:
        f()
        out[name] = "ran"
    except OSError as e:
        out[name] = [type(e).__name__, e.strerror]
out`)
	got := output(t, r).(map[string]any)
	for name, v := range got {
		want := []any{"OSError", name + ": processes cannot be started in the sandbox"}
		switch name {
		case "posix.system":
			want[1] = "os.system: processes cannot be started in the sandbox"
		case "subprocess.run":
			want[1] = "emscripten does not support processes."
		}
		if diff := cmp.Diff(want, v); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if len(got) != 10 {
		t.Errorf("results: %v", got)
	}
	if got := output(t, run(t, sb, "kept")); got != 1.0 {
		t.Errorf("state lost: %v", got)
	}
}

// Callbacks that an execution leaves scheduled may run between executions,
// held to the limits: one that blocks the sandbox is interrupted (and what
// the guest left running is cancelled); the next execution runs normally.
// Each callback waits for the file "go", which the test writes once the
// execution that scheduled it has returned, then writes "spinning" and
// spins.
func TestBetweenExecutions(t *testing.T) {
	t.Parallel()
	for name, code := range map[string]string{
		"call_later": `import asyncio, os
loop = asyncio.get_event_loop()
def spin():
    if not os.path.exists("go"):
        loop.call_later(0.01, spin)
        return
    open("spinning", "w").close()
    while True: pass
loop.call_later(0.01, spin)`,
		// It ends on the interrupt, which it catches: the runner hears of
		// the interrupt from the watchdog only, which may come after the
		// next execution's request.
		"call_later that catches the interrupt": `import asyncio, os
loop = asyncio.get_event_loop()
def spin():
    if not os.path.exists("go"):
        loop.call_later(0.01, spin)
        return
    open("spinning", "w").close()
    try:
        while True: pass
    except KeyboardInterrupt:
        pass
loop.call_later(0.01, spin)`,
		"re-arming call_later": `import asyncio, os
loop = asyncio.get_event_loop()
ticks = [0]
def tick():
    loop.call_later(0.01, tick)
    if os.path.exists("go"):
        ticks[0] += 1
    if ticks[0] == 3:
        open("spinning", "w").close()
        while True: pass
loop.call_later(0.01, tick)`,
		"asyncio task": `import asyncio, os
async def spin():
    while not os.path.exists("go"):
        await asyncio.sleep(0.01)
    open("spinning", "w").close()
    while True: pass
task = asyncio.ensure_future(spin())`,
		"JS timer": `import js, os
from pyodide.ffi import create_proxy
def spin():
    if os.path.exists("go"):
        open("spinning", "w").close()
        while True: pass
js.setInterval(create_proxy(spin), 20)`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			// A long grace: these callbacks stop when interrupted, however
			// loaded the machine (a runaway is the next test's).
			sb := start(t, sandbox.Options{Workspace: ws, IdleTimeout: 2 * time.Second, Grace: 30 * time.Second})
			run(t, sb, "kept = 'yes'")
			if r := run(t, sb, code); r.Error != nil {
				t.Fatal(r.Error)
			}
			os.WriteFile(filepath.Join(ws, "go"), nil, 0o644)
			waitFile(t, filepath.Join(ws, "spinning"))
			r := run(t, sb, "kept")
			if got := output(t, r); got != "yes" || r.Note != "" {
				t.Errorf("next execution: %v, note %q", got, r.Note)
			}
			// Exactly the note: the KeyboardInterrupt that ended the
			// callback is not told again (asyncio's report of an unhandled
			// exception in a task, which came after the note).
			if !betweenNote.MatchString(r.Stderr) {
				t.Errorf("stderr is not exactly what happened: %q", r.Stderr)
			}
			// What was left is cancelled: nothing spins again (in a window
			// where a callback left running would).
			os.Remove(filepath.Join(ws, "spinning"))
			r = run(t, sb, "import asyncio\nawait asyncio.sleep(0.3)")
			if r.Error != nil || r.Stderr != "" {
				t.Errorf("after: %+v", r)
			}
			if _, err := os.Stat(filepath.Join(ws, "spinning")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the callback ran again")
			}
		})
	}
}

// betweenNote is what the execution after an interrupted callback is told
// on stderr, and all of it (TestBetweenExecutions).
var betweenNote = regexp.MustCompile(`^` + regexp.QuoteMeta("[parselbox] a callback left by an earlier execution "+
	"blocked the sandbox for more than 2s between executions: it was interrupted, and the ") +
	`\d+` + regexp.QuoteMeta(" task(s), callback(s) and timer(s) left running were cancelled (tool tasks keep running).\n") + `$`)

// A callback that blocks the sandbox between executions and does not stop
// when interrupted is killed; the next execution runs on the restarted
// sandbox, whole, and is told (it is not blamed: no error).
func TestRunawayBetweenExecutions(t *testing.T) {
	t.Parallel()
	const runaway = `import asyncio, os
loop = asyncio.get_event_loop()
def spin():
    if not os.path.exists("go"):
        loop.call_later(0.01, spin)
        return
    open("spinning", "w").close()
    while True:
        try:
            while True: pass
        except BaseException:
            pass
loop.call_later(0.01, spin)`
	begin := func(t *testing.T) (*sandbox.Supervisor, string) {
		ws := t.TempDir()
		sb := start(t, sandbox.Options{Workspace: ws, IdleTimeout: 2 * time.Second, Grace: time.Second})
		run(t, sb, "kept = 1")
		if r := run(t, sb, runaway); r.Error != nil {
			t.Fatal(r.Error)
		}
		os.WriteFile(filepath.Join(ws, "go"), nil, 0o644)
		waitFile(t, filepath.Join(ws, "spinning"))
		return sb, ws
	}
	t.Run("execution waiting", func(t *testing.T) {
		t.Parallel()
		sb, ws := begin(t)
		r := run(t, sb, "open('b.txt', 'w').write('done')\n42")
		if got := output(t, r); got != 42.0 {
			t.Errorf("the execution after the runaway: %v", got)
		}
		if !strings.Contains(r.Note, "A callback left running by an earlier execution blocked the sandbox") ||
			!strings.Contains(r.Note, "did not stop when interrupted; the sandbox was restarted before this execution and all state was lost.") {
			t.Errorf("note: %q", r.Note)
		}
		if b, err := os.ReadFile(filepath.Join(ws, "b.txt")); err != nil || string(b) != "done" {
			t.Errorf("its work: %q, %v", b, err)
		}
		r = run(t, sb, "kept")
		wantError(t, r, "NameError", "kept")
		if r.Note != "" {
			t.Errorf("said twice: %q", r.Note)
		}
	})
	t.Run("nothing waiting", func(t *testing.T) {
		t.Parallel()
		sb, _ := begin(t)
		pid := sb.PID()
		waitFor(t, "the restart", func() bool { p := sb.PID(); return p != 0 && p != pid })
		r := run(t, sb, "'fresh'")
		if got := output(t, r); got != "fresh" || !strings.Contains(r.Note, "did not stop when interrupted") {
			t.Errorf("next: %v, note %q", got, r.Note)
		}
	})
}

// Every mode the sandbox sets or creates is masked (no setuid, setgid,
// sticky, group or world write), on the host; the roots keep theirs.
func TestModesMasked(t *testing.T) {
	t.Parallel()
	ws, files, rw, ro := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	roots := map[string]string{"/workspace": ws, "/files": files, "/mnt/rw": rw, "/mnt/ro": ro}
	before := map[string]fs.FileMode{}
	for _, d := range roots {
		fi, _ := os.Stat(d)
		before[d] = fi.Mode()
	}
	sb := start(t, sandbox.Options{Workspace: ws, FilesDir: files, Mounts: []sandbox.Bind{
		{Target: "/mnt/rw", Source: rw}, {Target: "/mnt/ro", Source: ro, ReadOnly: true}}})
	r := run(t, sb, `import os, errno
open("a", "w").write("x"); os.chmod("a", 0o7777)
fd = os.open("b", os.O_CREAT | os.O_WRONLY, 0o6777); os.fchmod(fd, 0o4777); os.close(fd)
os.mkdir("d", 0o7777); os.chmod("d", 0o3777)
fd = os.open("e", os.O_CREAT | os.O_WRONLY, 0o777); os.close(fd)
open("/mnt/rw/c", "w").write("x"); os.chmod("/mnt/rw/c", 0o2777)
open("/files/f", "w").write("x"); os.chmod("/files/f", 0o1666)
out = {}
for root in ("/workspace", "/files", "/mnt/rw", "/mnt/ro"):
    try:
        os.chmod(root, 0o777)
        out[root] = "changed"
    except OSError as e:
        out[root] = [type(e).__name__, errno.errorcode[e.errno], e.strerror]
out["a"] = oct(os.stat("a").st_mode)
out`)
	want := map[string]any{
		"/workspace": []any{"PermissionError", "EPERM", "Operation not permitted"},
		"/files":     []any{"PermissionError", "EPERM", "Operation not permitted"},
		"/mnt/rw":    []any{"PermissionError", "EPERM", "Operation not permitted"},
		"/mnt/ro":    []any{"OSError", "EROFS", "Read-only file system"},
		"a":          "0o100755",
	}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for path, mode := range map[string]fs.FileMode{
		filepath.Join(ws, "a"): 0o755, filepath.Join(ws, "b"): 0o755, filepath.Join(ws, "d"): fs.ModeDir | 0o755,
		filepath.Join(rw, "c"): 0o755, filepath.Join(files, "f"): 0o644,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), mode)
		}
	}
	fi, _ := os.Stat(filepath.Join(ws, "e"))
	if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky|0o022) != 0 {
		t.Errorf("created with mode %v", fi.Mode())
	}
	for _, d := range roots {
		if fi, _ := os.Stat(d); fi.Mode() != before[d] {
			t.Errorf("root %s: mode %v, was %v", d, fi.Mode(), before[d])
		}
	}
}

// The workspace quota counts what is there at start and what the sandbox
// writes to /workspace, /files and rw mounts; past it, OSError(ENOSPC,
// "quota exceeded") and nothing written.
func TestWorkspaceQuota(t *testing.T) {
	t.Parallel()
	ws, rw := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "old.bin"), make([]byte, 300_000), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := start(t, sandbox.Options{Workspace: ws, WorkspaceQuota: 1 << 20,
		Mounts: []sandbox.Bind{{Target: "/mnt/rw", Source: rw}}})
	r := run(t, sb, `import os, errno
def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return [type(e).__name__, errno.errorcode[e.errno], e.strerror]
out = []
out.append(attempt(lambda: open("a.bin", "wb").write(b"x" * 600_000)))
out.append(attempt(lambda: open("b.bin", "wb").write(b"x" * 200_000)))
out.append(attempt(lambda: open("/mnt/rw/c.bin", "wb").write(b"x" * 200_000)))
out.append(attempt(lambda: os.truncate("a.bin", 5_000_000)))
out.append(os.statvfs("/workspace").f_bfree * 4096 < 200_000)
os.remove("a.bin")
out.append(attempt(lambda: open("b.bin", "wb").write(b"x" * 200_000)))
out`)
	full := []any{"OSError", "ENOSPC", "Disk quota exceeded"}
	want := []any{"ok", full, full, full, true, "ok"}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(filepath.Join(rw, "c.bin")); err != nil || fi.Size() != 0 {
		t.Errorf("the refused write reached the mount: %v, %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(ws, "b.bin")); err != nil || fi.Size() != 200_000 {
		t.Errorf("b.bin: %v, %v", fi, err)
	}
	info, err := sb.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.QuotaUsedBytes != 500_000+3*4096 { // the data, and a block for each of 3 files
		t.Errorf("quota used: %d, want %d", info.QuotaUsedBytes, 500_000+3*4096)
	}
}

// Once booted, the sandbox reads only its directories: fetch takes
// network URLs only, the runtime's files are no longer readable, and no
// host path shows in what Python can see.
func TestNoHostPaths(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws})
	r := run(t, sb, `import js
out = {}
for name, arg in [("str", "file:///etc/passwd"), ("Request", js.Request.new("file:///etc/passwd")),
                  ("URL", js.URL.new("file:///etc/passwd")), ("blob", "blob:x")]:
    try:
        await js.fetch(arg)
        out[name] = "fetched"
    except Exception as e:
        out[name] = [type(e).__name__, str(e)]
out["data"] = await (await js.fetch("data:text/plain,hello")).text()
out["reach"] = [hasattr(js, n) for n in ("Deno", "globalThis", "gc", "eval", "Function", "Worker", "process", "require")]
out`)
	refused := func(scheme string) []any {
		return []any{"JsException", "TypeError: fetch: the " + scheme + " scheme is not allowed in the sandbox (only http:, https: and data: URLs)"}
	}
	no := false
	want := map[string]any{"str": refused("file:"), "Request": refused("file:"), "URL": refused("file:"), "blob": refused("blob:"), "data": "hello",
		"reach": []any{no, no, no, no, no, no, no, no}}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("fetch (-want +got):\n%s", diff)
	}
	info, err := sb.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.RuntimeReadable {
		t.Error("the runtime's files are still readable")
	}

	r = run(t, sb, `import sys, os, posix, js, pyodide_js, traceback
parts = [sys.executable, repr(sys.argv), repr(sys.orig_argv), repr(sys.path), sys.prefix, sys.exec_prefix,
         repr(dict(os.environ)), repr(posix.environ), os.getcwd(), str(js.Error.new("probe").stack)]
cfg = pyodide_js._api.config
parts += [f"{k}={getattr(cfg, k)}" for k in js.Object.keys(cfg) if isinstance(getattr(cfg, k), str)]
parts += [str(getattr(m, "__file__", None)) for m in list(sys.modules.values())]
for f in (lambda: pyodide_js.loadPackage("x"), lambda: js.fetch("file:///nowhere"), lambda: 1 / 0):
    try:
        r = f()
        if hasattr(r, "then"):
            await r
    except Exception:
        parts.append(traceback.format_exc())
"\n".join(parts)`)
	text := output(t, r).(string)
	// The probe sees what it should, so that a leak would show too.
	for _, want := range []string{"Error: probe", "/workspace", "ZeroDivisionError", "loadPackage is not available", "pyodide:", "indexURL="} {
		if !strings.Contains(text, want) {
			t.Errorf("the probe lacks %q", want)
		}
	}
	real, _ := filepath.EvalSymlinks(ws)
	for _, host := range []string{testenv.Runtime(t).Dir, testenv.CacheDir(t), ws, real} {
		if host != "" && strings.Contains(text, host) {
			t.Errorf("host path %s is visible:\n%s", host, text)
		}
	}
}

// A symlink the host places in a mount after start does not lead out of
// it; one that stays inside works; the guest cannot make symlinks.
func TestSymlinks(t *testing.T) {
	t.Parallel()
	mnt, secret, ws := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(mnt, "real.txt"), []byte("inside"), 0o644)
	os.WriteFile(filepath.Join(secret, "secret.txt"), []byte("top secret"), 0o644)
	os.Symlink(filepath.Join(mnt, "real.txt"), filepath.Join(mnt, "inner"))
	sb := start(t, sandbox.Options{Workspace: ws, Mounts: []sandbox.Bind{{Target: "/mnt/data", Source: mnt}}})
	run(t, sb, "import os; os.listdir('/mnt/data')") // cached before the links change
	os.Symlink(filepath.Join(secret, "secret.txt"), filepath.Join(mnt, "escape"))
	os.Symlink(secret, filepath.Join(mnt, "escdir"))
	r := run(t, sb, `import os, errno
def attempt(f):
    try:
        return f()
    except OSError as e:
        return [type(e).__name__, errno.errorcode[e.errno], e.strerror]
[attempt(lambda: open("/mnt/data/escape").read()),
 attempt(lambda: os.stat("/mnt/data/escape").st_size),
 attempt(lambda: os.readlink("/mnt/data/escape")),
 attempt(lambda: os.listdir("/mnt/data/escdir")),
 attempt(lambda: open("/mnt/data/escdir/secret.txt").read()),
 attempt(lambda: open("/mnt/data/inner").read()),
 attempt(lambda: os.readlink("/mnt/data/inner")),
 attempt(lambda: os.symlink("/etc/passwd", "/workspace/link")),
 attempt(lambda: os.symlink("real.txt", "/workspace/rel"))]`)
	denied := []any{"PermissionError", "EACCES", "Permission denied"}
	eperm := []any{"PermissionError", "EPERM", "Operation not permitted"}
	want := []any{denied, denied, denied, denied, denied, "inside", "/mnt/data/real.txt", eperm, eperm}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, name := range []string{"link", "rel"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the guest's symlink %s reached the host: %v", name, err)
		}
	}
}

// What the host changes in a directory between executions is what the
// guest sees next, whatever the guest looked up before: a file the host
// deleted can be created again, one it replaced by a directory is a
// directory, and one it replaced by a file is a file (the guest's file
// system keeps no stale entry).
func TestHostChangesSeen(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws})
	run(t, sb, `import os
open("/workspace/gone.txt", "w").write("first")
open("/workspace/becomes_dir", "w").write("a file")
os.mkdir("/workspace/becomes_file")
os.mkdir("/workspace/d")
open("/workspace/d/inner.txt", "w").write("x")
[os.path.exists(p) for p in ("/workspace/gone.txt", "/workspace/becomes_dir", "/workspace/becomes_file", "/workspace/d/inner.txt")]`)
	for _, err := range []error{
		os.Remove(filepath.Join(ws, "gone.txt")),
		os.Remove(filepath.Join(ws, "becomes_dir")),
		os.Mkdir(filepath.Join(ws, "becomes_dir"), 0o755),
		os.WriteFile(filepath.Join(ws, "becomes_dir", "x.txt"), []byte("in the dir"), 0o644),
		os.Remove(filepath.Join(ws, "becomes_file")),
		os.WriteFile(filepath.Join(ws, "becomes_file"), []byte("now a file"), 0o644),
		os.RemoveAll(filepath.Join(ws, "d")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, sb, `import os
def attempt(f):
    try:
        return f()
    except OSError as e:
        return [type(e).__name__, e.strerror]
def recreate():
    with open("/workspace/gone.txt", "w") as f:
        f.write("second")
    return open("/workspace/gone.txt").read()
[os.path.exists("/workspace/gone.txt"),
 attempt(recreate),
 attempt(lambda: open("/workspace/becomes_dir/x.txt").read()),
 attempt(lambda: os.path.isdir("/workspace/becomes_dir")),
 attempt(lambda: open("/workspace/becomes_file").read()),
 attempt(lambda: os.path.exists("/workspace/d/inner.txt")),
 attempt(lambda: open("/workspace/d/inner.txt", "w").write("y"))]`)
	want := []any{false, "second", "in the dir", true, "now a file", false, []any{"FileNotFoundError", "No such file or directory"}}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "gone.txt")); err != nil || string(b) != "second" {
		t.Errorf("the file created again on the host: %q %v", b, err)
	}
}
