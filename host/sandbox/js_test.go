package sandbox_test

// js(code, **kwargs) and require() of local files, against the real
// runtime (npm packages: host/npm_test.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/testenv"
)

func TestJS(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{FilesDir: t.TempDir()})
	cases := map[string]struct {
		code string
		want any
	}{
		"return":   {`js("return 1 + 1")`, 2.0},
		"await":    {`js("await new Promise(r => setTimeout(r, 10)); return 'late'")`, "late"},
		"kwargs":   {`js("return {sum: a + b.x, n: xs.length}", a=1, b={"x": 2}, xs=[1, 2, 3])`, map[string]any{"sum": 3.0, "n": 3.0}},
		"bytes in": {`js("return data.length + ':' + (data instanceof Uint8Array)", data=b"abc")`, "3:true"},
		"bytes out": {`r = js("return {b: new Uint8Array([104, 105]), s: 'x'}")
[r["b"].decode(), type(r["b"]).__name__, r["s"]]`, []any{"hi", "bytes", "x"}},
		"undefined": {`js("return undefined") is None`, true},
		"fresh":     {`js("var x = 5; return x"); js("return typeof x")`, "undefined"},
		"callback":  {`js("return [1, 2, 3].map(x => f(x))", f=lambda x, *_: x * 10)`, []any{10.0, 20.0, 30.0}},
		"instances": {`js("class P { constructor() { this.a = 1 } m() {} }; return new P()")`, map[string]any{"a": 1.0}},
		"date":      {`js("return new Date(0)")`, "1970-01-01T00:00:00.000Z"},
		"web apis":  {`len(js("return crypto.randomUUID()"))`, 36.0},
		"js error": {`try:
    js("throw new Error('nope')")
except Exception as e:
    r = str(e)
r`, "Error: nope"},
		"py error": {`try:
    js("return f()", f=lambda: 1 / 0)
except ZeroDivisionError as e:
    r = "ZeroDivisionError"
r`, "ZeroDivisionError"},
		"bad kwarg": {`try:
    js("return 1", **{"a-b": 1})
except ValueError as e:
    r = str(e)
r`, "js(): 'a-b' is not a JavaScript identifier"},
		"resolvePath": {`js("return resolvePath('../files/x.csv').endsWith('/x.csv') && !resolvePath('x').startsWith('/workspace')")`, true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, sb, c.code)
			if diff := cmp.Diff(c.want, output(t, r)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.code, diff)
			}
		})
	}
}

func TestJSFilesSharedWithPython(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws, Mounts: []sandbox.Bind{{Target: "/mnt/rw", Source: t.TempDir()}}})
	r := run(t, sb, `open("from_py.txt", "w").write("py")
got = js("return await Deno.readTextFile(resolvePath('from_py.txt'))")
js("await Deno.writeTextFile(resolvePath('from_js.txt'), 'js')")
[got, open("from_js.txt").read()]`)
	if diff := cmp.Diff([]any{"py", "js"}, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/workspace/from_js.txt", "/workspace/from_py.txt"}, sorted(r.Files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	r = run(t, sb, `js("""
const f = await Deno.open(resolvePath('opened.txt'), {write: true, create: true});
await f.write(new TextEncoder().encode('x')); f.close();
Deno.copyFileSync(resolvePath('opened.txt'), resolvePath('copied.txt'));
await Deno.readTextFile(resolvePath('from_py.txt'));
""")`)
	if diff := cmp.Diff([]string{"/workspace/copied.txt", "/workspace/opened.txt"}, sorted(r.Files)); diff != "" {
		t.Errorf("files of Deno.open and copyFile (-want +got):\n%s", diff)
	}
	// node:fs, file handles, streams, a Worker: every way JS writes is in
	// files (the writable mount's too); reading is not.
	r = run(t, sb, `js("""
const fs = (await import('node:fs')).default;
fs.writeFileSync(resolvePath('node_sync.txt'), 'a');
await fs.promises.writeFile(resolvePath('node_promise.txt'), 'b');
fs.mkdirSync(resolvePath('sub/deeper'), {recursive: true});
fs.appendFileSync(resolvePath('sub/deeper/appended.txt'), 'c');
const fh = await fs.promises.open(resolvePath('handle.txt'), 'w'); await fh.write('d'); await fh.close();
await new Promise((ok) => fs.createWriteStream(resolvePath('stream.txt')).end('e', ok));
fs.writeFileSync(resolvePath('to_rename.txt'), 'f'); fs.renameSync(resolvePath('to_rename.txt'), resolvePath('renamed.txt'));
fs.writeFileSync(resolvePath('/mnt/rw/mounted.txt'), 'g');
fs.readFileSync(resolvePath('from_py.txt'));
await new Promise((ok, fail) => {
  const w = new Worker('data:text/javascript,' + encodeURIComponent("import fs from 'node:fs'; onmessage = (e) => { fs.writeFileSync(e.data, 'h'); postMessage(1); };"), {type: 'module'});
  w.onmessage = () => { w.terminate(); ok(); }; w.onerror = (e) => { e.preventDefault(); fail(new Error(e.message)); };
  w.postMessage(resolvePath('worker.txt'));
});
""")`)
	if diff := cmp.Diff([]string{"/mnt/rw/mounted.txt", "/workspace/handle.txt", "/workspace/node_promise.txt", "/workspace/node_sync.txt",
		"/workspace/renamed.txt", "/workspace/stream.txt", "/workspace/sub/deeper/appended.txt", "/workspace/worker.txt"}, sorted(r.Files)); diff != "" {
		t.Errorf("files written through node:fs (-want +got):\n%s", diff)
	}
	if r := run(t, sb, `js("return 1")`); len(r.Files) != 0 {
		t.Errorf("an execution that wrote nothing reports %v", r.Files)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "from_js.txt")); string(b) != "js" {
		t.Errorf("from_js.txt on the host: %q", b)
	}
	r = run(t, sb, `try:
    js("return resolvePath('/tmp/x')")
except Exception as e:
    r = str(e)
r`)
	if s, _ := output(t, r).(string); !strings.Contains(s, "is in-memory (MEMFS)") || !strings.Contains(s, "/workspace") {
		t.Errorf("resolvePath of an unmounted path: %q", s)
	}
}

// An endless JS loop ends at the timeout: the sandbox is restarted and
// says so, and the next call works. A JS await is interrupted softly.
func TestJSTimeout(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{Grace: time.Second})
	run(t, sb, "kept = 1")
	r := runTimeout(t, sb, `js("await new Promise(r => setTimeout(r, 60000))")`, time.Second)
	wantError(t, r, "KeyboardInterrupt", "timed out after 1s")
	if got := output(t, run(t, sb, "kept")); got != 1.0 {
		t.Errorf("state after a soft interrupt: %v", got)
	}
	r = runTimeout(t, sb, `js("while(true){}")`, time.Second)
	wantError(t, r, sandbox.ErrorTypeTimeout, "restarted")
	if got := output(t, run(t, sb, `js("return 'works'")`)); got != "works" {
		t.Errorf("after restart: %v", got)
	}
}

// JS can do nothing Python can't: Deno's file, network, environment,
// process, FFI and system APIs, node's, and imports outside the grants are
// refused; a read-only mount stays read-only; resolvePath does not follow a
// symlink out of its mount.
func TestJSBreakIn(t *testing.T) {
	t.Parallel()
	ws, ro, secret := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ro, "keep.txt"), []byte("ro"), 0o644)
	os.WriteFile(filepath.Join(secret, "secret.txt"), []byte("top secret"), 0o644)
	os.Symlink(secret, filepath.Join(ro, "escdir"))
	sb := start(t, sandbox.Options{Workspace: ws, Mounts: []sandbox.Bind{{Target: "/mnt/ro", Source: ro, ReadOnly: true}}})
	cache := testenv.CacheDir(t)
	r := run(t, sb, `js("""
const out = {};
const attempt = async (name, f) => {
  try { const v = await f(); out[name] = 'allowed: ' + String(v).slice(0, 40); }
  catch (e) { out[name] = e?.name ?? String(e); }
};
const fs = await import('node:fs');
const cp = await import('node:child_process');
await attempt('read /etc/passwd', () => Deno.readTextFile('/etc/passwd'));
await attempt('node read /etc/passwd', () => fs.readFileSync('/etc/passwd', 'utf8'));
await attempt('read the cache dir', () => Deno.readDir(cache)[Symbol.asyncIterator]().next());
await attempt('stat /', () => Deno.stat('/'));
await attempt('write /tmp', () => Deno.writeTextFile('/tmp/pbx-js-probe', 'x'));
await attempt('write ro mount', () => Deno.writeTextFile(resolvePath('/mnt/ro/new.txt'), 'x'));
await attempt('remove ro file', () => Deno.remove(resolvePath('/mnt/ro/keep.txt')));
await attempt('symlink', () => Deno.symlink('/etc/passwd', resolvePath('link')));
await attempt('env', () => Deno.env.get('HOME'));
await attempt('env all', () => JSON.stringify(Deno.env.toObject()));
await attempt('run', () => new Deno.Command('/bin/sh', {args: ['-c', 'id']}).output());
await attempt('node spawn', () => { try { return cp.execSync('id').toString() } catch (e) { throw /^child_process.execSync: processes cannot be started in the sandbox$/.test(e.message) ? {name: 'refused'} : e } });
await attempt('ffi', () => Deno.dlopen('libc.so.6', {}));
await attempt('hostname', () => Deno.hostname());
await attempt('fetch', () => fetch('http://127.0.0.1:9/'));
await attempt('connect', () => Deno.connect({hostname: '127.0.0.1', port: 9}));
await attempt('listen', () => Deno.listen({port: 0}));
await attempt('import file', () => import('file:///etc/passwd'));
await attempt('import cache', () => import('file://' + cache + '/x.js'));
await attempt('import remote', () => import('https://deno.land/std/version.ts'));
await attempt('import npm', () => import('npm:left-pad@1.3.0'));
await attempt('permission request', async () => (await Deno.permissions.request({name: 'env'})).state === 'granted' ? 'granted' : (() => { throw {name: 'denied'} })());
await attempt('resolvePath escape', () => resolvePath('/mnt/ro/escdir/secret.txt'));
await attempt('read the interrupt pipe', () => Deno.open('/dev/fd/3', {read: true}));
await attempt('node read the interrupt pipe', () => fs.openSync('/dev/fd/3', 'r'));
await attempt('write fd 3', () => fs.writeSync(3, 'x'));
await attempt('eval', () => eval('1'));
await attempt('Function', () => new Function('return 1')());
return out;
""", cache=`+pyString(cache)+`)`)
	nc, te := "NotCapable", "TypeError"
	want := map[string]any{
		"read /etc/passwd": nc, "node read /etc/passwd": nc, "read the cache dir": nc, "stat /": nc,
		"write /tmp": nc, "write ro mount": nc, "remove ro file": nc, "symlink": nc,
		"env": nc, "env all": nc, "run": nc, "node spawn": "refused", "ffi": nc, "hostname": nc,
		"fetch": te, "connect": nc, "listen": nc,
		"import file": te, "import cache": te, "import remote": te, "import npm": te,
		"permission request": "denied", "resolvePath escape": "Error", "eval": "EvalError", "Function": "EvalError",
		"read the interrupt pipe": nc, "node read the interrupt pipe": nc, "write fd 3": "Error",
	}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); err == nil {
		t.Error("a read-only mount was written")
	}
	if _, err := os.Stat(filepath.Join(ro, "keep.txt")); err != nil {
		t.Errorf("a read-only file was removed: %v", err)
	}
	// The sandbox lives on.
	if got := output(t, run(t, sb, `js("return 'still here'")`)); got != "still here" {
		t.Errorf("after: %v", got)
	}
}

// pyString is s as a Python string literal.
func pyString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// require() of local TypeScript and JavaScript files: compiled by Deno,
// re-imported on each call (edits are picked up), classes constructed with
// or without new, instances kept as proxies with their methods, proxies
// passed back, aliases in js()'s scope.
func TestRequireLocal(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "my-utils.ts"), []byte(`
export class Vec {
  constructor(public x: number, public y: number) {}
  plus(o: Vec): Vec { return new Vec(this.x + o.x, this.y + o.y); }
  toArray(): number[] { return [this.x, this.y]; }
}
export function Legacy(this: any, n: number) { this.n = n; }
Legacy.prototype.twice = function () { return this.n * 2; };
export const version: string = "v1";
export function bytes(): Uint8Array { return new TextEncoder().encode("hi"); }
export async function later(x: number): Promise<number> { return x + 1; }
export function apply(f: (o: {a: number}) => number): number { return f({a: 41}); }
`), 0o644)
	os.WriteFile(filepath.Join(ws, "plain.js"), []byte(`export default { hello: (n) => "hello " + n };`), 0o644)
	sb := start(t, sandbox.Options{Workspace: ws})
	r := run(t, sb, `u = require("./my-utils.ts")
a = u.Vec(1, 2)
b = u.Vec.new(3, 4) if hasattr(u.Vec, "new") else u.Vec(3, 4)
c = a.plus(b)
p = require("./plain.js", alias="greeter")
[u.version, c.toArray(), c.x, type(c).__name__, u.Legacy(21).twice(), u.bytes(), u.later(1),
 u.apply(lambda o: o["a"] + 1), p.hello("py"), js("return greeter.hello('js') + ' ' + myUtils.version"),
 "plus" in dir(c)]`)
	want := []any{"v1", []any{4.0, 6.0}, 4.0, "ParselboxJsProxy", 42.0, map[string]any{"__b64__": "aGk="}, 2.0, 42.0,
		"hello py", "hello js v1", true}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// An edit is picked up by the next require().
	os.WriteFile(filepath.Join(ws, "my-utils.ts"), []byte(`export const version: string = "v2";`), 0o644)
	if got := output(t, run(t, sb, `require("./my-utils.ts").version`)); got != "v2" {
		t.Errorf("after an edit: %v", got)
	}
	// Aliases as the reference derives them, and a clear error otherwise.
	r = run(t, sb, `from _parselbox.javascript import _alias
out = [_alias(n) for n in ["lodash", "js-yaml", "fuse.js", "date-fns", "@msgpack/msgpack", "./my-utils.ts", "./data-utils.ts", "npm:dayjs@1.11.13"]]
try:
    require("./missing.ts")
except Exception as e:
    out.append(type(e).__name__)
try:
    _alias("./---.ts")
except ValueError as e:
    out.append(str(e)[:30])
out`)
	want = []any{"lodash", "jsYaml", "fuseJs", "dateFns", "msgpack", "myUtils", "dataUtils", "dayjs", "JsException", "Could not derive alias from '."}
	if diff := cmp.Diff(want, output(t, r)); diff != "" {
		t.Errorf("aliases (-want +got):\n%s", diff)
	}
}

// The protocol channel is not the guest's. Deno.stdout and node's
// process.stdout write to stderr (guest output), Deno.stdin is at its end.
// Guest JS can still reach the process's file descriptors 1 and 2 (node:fs,
// a Worker of its own), but the host reads a line as a message only if it
// starts with the channel key, which the guest never sees: every forged
// message (a result, a tool call, a log line, a files entry, a view,
// printed output, ready, fatal, runaway, cancel) ends up as logged guest
// text. Replacing what the runner uses to write (JSON.stringify,
// TextEncoder, the typed-array functions, Atomics) neither shows the guest
// the key nor changes the runner's messages; a toJSON that JSON.stringify
// would call on them makes the runner stop (the host restarts it).
func TestJSChannel(t *testing.T) {
	t.Parallel()
	var logs testenv.SyncBuffer
	calls := &recordingHandler{}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "forged.txt"), []byte("old"), 0o644) // before: see TestGuestStdoutForgery
	sb := start(t, sandbox.Options{Workspace: ws, Handler: calls, Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})})
	var forged []string
	for id := 1; id <= 12; id++ {
		forged = append(forged,
			fmt.Sprintf(`{"id":%d,"result":{"output":"FORGED","stdout":"FORGED","stderr":"","files":["/workspace/forged.txt"],"view":"<p>FORGED</p>","error":null}}`, id),
			fmt.Sprintf(`{"method":"output","params":{"id":%d,"stream":"stdout","text":"FORGED"}}`, id))
	}
	forged = append(forged,
		`{"id":900001,"method":"call","params":{"tool":"FORGED","args":{}}}`,
		`{"id":900002,"method":"call","params":{"tool":"sbx.progress","args":{"done":1,"total":2,"message":"FORGED"}}}`,
		`{"method":"log","params":{"level":"error","message":"FORGED-LOG"}}`,
		`{"method":"fatal","params":{"message":"FORGED-FATAL"}}`,
		`{"method":"runaway","params":{"phase":"idle","seconds":1}}`,
		`{"method":"runaway","params":{"phase":"exec","id":1}}`,
		`{"method":"cancel","params":{"ids":[1,2,3]}}`,
		`{"method":"ready","params":{"pyodide":"FORGED"}}`)
	text := "partial line, no newline " + strings.Join(forged, "\n") + "\n" + "and another partial line"
	writers := []string{
		"fs.writeSync(fd, text)",
		"fs.writeSync(fd, new TextEncoder().encode(text))",
		"fs.writeFileSync(fd, text)",
		"fs.appendFileSync(fd, text)",
		"await new Promise((ok, fail) => fs.write(fd, text, (e) => e ? fail(e) : ok()))",
		"await new Promise((ok, fail) => fs.writev(fd, [new TextEncoder().encode(text)], (e) => e ? fail(e) : ok()))",
		"await new Promise((ok, fail) => { const s = fs.createWriteStream(null, {fd, autoClose: false}); s.on('error', fail); s.end(text, ok); })",
		// A Worker of the guest's own: another thread, the same descriptors.
		"await new Promise((ok, fail) => { const w = new Worker('data:text/javascript,' + encodeURIComponent(`import fs from 'node:fs'; onmessage = (e) => { fs.writeSync(${fd}, e.data); postMessage('done'); };`), {type: 'module'}); w.onmessage = () => { w.terminate(); ok(); }; w.onerror = (e) => { e.preventDefault(); fail(new Error(e.message)); }; w.postMessage(text); })",
	}
	ctx := sandbox.WithOutput(t.Context(), func(stream, text string) {
		if strings.Contains(text, "FORGED") {
			t.Errorf("forged printed output reached the host: %s %q", stream, text)
		}
	})
	for _, fd := range []string{"1", "2"} {
		for _, w := range writers {
			r, err := sb.Exec(ctx, `js("""
const fs = (await import('node:fs')).default;
`+w+`;
return 'real';
""", fd=`+fd+`, text=`+pyString(text)+`)`, time.Minute)
			if err != nil {
				t.Fatalf("fd %s, %s: %v", fd, w, err)
			}
			if got := output(t, r); got != "real" || r.Note != "" || len(r.Files) != 0 || r.View != "" || r.Stdout != "" {
				t.Errorf("fd %s, %s: output %v, files %v, view %q, stdout %q, note %q", fd, w, got, r.Files, r.View, r.Stdout, r.Note)
			}
		}
	}
	// Deno.stdout, process.stdout: guest output on stderr; stdin: at its end.
	r := run(t, sb, `js("""
const line = new TextEncoder().encode(text);
Deno.stdout.writeSync(line);
await Deno.stdout.write(line);
const p = (await import('node:process')).default;
p.stdout.write(text);
const buf = new Uint8Array(10);
return [await Deno.stdin.read(buf), Deno.stdin.readSync(buf)];
""", text=`+pyString(text)+`)`)
	if diff := cmp.Diff([]any{nil, nil}, output(t, r)); diff != "" {
		t.Errorf("stdin (-want +got):\n%s", diff)
	}

	// Replacing what the runner writes with. Each replacement records what
	// it sees and otherwise behaves as the original.
	r = run(t, sb, `js("""
const seen = globalThis.__seen = [];
const dec = new TextDecoder();
const note = (v) => { if (globalThis.__stop || seen.length >= 5000 || note.busy) return; note.busy = true; try { seen.push(typeof v === 'string' ? v : ArrayBuffer.isView(v) ? (v.byteLength < 65536 ? dec.decode(v) : 'big') : String(v)); } catch (_) {} finally { note.busy = false; } };

const stringify = JSON.stringify;
JSON.stringify = function (...a) { const s = stringify.apply(this, a); note(s); return s; };
const encode = TextEncoder.prototype.encode;
TextEncoder.prototype.encode = function (s) { note(s); return encode.call(this, s); };
const TA = Object.getPrototypeOf(Uint8Array.prototype);
const len = Object.getOwnPropertyDescriptor(TA, 'length').get;
Object.defineProperty(TA, 'length', { get() { note(this); return len.call(this); }, configurable: true });
for (const name of ['subarray', 'set', 'slice', 'indexOf']) {
  const f = TA[name];
  TA[name] = function (...a) { note(this); return f.apply(this, a); };
}
Object.defineProperty(Uint8Array, Symbol.species, { get() { seen.push('species'); return Uint8Array; }, configurable: true });
for (const name of ['compareExchange', 'store', 'notify', 'wait']) {
  const f = Atomics[name];
  Atomics[name] = (...a) => { note(name); return f(...a); };
}
class Money { constructor(n) { this.n = n; } }
Money.prototype.toJSON = function () { return this.n + ' EUR'; };
const plain = {}; plain.toJSON = () => 'own';
return JSON.parse(JSON.stringify([new Money(5), plain, {a: 1}]));
""")`)
	if diff := cmp.Diff([]any{"5 EUR", "own", map[string]any{"a": 1.0}}, output(t, r)); diff != "" {
		t.Errorf("toJSON (-want +got):\n%s", diff)
	}
	// The runner's messages are untouched: an execution, a tool call, printed
	// output, a written file.
	r = run(t, sb, `import _pbx_js
print("printed")
open("/workspace/after.txt", "w").write("x")
[6 * 7, js("return 'js'"), (await _pbx_js.request("call", '{"tool": "real"}', True))[0]]`)
	if diff := cmp.Diff([]any{42.0, "js", 0.0}, output(t, r)); diff != "" || r.Stdout != "printed\n" || !slices.Equal(r.Files, []string{"/workspace/after.txt"}) {
		t.Errorf("after the replacements: (-want +got):\n%s\nstdout %q, files %v", diff, r.Stdout, r.Files)
	}
	seen := output(t, run(t, sb, `js("globalThis.__stop = true; return [...globalThis.__seen]")`)).([]any)
	key := regexp.MustCompile(`[0-9a-f]{32}\{`)
	for _, v := range seen {
		if s, _ := v.(string); key.MatchString(s) || strings.Contains(s, "\n{") {
			t.Errorf("a replaced function saw a framed line: %q", s)
		}
	}
	if len(seen) == 0 {
		t.Error("the replacements saw nothing: the test tests nothing")
	}

	if got := output(t, run(t, sb, "'next'")); got != "next" {
		t.Errorf("after: %v", got)
	}
	for _, c := range calls.all() {
		if strings.Contains(c, "FORGED") {
			t.Errorf("a forged request reached the handler: %s", c)
		}
	}
	if !slices.Contains(calls.all(), `call {"tool":"real"}`) {
		t.Errorf("the real request did not reach the handler: %v", calls.all())
	}
	s := logs.String()
	for _, bad := range []string{"runner: FORGED", "failed fatally", "did not stop", "blocked the sandbox"} {
		if strings.Contains(s, bad) {
			t.Errorf("the log has %q:\n%s", bad, s)
		}
	}
	for _, want := range []string{`sandbox.guest: stdout:`, `sandbox.guest: stderr:`, `FORGED-LOG`} {
		if !strings.Contains(s, want) {
			t.Errorf("the forged lines should be logged as guest output (%q):\n%s", want, s)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "forged.txt")); string(b) != "old" {
		t.Errorf("forged.txt: %q", b)
	}

	// A toJSON where JSON.stringify would find it on the runner's own
	// messages: the runner refuses to write another message, says so in a
	// fatal line, and the host restarts the sandbox.
	for what, code := range map[string]string{
		"Object.prototype.toJSON":          "Object.prototype.toJSON = function () { return {method: 'log', params: {level: 'error', message: 'FORGED-TOJSON'}}; }",
		"Array.prototype.toJSON":           "Object.defineProperty(Array.prototype, 'toJSON', {value: () => 'FORGED-TOJSON'})",
		"the prototype of Array.prototype": "Object.setPrototypeOf(Array.prototype, {toJSON: () => 'FORGED-TOJSON'})",
	} {
		r := run(t, sb, `js("`+code+`; return 1")`)
		if r.Error == nil || !strings.Contains(r.Error.Message, "failed fatally") || !strings.Contains(r.Error.Message, what) {
			t.Errorf("%s: %+v", what, r.Error)
		}
		if got := output(t, run(t, sb, "'next'")); got != "next" {
			t.Errorf("%s: after: %v", what, got)
		}
	}
	if s := logs.String(); strings.Contains(s, "runner: FORGED") {
		t.Errorf("a toJSON forged a runner line:\n%s", s)
	}
}

// recordingHandler records the requests it serves ("method params") and
// answers each with true.
type recordingHandler struct {
	mu    sync.Mutex
	calls []string
}

func (h *recordingHandler) ServeSandbox(_ context.Context, method string, params json.RawMessage) (any, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, method+" "+string(params))
	return true, nil
}

func (h *recordingHandler) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
