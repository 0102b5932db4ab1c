package host_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// wasmFixtures writes the assembled fixtures into dir/name.wasm.
func wasmFixtures(t *testing.T, dir string, names map[string]string) {
	t.Helper()
	for file, fixture := range names {
		p := filepath.Join(dir, file)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, testenv.Wasm(t, fixture), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WebAssembly from the sandbox's files: a library's exports, WASI commands
// over the same files (read-only mounts stay so, writes are reported), the
// clear error for other modules, the cache invalidated on change.
func TestWasm(t *testing.T) {
	t.Parallel()
	out, ro := t.TempDir(), t.TempDir()
	wasmFixtures(t, out, map[string]string{
		"add.wasm": "add", "foreign.wasm": "foreign", "bin/hello.wasm": "hello", "cat.wasm": "cat", "write.wasm": "write",
	})
	os.WriteFile(filepath.Join(ro, "ref.txt"), []byte("read-only data"), 0o644)
	in := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(in, []byte("input file"), 0o644)
	sb := newSandbox(t, host.Config{OutputDir: out, Files: []string{in}, Mounts: map[string]host.Mount{"data": {Source: ro}}})
	exec(t, sb, "from _parselbox.wasm import load_wasm")

	// A library: its exports are methods.
	if got := value(t, exec(t, sb, `lib = load_wasm("add.wasm"); [lib.add(20, 22), lib.mul(1.5, 4)]`)); !cmp.Equal(got, []any{42.0, 6.0}) {
		t.Errorf("library: %v", got)
	}
	// A module with other imports: the reference's error.
	e := raised(t, exec(t, sb, `load_wasm("foreign.wasm")`), "ImportError")
	if want := `"/workspace/foreign.wasm" imports from [env] — only self-contained and WASI (wasi_snapshot_preview1) modules are supported. Instantiate it in js() with a custom import object instead.`; e.Message != want {
		t.Errorf("foreign imports: %s", e.Message)
	}
	raised(t, exec(t, sb, `load_wasm("nope.wasm")`), "ImportError")

	// A WASI command.
	r := exec(t, sb, `hello = load_wasm("bin/hello.wasm"); r = hello(); [hello.__name__, r["exit"], r["stdout"].decode(), r["stderr"], r["missing"], help(hello).split("\n")[0]]`)
	if diff := cmp.Diff([]any{"hello", 0.0, "hello from wasi\n", "", []any{}, "WASI command 'hello' — runs sandboxed, in-process."}, value(t, r)); diff != "" {
		t.Errorf("hello (-want +got):\n%s", diff)
	}
	// stdin, files through the preopened "/" and through /workspace.
	r = exec(t, sb, `cat = load_wasm("cat.wasm")
def s(r): return {**r, "stdout": r["stdout"].decode("latin-1")}
[s(cat(stdin="from stdin")), list(cat(stdin=b"\xff\x00")["stdout"]), s(cat(["/files/in.txt"]))["stdout"],
 s(cat(["mnt/data/ref.txt"]))["stdout"], cat(["add.wasm"])["exit"], s(cat(["missing.txt"]))]`)
	want := []any{map[string]any{"exit": 0.0, "stdout": "from stdin", "stderr": "", "missing": []any{}},
		[]any{255.0, 0.0}, "input file", "read-only data", 0.0,
		map[string]any{"exit": 1.0, "stdout": "", "stderr": "cat: cannot open\n", "missing": []any{}}}
	if diff := cmp.Diff(want, value(t, r)); diff != "" {
		t.Errorf("cat (-want +got):\n%s", diff)
	}
	// Writes: reported, and refused on the read-only mount.
	r = exec(t, sb, `w = load_wasm("write.wasm")
[w(["workspace/made.txt"])["exit"], s(w(["/mnt/data/new.txt"])), open("made.txt").read()]`)
	if diff := cmp.Diff([]any{0.0, map[string]any{"exit": 1.0, "stdout": "", "stderr": "write: cannot open\n", "missing": []any{}}, "written by wasi\n"}, value(t, r)); diff != "" {
		t.Errorf("write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/workspace/made.txt"}, r.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a WASI write reached the read-only mount: %v", err)
	}
	// Extra preopens and argv0.
	if got := value(t, exec(t, sb, `import os; os.makedirs("sub", exist_ok=True); open("sub/x.txt", "w").write("in sub")
c = load_wasm("cat.wasm")(["x.txt", "5"], preopens={"/s": "sub"}, argv0="mycat"); [c["exit"], c["stdout"].decode()]`)); !cmp.Equal(got, []any{0.0, "in sub"}) {
		t.Errorf("preopens: %v", got)
	}

	// The cache follows the file: replaced by a command, add.wasm is one.
	os.WriteFile(filepath.Join(out, "add.wasm"), testenv.Wasm(t, "hello"), 0o644)
	if got := value(t, exec(t, sb, `load_wasm("add.wasm")()["stdout"].decode()`)); got != "hello from wasi\n" {
		t.Errorf("after the change: %v", got)
	}
}

// Every directory's bin/NAME.wasm is the bash() command NAME, found at each
// call, usable in pipelines.
func TestWasiBashCommands(t *testing.T) {
	t.Parallel()
	out, mnt := t.TempDir(), t.TempDir()
	wasmFixtures(t, mnt, map[string]string{"bin/wcat.wasm": "cat", "bin/foreign.wasm": "foreign", "bin/add.wasm": "add"})
	sb := newSandbox(t, host.Config{OutputDir: out, Mounts: map[string]host.Mount{"tools": {Source: mnt}}})

	if got := value(t, exec(t, sb, `bash("echo piped | wcat | tr a-z A-Z")`)); got != "PIPED\n" {
		t.Errorf("a mount's command in a pipeline: %q", got)
	}
	if got, _ := value(t, exec(t, sb, `sbx.info()["shell"]`)).(string); !strings.Contains(got, "WASI commands: add (/mnt/tools/bin/add.wasm), foreign (/mnt/tools/bin/foreign.wasm), wcat (/mnt/tools/bin/wcat.wasm)") {
		t.Errorf("sbx.info() shell: %q", got)
	}
	// Written during the session: a command at the next call.
	os.MkdirAll(filepath.Join(out, "bin"), 0o755)
	os.WriteFile(filepath.Join(out, "bin", "greet.wasm"), testenv.Wasm(t, "hello"), 0o644)
	if got := value(t, exec(t, sb, `bash("greet | tr a-z A-Z")`)); got != "HELLO FROM WASI\n" {
		t.Errorf("greet: %q", got)
	}
	if got := value(t, exec(t, sb, `bash("echo data > d.txt; wcat /workspace/d.txt; wcat d.txt")`)); got != "data\ndata\n" {
		t.Errorf("wcat of files: %q", got)
	}
	for cmd, want := range map[string]string{
		"foreign":          "bash exit 126: foreign: not a runnable WASI command",
		"add":              "bash exit 126: add: not a runnable WASI command",
		"wcat /etc/passwd": "bash exit 1: cat: cannot open",
	} {
		if msg := bashError(t, sb, "bash("+quote(cmd)+")"); msg != want {
			t.Errorf("%s: %q", cmd, msg)
		}
	}
	// Removed: no longer a command.
	os.Remove(filepath.Join(out, "bin", "greet.wasm"))
	if msg := bashError(t, sb, `bash("greet")`); !strings.HasPrefix(msg, "bash exit 127:") {
		t.Errorf("a removed command: %q", msg)
	}
}

// Break-in through WASI: the preopened "/" is the sandbox's root, not the
// host's; nothing outside the granted directories is read or written.
func TestWasiIsolation(t *testing.T) {
	t.Parallel()
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	out, mnt := t.TempDir(), t.TempDir()
	wasmFixtures(t, out, map[string]string{"cat.wasm": "cat", "write.wasm": "write"})
	os.WriteFile(filepath.Join(mnt, "real.txt"), []byte("inside"), 0o644)
	sb := newSandbox(t, host.Config{OutputDir: out, Mounts: map[string]host.Mount{"data": {Source: mnt, Mode: "rw"}}})
	exec(t, sb, "from _parselbox.wasm import load_wasm; cat = load_wasm('cat.wasm'); write = load_wasm('write.wasm')")
	// The control: an allowed read shows, so a leak would.
	if got := value(t, exec(t, sb, `cat(["/mnt/data/real.txt"])["stdout"].decode()`)); got != "inside" || !leaked(got) {
		t.Fatalf("control: %v", got)
	}
	os.Symlink(secret, filepath.Join(mnt, "leak.txt"))
	os.Symlink(secretDir, filepath.Join(mnt, "escape"))
	for name, args := range map[string]string{
		"etc passwd":   `["/etc/passwd"]`,
		"host path":    `[` + quote(secret) + `]`,
		"dot-dot":      `["../../../../etc/passwd"]`,
		"dot-dot ws":   `["workspace/../../etc/passwd"]`,
		"symlink file": `["/mnt/data/leak.txt"]`,
		"symlink dir":  `["/mnt/data/escape/secret.txt"]`,
		"preopen /":    `["etc/passwd", "5"], preopens={"/host": "/"}`,
		"preopen up":   `["etc/passwd", "5"], preopens={"/up": "../../.."}`,
		"preopen up 2": `["../../etc/passwd", "5"], preopens={"/up": "/mnt/data"}`,
		"preopen link": `["leak.txt", "5"], preopens={"/m": "/mnt/data"}`,
		"preopen dir":  `["secret.txt", "5"], preopens={"/m": "/mnt/data/escape"}`,
	} {
		r := exec(t, sb, "cat("+args+")")
		if leaked(string(r.Output)) || r.Error != nil && leaked(r.Error.Message) {
			t.Errorf("%s: leaked: %s %v", name, r.Output, r.Error)
		}
		if r.Error == nil && !strings.Contains(string(r.Output), `"exit": 1`) && !strings.Contains(string(r.Output), `"exit":1`) {
			t.Errorf("%s: %s", name, r.Output)
		}
	}
	exec(t, sb, `[write(["/mnt/data/leak.txt"]), write(["../../outside.txt"]), write(["/tmp/parselbox-wasi-escape.txt"])]`)
	if b, _ := os.ReadFile(secret); string(b) != "top secret" {
		t.Errorf("the secret was overwritten: %q", b)
	}
	for _, p := range []string{filepath.Join(filepath.Dir(out), "outside.txt"), "/outside.txt", "/tmp/parselbox-wasi-escape.txt"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a write left the sandbox: %v", p, err)
		}
	}
}
