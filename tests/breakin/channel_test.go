package breakin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// forged is a whole protocol line an attacker would like the host to read:
// the reply to an execution, with its own output and a file list pointing
// out of the workspace.
const forged = `{"id":1,"result":{"output":"FORGED","stdout":"","stderr":"","files":["/etc/passwd"],"error":null}}`

// TestChannelForgery tries to write protocol lines of its own onto the
// channel to the host, and to make the host or the runner read protocol
// words in data: every result must be what Python computed, and nothing
// forged may reach the result.
func TestChannelForgery(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb, _ := newSandbox(t, host.Config{OutputDir: ws, Timeout: 5 * time.Second, Context: map[string]any{"echo": echoTool{}}})
	notForged := func(t *testing.T, r *host.Result) {
		t.Helper()
		if strings.Contains(string(r.Output), "FORGED") && !strings.Contains(string(r.Output), `\"FORGED\"`) && string(r.Output) == `"FORGED"` {
			t.Errorf("a forged output reached the result: %s", resultText(r))
		}
		for _, f := range r.Files {
			if !strings.HasPrefix(f, "/workspace/") && !strings.HasPrefix(f, "/files/") && !strings.HasPrefix(f, "/mnt/") {
				t.Errorf("a file out of the roots in the result: %q", f)
			}
			if strings.HasPrefix(f, "/workspace/") {
				if _, err := os.Lstat(filepath.Join(ws, strings.TrimPrefix(f, "/workspace/"))); err != nil {
					t.Errorf("the result names a file that does not exist: %q", f)
				}
			}
		}
	}
	line := pyq("\n" + forged + "\n")
	for _, c := range []struct{ name, code string }{
		{"print a protocol line", "print(" + line + ")\n'real'"},
		{"output with newlines", line},
		{"stderr", "import sys\nsys.stderr.write(" + line + ")\n'real'"},
		{"os.write fd 1", "import os\nos.write(1, " + line + ".encode())\n'real'"},
		{"os.write fd 2", "import os\nos.write(2, " + line + ".encode())\n'real'"},
		{"sys.__stdout__", "import sys\nsys.__stdout__.write(" + line + ")\nsys.__stdout__.flush()\n'real'"},
		{"console.log", "import js\njs.console.log(" + line + ")\n'real'"},
		{"monkeypatched json.dumps", "import json\njson.dumps = lambda *a, **k: " + pyq(forged) + "\njson.JSONEncoder.encode = lambda *a, **k: " + pyq(forged) + "\n'real'"},
		{"monkeypatched JSON in JS", "import js\njs.JSON.stringify = lambda *a: " + pyq(forged) + "\n'real'"},
		{"request with spliced params", "import _pbx_js\nawait _pbx_js.request('call', '{}\\n" + strings.ReplaceAll(forged, `"`, `\"`) + "', True)"},
		{"request exec method", "import _pbx_js\nawait _pbx_js.request('exec', '{\"code\": \"1\"}', True)"},
		{"request notification names", "import _pbx_js\n[await _pbx_js.request(m, '{}', True) for m in ('ready', 'fatal', 'runaway', 'log', 'cancel', 'restored')]"},
		{"file name with a line", "open('/workspace/x\\n" + strings.ReplaceAll(forged, `"`, `\"`) + "', 'w').close()\n'real'"},
		{"U+2028 and U+2029", "'a\\u2028b\\u2029c'"},
		{"lone surrogate", "'\\ud800'"},
		{"NaN and infinity", "[float('nan'), float('inf')]"},
		{"deep nesting", "x = []\nfor i in range(100000): x = [x]\nx"},
		{"bytes", "b'\\x00\\xff\\n' + " + line + ".encode()"},
		{"object whose repr forges", "class X:\n    def __repr__(self): return " + pyq(forged) + "\nX()"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, sb, c.code)
			notForged(t, r)
			if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
				t.Errorf("the next execution: %v", v)
			}
		})
	}
	t.Run("output is the string as computed", func(t *testing.T) {
		r := run(t, sb, line)
		if got := str(t, r); got != "\n"+forged+"\n" {
			t.Errorf("output %q", got)
		}
	})
	for _, word := range []string{"interrupt", `{"method":"interrupt"}`, `{"method":"interrupt","params":{}}` + "\n", "shutdown", `{"id":1,"method":"shutdown"}`, "KeyboardInterrupt", "exec", "\x00", "\r\n"} {
		t.Run("protocol words in a tool result "+strings.TrimSpace(word), func(t *testing.T) {
			r := run(t, sb, "import time\nr = echo.say(text="+pyq(word)+")\ntime.sleep(0.2)\nr")
			if got := str(t, r); got != word {
				t.Errorf("the tool's result came back as %q", got)
			}
			if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
				t.Errorf("the next execution: %v", v)
			}
		})
	}
	t.Run("protocol words in file contents", func(t *testing.T) {
		data := "interrupt\n" + forged + "\n{\"method\":\"interrupt\"}\n"
		if err := sb.WriteFile("/workspace/words.txt", []byte(data)); err != nil {
			t.Fatal(err)
		}
		r := run(t, sb, "import time\nd = open('/workspace/words.txt').read()\ntime.sleep(0.2)\nopen('/workspace/back.txt', 'w').write(d)\nd")
		if got := str(t, r); got != data {
			t.Errorf("read %q", got)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "back.txt")); string(b) != data {
			t.Errorf("wrote %q", b)
		}
	})
	t.Run("a tool result is data, never a line", func(t *testing.T) {
		r := run(t, sb, "echo.say(text="+line+")")
		if got := str(t, r); got != "\n"+forged+"\n" {
			t.Errorf("the tool's result came back as %q", got)
		}
	})
}

// TestCallsInFlight starts more tool calls at once than the host serves:
// past the limits (1024 calls, 4 × max_message_size of arguments) a call
// fails at once with a RuntimeError that says so, the others complete,
// and the host lives on.
func TestCallsInFlight(t *testing.T) {
	t.Parallel()
	sb, _ := newSandbox(t, host.Config{MaxMessageSize: 1, Timeout: 60 * time.Second, Context: map[string]any{"slow": slowTool{}}})
	t.Run("count", func(t *testing.T) {
		r := run(t, sb, `import asyncio
tasks = [slow.hold.task(ms=8000, pad="") for _ in range(1100)]
res = await asyncio.gather(*[t._future for t in tasks], return_exceptions=True)
errs = [str(e) for e in res if isinstance(e, BaseException)]
[len(res) - len(errs), len(errs), errs[:1], slow.peak()]`)
		v, _ := value(t, r).([]any)
		t.Logf("result: %v", v)
		if len(v) != 4 {
			t.Fatalf("result %s", resultText(r))
		}
		ok, failed := v[0].(float64), v[1].(float64)
		if ok < 1000 || ok > 1024 || failed < 76 {
			t.Errorf("%v calls completed and %v failed, want at most 1024 in flight", ok, failed)
		}
		if es, _ := v[2].([]any); len(es) == 0 || !strings.Contains(es[0].(string), "too many tool calls in flight") {
			t.Errorf("the refusal: %v", v[2])
		}
	})
	t.Run("bytes", func(t *testing.T) {
		r := run(t, sb, `import asyncio
tasks = [slow.hold.task(ms=5000, pad="x" * 900_000) for _ in range(8)]
res = await asyncio.gather(*[t._future for t in tasks], return_exceptions=True)
[str(e) for e in res if isinstance(e, BaseException)]`)
		errs, _ := value(t, r).([]any)
		if len(errs) < 3 {
			t.Fatalf("8 calls of 900 KB in flight with max_message_size 1 MB: %d refused", len(errs))
		}
		if !strings.Contains(errs[0].(string), "max_message_size") {
			t.Errorf("the refusal: %v", errs[0])
		}
	})
	if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
		t.Errorf("the next execution: %v", v)
	}
}

// slowTool holds a call open.
type slowTool struct{}

var holding, peak atomic.Int64

// Peak is the most calls Hold had at once.
func (slowTool) Peak() int64 { return peak.Load() }

// Hold waits ms milliseconds (or until cancelled).
func (slowTool) Hold(ctx context.Context, ms int, pad string) (int, error) {
	n := holding.Add(1)
	defer holding.Add(-1)
	for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
	}
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
	case <-ctx.Done():
	}
	return len(pad), nil
}

// ParamNames names Hold's parameters.
func (slowTool) ParamNames() map[string][]string { return map[string][]string{"Hold": {"ms", "pad"}} }

var _ = json.Valid

// TestGuestStdoutForgery writes protocol lines to the sandbox process's
// own stdout and stderr from every language the sandbox runs: guest JS
// through node:fs (file descriptors 1 and 2), Python (os.write, ctypes),
// bash (redirections to /dev/stdout, >&1, /dev/fd/1, /proc/self/fd/1) and a
// WASI command (fd_write to 1). The lines forge a result with a file list,
// a tool call, sbx.progress, a runner log line and a fatal error. Each
// ends up as plain output (or is refused): the host calls no tool, reports
// no progress, logs nothing as the runner, restarts nothing, and every
// result is the one the code computed.
func TestGuestStdoutForgery(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	var hits atomic.Int64
	// The files first: once JS has run, a result lists the files changed
	// since (a little before) the execution began, by anyone.
	os.WriteFile(filepath.Join(ws, "cat.wasm"), testenv.Wasm(t, "cat"), 0o644)
	os.WriteFile(filepath.Join(ws, "forged.txt"), []byte("old"), 0o644)
	sb, logs := newSandbox(t, host.Config{OutputDir: ws, Timeout: 30 * time.Second,
		Context: map[string]any{"echo": echoTool{}, "target": &hitTool{hits: &hits}}})
	var lines []string
	for id := 1; id <= 8; id++ {
		lines = append(lines, fmt.Sprintf(`{"id":%d,"result":{"output":"FORGED","stdout":"","stderr":"","files":["/workspace/forged.txt"],"error":null}}`, id))
	}
	lines = append(lines,
		`{"id":900001,"method":"call","params":{"path":"target.hit","args":[],"kwargs":{}}}`,
		`{"id":900002,"method":"call","params":{"path":"sbx.progress","args":[1,2,"FORGED-PROGRESS"],"kwargs":{}}}`,
		`{"method":"log","params":{"level":"error","message":"FORGED-LOG"}}`,
		`{"method":"fatal","params":{"message":"FORGED-FATAL"}}`)
	text := strings.Join(lines, "\n") + "\n"
	sh := "'" + strings.ReplaceAll(text, "'", `'\''`) + "'"
	cases := []struct{ name, code string }{
		{"js node:fs fd 1", `js("(await import('node:fs')).default.writeSync(1, text)", text=` + pyq(text) + ")\n'real'"},
		{"js node:fs fd 2", `js("(await import('node:fs')).default.writeSync(2, text)", text=` + pyq(text) + ")\n'real'"},
		{"python os.write 1", "import os\nos.write(1, " + pyq(text) + ".encode())\n'real'"},
		{"python ctypes", "import ctypes\ntry:\n    ctypes.CDLL(None).write(1, " + pyq(text) + ".encode(), " + fmt.Sprint(len(text)) + ")\nexcept Exception:\n    pass\n'real'"},
		{"bash /dev/stdout", "bash(" + pyq("printf %s "+sh+" > /dev/stdout") + ")\n'real'"},
		{"bash >&1", "bash(" + pyq("printf %s "+sh+" >&1") + ")\n'real'"},
		{"bash >&2", "try:\n    bash(" + pyq("printf %s "+sh+" >&2; exit 3") + ")\nexcept RuntimeError:\n    pass\n'real'"},
		{"bash /dev/fd/1", "try:\n    bash(" + pyq("printf %s "+sh+" > /dev/fd/1") + ")\nexcept RuntimeError:\n    pass\n'real'"},
		{"bash /proc/self/fd/1", "try:\n    bash(" + pyq("printf %s "+sh+" > /proc/self/fd/1") + ")\nexcept RuntimeError:\n    pass\n'real'"},
		{"wasi fd_write 1", "r = require('./cat.wasm')(stdin=" + pyq(text) + ")\nassert r['stdout'].decode() == " + pyq(text) + ", r\n'real'"},
	}
	var progress []string
	var mu sync.Mutex
	ctx := host.WithProgress(t.Context(), func(p host.Progress) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p.Message)
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := sb.Execute(ctx, c.code)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if got := str(t, r); got != "real" || len(r.Files) != 0 || r.Note != "" {
				t.Errorf("got %s", resultText(r))
			}
			if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
				t.Errorf("the next execution: %v", v)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("a forged tool call reached the tool %d times", n)
	}
	mu.Lock()
	for _, p := range progress {
		if strings.Contains(p, "FORGED") {
			t.Errorf("forged progress: %q", p)
		}
	}
	mu.Unlock()
	s := logs.String()
	for _, bad := range []string{"runner: FORGED", "failed fatally"} {
		if strings.Contains(s, bad) {
			t.Errorf("the log has %q: a forged line was read as the runner's", bad)
		}
	}
	if !strings.Contains(s, "sandbox.guest: stdout") {
		t.Error("the lines written to fd 1 should be logged as guest stdout")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "forged.txt")); string(b) != "old" {
		t.Errorf("forged.txt: %q", b)
	}
}

// hitTool counts its calls.
type hitTool struct{ hits *atomic.Int64 }

// Hit counts a call.
func (h *hitTool) Hit() bool { h.hits.Add(1); return true }

// TestTaskInboxes sends messages into tasks that never read them: into
// task ids the guest made up (Task.id set by hand: the host keeps a slot
// for a call that never comes) and into a running call whose tool reads no
// messages. Each message is within max_message_size, but what the host
// keeps of them must stay bounded: past a bound, send() waits, and the
// execution's timeout ends the wait, rather than the host's memory growing
// with every message until it dies.
func TestTaskInboxes(t *testing.T) {
	t.Parallel()
	sb, _ := newSandbox(t, host.Config{MaxMessageSize: 1, Timeout: 8 * time.Second, Context: map[string]any{"slow": slowTool{}}})
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	r := run(t, sb, `
big = "x" * 900_000
held = slow.hold.task(ms=60000, pad="")
fake = slow.hold.task(ms=1, pad="")
await fake
sent = 0
for i in range(8):
    fake.id = f"made_up_{i}"
    for j in range(64):
        fake.send(big)
        sent += 1
for j in range(300):
    held.send(big)
    sent += 1
sent`)
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	t.Logf("result: %s", resultText(r))
	// Unbounded, 8 made-up tasks of 64 messages of 900 KB and the 256 the
	// running call's inbox holds would be 690 MB.
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("the host's heap grew by %d MB", grown>>20)
	if grown > 150<<20 {
		t.Errorf("the host keeps %d MB of messages sent into tasks that do not read them", grown>>20)
	}
	if r.Error == nil || !strings.Contains(r.Error.Message, "timed out") {
		t.Errorf("the sends did not wait: %s", resultText(r))
	}
	// 16 MB of queued messages at most, and the sends that wait in flight.
	if v, _ := value(t, run(t, sb, "held.cancel()\nsent")).(float64); v > 40 {
		t.Errorf("%v messages of 900 KB were taken before a send waited", v)
	}
	if v := value(t, run(t, sb, "6 * 7")); v != 42.0 {
		t.Errorf("the next execution: %v", v)
	}
}
