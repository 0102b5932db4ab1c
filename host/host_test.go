package host_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/hosttest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// The helpers of the host's tests: see package hosttest.
var (
	newSandbox = hosttest.New
	exec       = hosttest.Run
	value      = hosttest.Value
)

func raised(t *testing.T, r *host.Result, typ string) *host.Error {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("want %s, got output %s", typ, r.Output)
	}
	if typ != "" && r.Error.Type != typ {
		t.Fatalf("want %s, got %s: %s", typ, r.Error.Type, r.Error.Message)
	}
	return r.Error
}

func TestWorkspaceFilesAndMounts(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	in := filepath.Join(t.TempDir(), "data.csv")
	os.WriteFile(in, []byte("a,b"), 0o644)
	ro, rw := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ro, "ref.txt"), []byte("ref"), 0o644)
	sb := newSandbox(t, host.Config{
		OutputDir: out,
		Files:     []string{in},
		Mounts: map[string]host.Mount{
			"data":    {Source: ro},
			"scratch": {Source: rw, Mode: "rw"},
		},
	})
	r := exec(t, sb, `open("result.txt", "w").write(open("/files/data.csv").read().upper())
open("/mnt/scratch/note.txt", "w").write("rw ok")
open("/mnt/data/ref.txt").read()`)
	if got := value(t, r); got != "ref" {
		t.Errorf("ro mount read: %v", got)
	}
	if diff := cmp.Diff([]string{"/workspace/result.txt", "/mnt/scratch/note.txt"}, r.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "result.txt")); string(b) != "A,B" {
		t.Errorf("output dir got %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(rw, "note.txt")); string(b) != "rw ok" {
		t.Errorf("rw mount got %q", b)
	}

	// A write to the read-only mount fails in Python and never reaches the host.
	// EROFS, as a read-only mount says on Linux (Pyodide numbers it 69; its
	// EACCES is 2, which read as ENOENT to users).
	e := raised(t, exec(t, sb, `open("/mnt/data/new.txt", "w").write("x")`), "OSError")
	if want := "[Errno 69] Read-only file system: '/mnt/data/new.txt'"; e.Message != want {
		t.Errorf("message: %s", e.Message)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the write reached the host: %v", err)
	}
	if got := value(t, exec(t, sb, "import os, errno\ntry:\n    os.remove('/mnt/data/ref.txt')\nexcept OSError as e:\n    r = errno.errorcode[e.errno]\nr")); got != "EROFS" {
		t.Errorf("os.remove on the read-only mount: %v, want EROFS", got)
	}
	if _, err := os.Stat(filepath.Join(ro, "ref.txt")); err != nil {
		t.Errorf("ro file removed: %v", err)
	}
	// The sandbox is fine after the refusals.
	if got := value(t, exec(t, sb, "'ok'")); got != "ok" {
		t.Errorf("after refusal: %v", got)
	}
}

func TestReadWriteFile(t *testing.T) {
	t.Parallel()
	ro := t.TempDir()
	os.WriteFile(filepath.Join(ro, "in.txt"), []byte("input"), 0o644)
	sb := newSandbox(t, host.Config{Mounts: map[string]host.Mount{"data": {Source: ro}}})

	if err := sb.WriteFile("notes/hello.txt", []byte("héllo")); err != nil {
		t.Fatal(err)
	}
	if err := sb.WriteFile("/workspace/blob.bin", []byte{0, 1, 2, 255}); err != nil {
		t.Fatal(err)
	}
	if got := value(t, exec(t, sb, "[open('notes/hello.txt').read(), list(open('blob.bin','rb').read())]")); !cmp.Equal(got, []any{"héllo", []any{0.0, 1.0, 2.0, 255.0}}) {
		t.Errorf("sandbox sees %v", got)
	}
	exec(t, sb, "open('made.txt', 'w').write('from python')")
	for path, want := range map[string]string{"made.txt": "from python", "/workspace/made.txt": "from python", "/mnt/data/in.txt": "input", "/workspace/./notes/../made.txt": "from python"} {
		b, err := sb.ReadFile(path)
		if err != nil || string(b) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", path, b, err, want)
		}
	}
	for _, bad := range []string{"/etc/passwd", "../../etc/passwd", "/workspace/../../etc/passwd", "/workspacex/f", "/tmp/x", "/mnt/other/x"} {
		if _, err := sb.ReadFile(bad); !errors.Is(err, host.ErrPathNotOnDisk) {
			t.Errorf("ReadFile(%q): want ErrPathNotOnDisk, got %v", bad, err)
		}
		if err := sb.WriteFile(bad, []byte("x")); !errors.Is(err, host.ErrPathNotOnDisk) {
			t.Errorf("WriteFile(%q): want ErrPathNotOnDisk, got %v", bad, err)
		}
	}
	if err := sb.WriteFile("/mnt/data/x", []byte("x")); !errors.Is(err, host.ErrReadOnly) {
		t.Errorf("WriteFile to ro mount: %v", err)
	}
	if _, err := sb.ReadFile("missing.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing): %v", err)
	}
	// A symlink inside the workspace that points outside is refused.
	exec(t, sb, "1") // the workspace exists
	ws := workspaceDir(t, sb)
	if err := os.Symlink("/etc", filepath.Join(ws, "etc")); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.ReadFile("etc/passwd"); !errors.Is(err, host.ErrPathNotOnDisk) {
		t.Errorf("ReadFile through a symlink out of the workspace: %v", err)
	}
}

// workspaceDir finds the host directory of /workspace through a marker
// file whose name no other test's workspace has.
func workspaceDir(t *testing.T, sb *host.Sandbox) string {
	t.Helper()
	marker := ".marker-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
	if err := sb.WriteFile(marker, nil); err != nil {
		t.Fatal(err)
	}
	var found string
	filepath.WalkDir(os.TempDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == marker && strings.Contains(p, "parselbox-") {
			found = filepath.Dir(p)
			return fs.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Fatal("workspace not found")
	}
	return found
}

func TestTemporaryWorkspaceRemovedOnClose(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{})
	exec(t, sb, "open('x.txt','w').write('x')")
	ws := workspaceDir(t, sb)
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary workspace left behind: %v", err)
	}
}

func TestEnvironmentIsolation(t *testing.T) {
	t.Setenv("PARSELBOX_TEST_HOST_SECRET", "hunter2")
	sb := newSandbox(t, host.Config{Env: map[string]string{"GREETING": "hi"}})
	got := value(t, exec(t, sb, "import os; dict(os.environ)"))
	env := got.(map[string]any)
	if env["GREETING"] != "hi" {
		t.Errorf("configured env missing: %v", env)
	}
	for k, v := range env {
		if strings.Contains(k, "SECRET") || v == "hunter2" || k == "PATH" || k == "DENO_DIR" {
			t.Errorf("host environment leaked: %s=%v", k, v)
		}
	}
	// Deno's own view of the environment is closed too.
	raised(t, exec(t, sb, "from js import Deno"), "ImportError")
	checkPidEnv(t, sb.PID())
}

// checkPidEnv reads the Deno process's environment from /proc.
func checkPidEnv(t *testing.T, pid int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if strings.Contains(kv, "hunter2") || strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") {
			t.Errorf("the Deno process inherited %q", kv)
		}
	}
}

func TestFilesystemIsolation(t *testing.T) {
	t.Parallel()
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	mnt := t.TempDir()
	// A link within the mount is fine.
	os.WriteFile(filepath.Join(mnt, "real.txt"), []byte("inside"), 0o644)
	os.Symlink(filepath.Join(mnt, "real.txt"), filepath.Join(mnt, "link.txt"))
	sb := newSandbox(t, host.Config{Mounts: map[string]host.Mount{"data": {Source: mnt}}})

	// Each attempt returns what it read, so that a read that succeeded
	// shows in the output; the control reads an allowed file the same way,
	// which proves that the leak check can fire.
	control := value(t, exec(t, sb, `open("/mnt/data/link.txt").read()`))
	if control != "inside" || !leaked(control) {
		t.Fatalf("control read: %v", control)
	}
	notFound := func(path string) [2]string {
		return [2]string{"FileNotFoundError", "[Errno 44] No such file or directory: '" + path + "'"}
	}
	attempts := map[string]struct {
		code string
		want [2]string // error type, message
	}{
		"python open":          {`open("/etc/passwd").read()`, notFound("/etc/passwd")},
		"python secret":        {`open(` + quote(secret) + `).read()`, notFound(secret)},
		"traversal":            {`open("/workspace/../../../../etc/passwd").read()`, notFound("/workspace/../../../../etc/passwd")},
		"js import Deno":       {`from js import Deno; Deno.readTextFileSync("/etc/passwd")`, [2]string{"ImportError", "cannot import name 'Deno' from 'js' (unknown location)"}},
		"js globalThis":        {`import js; js.globalThis.Deno.readTextFileSync("/etc/passwd")`, [2]string{"AttributeError", "globalThis"}},
		"function constructor": {`import js; js.Object.constructor("return Deno")().readTextFileSync("/etc/passwd")`, [2]string{"JsException", "EvalError: Code generation from strings disallowed for this context"}},
		"js fetch file":        {`import js; await (await js.fetch("file:///etc/passwd")).text()`, [2]string{"JsException", "TypeError: fetch: the file: scheme is not allowed in the sandbox (only http:, https: and data: URLs)"}},
		"pyfetch file":         {`from pyodide.http import pyfetch; await (await pyfetch("file://` + secret + `")).string()`, [2]string{"AbortError", "fetch: the file: scheme is not allowed in the sandbox (only http:, https: and data: URLs)"}},
		"pyodide mountNodeFS":  {`import pyodide_js; pyodide_js.mountNodeFS("/hostetc", "/etc"); open("/hostetc/passwd").read()`, [2]string{"JsException", "Error: mountNodeFS is not available in the sandbox (the host installs packages and mounts)"}},
		"emscripten NODEFS":    {`import pyodide_js; FS = pyodide_js.FS; FS.mkdir("/h"); FS.mount(FS.filesystems.NODEFS, pyodide_js.ffi.to_js({"root": "/etc"}), "/h"); open("/h/passwd").read()`, [2]string{"AttributeError", "NODEFS"}},
		"emscripten mount":     {`import pyodide_js; from pyodide.ffi import to_js; FS = pyodide_js.FS; FS.mkdir("/h2"); FS.mount(to_js({}), to_js({"root": "/etc"}), "/h2")`, [2]string{"JsException", "Error: FS.mount: only MEMFS can be mounted in the sandbox"}},
		"run_js":               {`from pyodide.code import run_js; run_js("Deno.readTextFileSync('/etc/passwd')")`, [2]string{"ImportError", "cannot import name 'eval' from 'js' (unknown location)"}},
		"guest symlink":        {`import os; os.symlink("/etc/passwd", "/workspace/passwd"); open("/workspace/passwd").read()`, [2]string{"PermissionError", "[Errno 63] Operation not permitted: '/etc/passwd' -> '/workspace/passwd'"}},
	}
	for name, a := range attempts {
		r := exec(t, sb, a.code)
		if r.Error == nil {
			t.Errorf("%s: read succeeded: %s", name, r.Output)
			continue
		}
		if leaked(string(r.Output)) || leaked(r.Error.Message) {
			t.Errorf("%s: leaked: %s %s", name, r.Output, r.Error.Message)
		}
		if r.Error.Type != a.want[0] || r.Error.Message != a.want[1] && a.want[1] != "" {
			t.Errorf("%s: %s: %s; want %s: %s", name, r.Error.Type, r.Error.Message, a.want[0], a.want[1])
		}
	}
	// The sandbox survives all of this.
	if got := value(t, exec(t, sb, "'still here'")); got != "still here" {
		t.Errorf("after attempts: %v", got)
	}

	// A symlink in a mount that leads out of it would be followed by Deno's
	// permission check: without Landlock, which checks the resolved path
	// (see TestSymlinkOutOfMountWithLandlock), the host refuses to start.
	os.MkdirAll(filepath.Join(mnt, "sub"), 0o755)
	os.Symlink(secretDir, filepath.Join(mnt, "sub", "escape"))
	_, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t),
		Mounts:      map[string]host.Mount{"data": {Source: mnt}},
		Confinement: "off",
	})
	var ce *host.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "/mnt/data/sub/escape is a symlink to "+secretDir) {
		t.Errorf("a mount with an escaping symlink: %v", err)
	}
}

// leaked reports whether s holds the content of a file the sandbox must
// not read (or, for the control, the one it may).
func leaked(v any) bool {
	s, _ := v.(string)
	return strings.Contains(s, "root:") || strings.Contains(s, "top secret") || strings.Contains(s, "inside")
}

// The output directory is checked for escaping symlinks as mounts are.
func TestOutputDirSymlinkRefused(t *testing.T) {
	t.Parallel()
	out, secretDir := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(out, "reports"), 0o755)
	os.Symlink(secretDir, filepath.Join(out, "reports", "leak"))
	// Without Landlock (confinement off) Deno's permissions would follow
	// the link, so the host refuses to start; with it, the link is allowed
	// and the kernel refuses the read (TestSymlinkOutOfMountWithLandlock).
	_, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t), OutputDir: out,
		Confinement: "off",
	})
	var ce *host.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "/workspace/reports/leak is a symlink to "+secretDir+", outside the directories the sandbox may read") {
		t.Errorf("an output directory with an escaping symlink: %v", err)
	}
	// A link that stays inside is fine.
	os.Remove(filepath.Join(out, "reports", "leak"))
	os.Symlink(filepath.Join(out, "reports"), filepath.Join(out, "again"))
	sb := newSandbox(t, host.Config{OutputDir: out})
	if got := value(t, exec(t, sb, "import os; os.path.isdir('again')")); got != true {
		t.Errorf("a link inside the output directory: %v", got)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// No processes: Deno runs with --deny-run (and no env, FFI or system
// access), and Python's ways to start one raise OSError.
func TestNoSubprocess(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{})
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(sb.PID()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(cmdline), "\x00")
	for _, flag := range []string{"--deny-run", "--deny-env", "--deny-ffi", "--deny-sys"} {
		if !slices.Contains(args, flag) {
			t.Errorf("the Deno process runs without %s: %q", flag, args)
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--allow-run") || strings.HasPrefix(a, "--allow-all") || a == "-A" {
			t.Errorf("the Deno process runs with %s", a)
		}
	}
	for name, tc := range map[string]struct{ code, typ, msg string }{
		"subprocess":      {`import subprocess; subprocess.run(["id"])`, "OSError", "[Errno 138] emscripten does not support processes."},
		"os.system":       {`import os; os.system("id")`, "OSError", "[Errno 52] os.system: processes cannot be started in the sandbox"},
		"os.fork":         {`import os; os.fork()`, "OSError", "[Errno 52] os.fork: processes cannot be started in the sandbox"},
		"os.execv":        {`import os; os.execv("/bin/id", ["id"])`, "OSError", "[Errno 52] os.execv: processes cannot be started in the sandbox"},
		"js Deno.Command": {`import js; js.Deno.Command.new("id").outputSync()`, "AttributeError", "Deno"},
	} {
		r := exec(t, sb, tc.code)
		if r.Error == nil || r.Error.Type != tc.typ || r.Error.Message != tc.msg {
			t.Errorf("%s: got %+v, want %s: %s", name, r.Error, tc.typ, tc.msg)
		}
	}
}

func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("pong")) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	code := `from pyodide.http import pyfetch
r = await pyfetch("http://` + addr + `/ping")
await r.string()`

	off := newSandbox(t, host.Config{})
	// Refused by Deno's net permission (the kernel's own refusal is tested
	// with Deno's permissions widened, in package confine), naming the
	// address: not any error.
	refused := func(what string, r *host.Result) {
		t.Helper()
		if r.Error == nil {
			t.Errorf("%s reachable: %s", what, r.Output)
			return
		}
		if want := `Requires net access to "` + addr + `"`; r.Error.Type != "AbortError" || !strings.Contains(r.Error.Message, want) {
			t.Errorf("%s: %s: %s, want AbortError: %s", what, r.Error.Type, r.Error.Message, want)
		}
	}
	refused("by default, "+addr, exec(t, off, code))
	allowed := newSandbox(t, host.Config{AllowNet: []string{addr}})
	if got := value(t, exec(t, allowed, code)); got != "pong" {
		t.Errorf("allowlisted address: %v", got)
	}
	other := newSandbox(t, host.Config{AllowNet: []string{"127.0.0.1:1"}})
	refused("outside the allowlist, "+addr, exec(t, other, code))
	open := newSandbox(t, host.Config{Network: true})
	if got := value(t, exec(t, open, code)); got != "pong" {
		t.Errorf("network=true: %v", got)
	}
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{Memory: 256})
	raised(t, exec(t, sb, "b = bytearray(600 * 1024 * 1024)"), "MemoryError")
	if got := value(t, exec(t, sb, "c = bytearray(50 * 1024 * 1024); len(c)")); got != 50.0*1024*1024 {
		t.Errorf("after MemoryError: %v", got)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	for name, cfg := range map[string]host.Config{
		"missing mount": {Mounts: map[string]host.Mount{"x": {Source: "/nonexistent/dir"}}},
		"bad mode":      {Mounts: map[string]host.Mount{"x": {Source: t.TempDir(), Mode: "wx"}}},
		"bad allow_net": {AllowNet: []string{"localhost"}},
		"missing file":  {Files: []string{"/nonexistent/file"}},
		"bad runtime":   {RuntimeDir: t.TempDir()},
	} {
		if cfg.RuntimeDir == "" {
			cfg.RuntimeDir = rt.Dir
		}
		_, err := host.New(t.Context(), cfg)
		var ce *host.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a ConfigError, got %v", name, err)
		}
	}
}

// TestOutputDirChecked: an output directory that cannot back /workspace is
// a configuration error that says why, before any sandbox starts; a
// missing parent is not created.
func TestOutputDirChecked(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	missing := filepath.Join(t.TempDir(), "none")
	for dir, want := range map[string]string{
		"/proc/1":                             "output_dir: /proc/1 is not a directory parselbox can write to: ",
		file:                                  "output_dir: " + file + " is not a directory",
		filepath.Join(missing, "deep", "out"): "output_dir: " + filepath.Join(missing, "deep", "out") + ": its parent " + filepath.Join(missing, "deep") + " does not exist (create it first)",
	} {
		_, err := host.New(t.Context(), host.Config{RuntimeDir: rt.Dir, CacheDir: testenv.CacheDir(t), OutputDir: dir})
		var ce *host.ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want a ConfigError starting %q", dir, err, want)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the missing parent was created: %v", err)
	}
	// A new directory in an existing one is made.
	out := filepath.Join(t.TempDir(), "out")
	sb, err := host.New(t.Context(), host.Config{RuntimeDir: rt.Dir, CacheDir: testenv.CacheDir(t), OutputDir: out})
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		t.Errorf("output dir not made: %v", err)
	}
}

// Code that swallows the interrupt at its timeout is stopped by the kill
// after InterruptGrace: the execution fails as timed out, says that the
// state was lost, and the next one runs on a fresh sandbox (a short
// InterruptGrace keeps the test from waiting the default 5 s).
func TestTimeoutIgnoredKills(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{Timeout: time.Second, InterruptGrace: 100 * time.Millisecond})
	exec(t, sb, "kept = 'yes'")
	pid := sb.PID()
	e := raised(t, exec(t, sb, "while True:\n    try:\n        while True: pass\n    except BaseException:\n        pass"), "")
	if !strings.Contains(e.Message, "timed out after 1s") || !strings.Contains(e.Message, "state was lost") {
		t.Errorf("error: %s: %s", e.Type, e.Message)
	}
	raised(t, exec(t, sb, "kept"), "NameError")
	if got := sb.PID(); got == pid {
		t.Errorf("the sandbox was not restarted (pid %d)", got)
	}
}

// Python sees what bash changed in the workspace within the same execution
// (bash reaches the files through the host's file system, not Python's):
// a file bash removed can be created again, and a file bash replaced by a
// directory is a directory.
func TestPythonSeesBashChanges(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{})
	r := exec(t, sb, `import os
open("/workspace/a.txt", "w").write("1")
open("/workspace/b", "w").write("a file")
seen = [os.path.exists("/workspace/a.txt"), os.path.isfile("/workspace/b")]
bash("rm /workspace/a.txt /workspace/b; mkdir /workspace/b; echo in > /workspace/b/x.txt")
open("/workspace/a.txt", "w").write("2")
seen + [open("/workspace/a.txt").read(), os.path.isdir("/workspace/b"), open("/workspace/b/x.txt").read()]`)
	if diff := cmp.Diff([]any{true, true, "2", true, "in\n"}, value(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
