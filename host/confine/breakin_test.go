package confine_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/confine"
	"github.com/parselbox/parselbox/internal/testenv"
)

// The break-in suite with the first wall removed: Deno's own permissions
// are widened to everything (read and write anywhere, all network, run,
// env, sys, ffi) and Python is handed Deno's whole API and raw system calls
// (confine.WidenDeno), as a bug in Deno's permission checks, in Pyodide or
// in the runner would hand them to an attacker. Every attack must still
// fail, now stopped by the kernel; a control sandbox without confinement
// shows that the same attacks succeed there, so the widening is real.

// target is what the attacks aim at: host files next to the workspace, a
// read-only mount, a loopback port the sandbox may reach and one it may
// not, a unix socket, and a process of the host.
type target struct {
	dir, ws, ro, secret string
	allowed, forbidden  int
	forbiddenHits       atomic.Int64
	unixSocket          string
	sleeper             *exec.Cmd
}

func newTarget(t *testing.T) *target {
	dir := t.TempDir()
	tg := &target{dir: dir, ws: filepath.Join(dir, "ws"), ro: filepath.Join(dir, "ro"), secret: filepath.Join(dir, "secret.txt")}
	for _, d := range []string{tg.ws, tg.ro} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(tg.secret, []byte("host secret"), 0o600)
	os.WriteFile(filepath.Join(tg.ro, "data.txt"), []byte("read-only data"), 0o644)
	listen := func(serve func(net.Conn)) int {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				serve(c)
				c.Close()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port
	}
	tg.allowed = listen(func(c net.Conn) { io.WriteString(c, "hello from the allowed port\n") })
	tg.forbidden = listen(func(c net.Conn) {
		tg.forbiddenHits.Add(1)
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond)) // a request, if any
		c.Read(make([]byte, 4096))
		io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Length: 17\r\n\r\nforbidden secret\n")
	})
	tg.unixSocket = filepath.Join(dir, "host.sock")
	uln, err := net.Listen("unix", tg.unixSocket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uln.Close() })
	tg.sleeper = exec.Command("sleep", "600")
	if err := tg.sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.sleeper.Process.Kill(); tg.sleeper.Wait() })
	return tg
}

func (tg *target) sandbox(t *testing.T, mode string, memory int) (*host.Sandbox, *testenv.SyncBuffer) {
	t.Helper()
	logs := &testenv.SyncBuffer{}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t),
		OutputDir:   tg.ws,
		Mounts:      map[string]host.Mount{"ro": {Source: tg.ro}},
		AllowNet:    []string{"127.0.0.1:" + strconv.Itoa(tg.allowed)},
		Memory:      memory,
		Confinement: mode,
		Logger:      hclog.New(&hclog.LoggerOptions{Output: io.MultiWriter(logs, testWriter{t}), Level: hclog.Debug}),
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, logs
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// attempt runs Python with D bound to Deno (and J converting a dict to a
// JS object) and returns "OK:<value>" or
// "ERR:<what was raised>".
func attempt(t *testing.T, sb *host.Sandbox, code string) string {
	t.Helper()
	src := "from js import console, Object\nfrom pyodide.ffi import to_js\nD = console.Deno\n" +
		"def J(d):\n    return to_js(d, dict_converter=Object.fromEntries)\ntry:\n" + indent(code) +
		"\n    _out = 'OK:' + str(_r)\nexcept BaseException as e:\n    _out = 'ERR:' + type(e).__name__ + ': ' + str(e)\n_out"
	r, err := sb.Execute(t.Context(), src)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if r.Error != nil {
		return "ERR:" + r.Error.Type + ": " + r.Error.Message
	}
	var s string
	if _, err := fmt.Sscanf(string(r.Output), "%q", &s); err != nil {
		t.Fatalf("output %s", r.Output)
	}
	return s
}

func indent(code string) string {
	return "    " + strings.ReplaceAll(code, "\n", "\n    ")
}

func needKernel(t *testing.T) {
	t.Helper()
	if rep, err := confine.Check(&confine.Spec{Mode: confine.Required}); err != nil {
		testenv.Missing(t, testenv.RequireConfinementEnv, "the kernel layers cannot all be applied here (%v; %s): the break-in suite with Deno widened does not run", err, rep.Summary())
	}
}

// The attacks and what must stop them.
type attack struct {
	name, code string
	// refused is the text of the error the kernel's layer gives.
	refused string
	layer   string
	// control, if set, is what the attack yields without confinement.
	control string
}

// script is where an attack writes a program to run.
func (tg *target) script() string { return filepath.Join(tg.ws, "evil.sh") }

func (tg *target) attacks() []attack {
	q := strconv.Quote
	eacces, eperm := "(os error 13)", "(os error 1)"
	return []attack{
		{"read /etc/shadow", "_r = D.readTextFileSync('/etc/shadow')", eacces, "landlock", "OK:root:"},
		{"read a host file next to the workspace", "_r = D.readTextFileSync(" + q(tg.secret) + ")", eacces, "landlock", "OK:host secret"},
		{"fetch a host file as a file: URL", "fetch = console.fetch\n_r = await (await fetch('file://' + " + q(tg.secret) + ")).text()", eacces, "landlock", "OK:host secret"},
		{"read another process's environment", "_r = D.readTextFileSync('/proc/1/environ')", eacces, "landlock", ""},
		{"list the host's root", "_r = [e.name for e in D.readDirSync('/')]", eacces, "landlock", "OK:["},
		{"write next to the workspace", "D.writeTextFileSync(" + q(filepath.Join(tg.dir, "pwned.txt")) + ", 'x'); _r = 'written'", eacces, "landlock", "OK:written"},
		// Deno's cache is the sandbox's own copy, but for the runner's
		// compiled modules: a link to the shared ones, read-only.
		{"write the shared compiled runner through the link", runnerGen + "if not D.lstatSync(g).isSymlink: raise RuntimeError('no link: ' + g)\nD.writeTextFileSync(g + '/pwned.js', 'x'); _r = 'written'", eacces, "landlock", ""},
		// A hard link in the writable copy would be the shared file itself
		// (before the link is removed, below).
		{"hard-link the shared compiled runner into the private cache", runnerGen + "p = D.env.get('DENO_DIR') + '/pwned.js'\nD.linkSync(g + '/deps.ts.js', p)\nD.writeTextFileSync(p, 'x'); _r = 'written'", "(os error 18)", "landlock", ""},
		{"replace the link to the shared compiled runner", runnerGen + "D.removeSync(g); D.symlinkSync(" + q(tg.dir) + ", g); _r = 'relinked'", eacces, "landlock", ""},
		{"write into the read-only mount", "D.writeTextFileSync(" + q(filepath.Join(tg.ro, "pwned.txt")) + ", 'x'); _r = 'written'", eacces, "landlock", "OK:written"},
		{"run a script it wrote", "D.writeTextFileSync(" + q(tg.script()) + ", '#!/bin/sh\\n/usr/bin/touch " + filepath.Join(tg.dir, "spawned") + "\\n', J({'mode': 0o755}))\n_r = D.Command.new(" + q(tg.script()) + ").outputSync().code", eperm, "seccomp", "OK:0"},
		{"connect to a loopback port not allowed", "c = await D.connect(J({'hostname': '127.0.0.1', 'port': " + strconv.Itoa(tg.forbidden) + "}))\nfrom js import Uint8Array\nu = Uint8Array.new(64)\nn = await c.read(u)\n_r = bytes(u.to_py()[:n]).decode()", eacces, "landlock-net", "OK:HTTP/1.0 200 OK"},
		{"fetch from a loopback port not allowed", "from js import fetch\ntry:\n    _r = await (await fetch('http://127.0.0.1:" + strconv.Itoa(tg.forbidden) + "/')).text()\nexcept Exception as e:\n    raise RuntimeError(f'{e}: {e.cause}')", eacces, "landlock-net", "OK:forbidden secret"},
		{"listen on a port", "_r = D.listen(J({'hostname': '127.0.0.1', 'port': 0})).addr.port", eacces, "landlock-net", "OK:"},
		{"connect to a host unix socket", "c = await D.connect(J({'transport': 'unix', 'path': " + q(tg.unixSocket) + "})); _r = 'connected'", eperm, "seccomp", "OK:connected"},
		{"spawn a process", "_r = D.Command.new('/bin/sh', J({'args': ['-c', '/usr/bin/touch " + filepath.Join(tg.dir, "spawned") + "']})).outputSync().code", eperm, "seccomp", "OK:0"},
		{"spawn Deno itself", "_r = D.Command.new(D.execPath(), J({'args': ['--version']})).outputSync().code", eperm, "seccomp", "OK:0"},
		{"fork bomb", "n = 0\nfor i in range(200):\n    try:\n        D.Command.new('/bin/true').spawn(); n += 1\n    except Exception as e:\n        last = str(e)\nif n: raise RuntimeError(f'{n} processes started')\nraise RuntimeError(last)", eperm, "seccomp", ""},
		{"signal a host process", "D.kill(" + strconv.Itoa(tg.sleeper.Process.Pid) + ", 'SIGKILL'); _r = 'killed'", "Operation not permitted", "landlock scope, user", ""},
	}
}

// runnerGen sets g to the directory of the runner's compiled modules in
// the sandbox's Deno cache.
const runnerGen = "g = D.env.get('DENO_DIR') + '/gen/file' + D.mainModule[len('file://'):].rsplit('/', 1)[0]\n"

// syscalls are made raw, through FFI: each must fail with its errno.
func (tg *target) syscalls() []struct {
	name  string
	call  string
	errno int
	layer string
} {
	pid := strconv.Itoa(tg.sleeper.Process.Pid)
	type sc = struct {
		name  string
		call  string
		errno int
		layer string
	}
	const eperm, eacces, enosys = 1, 13, 38
	return []sc{
		{"fork", "console.sys(57)", eperm, "seccomp"},
		{"clone3", "console.sys(435, 0, 0)", enosys, "seccomp"},
		{"vfork", "console.sys(58)", eperm, "seccomp"},
		{"socket(AF_UNIX)", "console.sys(41, 1, 1, 0)", eperm, "seccomp"},
		{"socket(AF_NETLINK)", "console.sys(41, 16, 3, 0)", eperm, "seccomp"},
		{"ptrace(PTRACE_ATTACH) a host process", "console.sys(101, 16, " + pid + ", 0, 0)", eperm, "seccomp"},
		{"process_vm_readv of a host process", "console.sys(310, " + pid + ", 0, 0, 0)", eperm, "seccomp"},
		{"unshare(CLONE_NEWNS)", "console.sys(272, 0x20000)", eperm, "seccomp"},
		{"unshare(CLONE_NEWUSER)", "console.sys(272, 0x10000000)", eperm, "seccomp"},
		{"setns", "console.sys(308, 0, 0)", eperm, "seccomp"},
		{"mount", "console.sys(165, console.cstr('none'), console.cstr('/tmp'), console.cstr('tmpfs'), 0)", eperm, "seccomp"},
		{"bpf", "console.sys(321, 0, 0, 0)", eperm, "seccomp"},
		{"perf_event_open", "console.sys(298, 0, 0, -1, -1)", eperm, "seccomp"},
		{"io_uring_setup", "console.sys(425, 8, 0)", eperm, "seccomp"},
		{"keyctl", "console.sys(250, 0, -3, 0)", eperm, "seccomp"},
		{"init_module", "console.sys(175, 0, 0, 0)", eperm, "seccomp"},
		{"kexec_load", "console.sys(246, 0, 0, 0)", eperm, "seccomp"},
		{"setuid(0)", "console.sys(105, 0)", eperm, "seccomp"},
		{"open_by_handle_at", "console.sys(304, 0, 0, 0)", eperm, "seccomp"},
		{"open(/etc/shadow)", "console.sys(2, console.cstr('/etc/shadow'), 0)", eacces, "landlock"},
		{"execve a script it wrote", "console.sys(59, console.cstr(" + strconv.Quote(tg.script()) + "), 0, 0)", eacces, "landlock"},
		{"kill a host process", "console.sys(62, " + pid + ", 9)", eperm, "landlock scope, user"},
	}
}

func TestBreakInWithDenoWidened(t *testing.T) {
	needKernel(t)
	confine.WidenDeno(t)
	tg := newTarget(t)
	attacks := tg.attacks()

	// The control: the same widened sandbox without the kernel's layers
	// lets the attacks through, so the widening removed the first wall.
	t.Run("control without confinement", func(t *testing.T) {
		sb, _ := tg.sandbox(t, "off", 0)
		for _, a := range attacks {
			if a.control == "" {
				continue
			}
			got := attempt(t, sb, a.code)
			if !strings.HasPrefix(got, a.control) {
				t.Errorf("%s: the widened sandbox without confinement gave %.200q, want %q: the first wall is not removed", a.name, got, a.control)
			}
		}
		if tg.forbiddenHits.Load() == 0 {
			t.Error("the control never reached the forbidden port")
		}
		for _, f := range []string{"pwned.txt", "spawned", "ro/pwned.txt"} {
			os.Remove(filepath.Join(tg.dir, f))
		}
		os.Remove(tg.script())
		tg.forbiddenHits.Store(0)
	})

	sb, logs := tg.sandbox(t, "required", 0)
	rep := sb.Confinement()
	t.Logf("layers: %s", rep.Summary())
	for _, a := range attacks {
		got := attempt(t, sb, a.code)
		switch {
		case !strings.HasPrefix(got, "ERR:"):
			t.Errorf("%s: succeeded: %.200q", a.name, got)
		case !strings.Contains(got, a.refused):
			t.Errorf("%s: %.300q, want the refusal %q of %s", a.name, got, a.refused, a.layer)
		default:
			t.Logf("%-40s refused by %s: %.160s", a.name, a.layer, strings.TrimPrefix(got, "ERR:"))
		}
	}
	// Nothing reached the host.
	for _, f := range []string{filepath.Join(tg.dir, "pwned.txt"), filepath.Join(tg.ro, "pwned.txt"), filepath.Join(tg.dir, "spawned")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s exists", f)
		}
	}
	if n := tg.forbiddenHits.Load(); n > 0 {
		t.Errorf("the forbidden port was reached %d times", n)
	}
	if err := tg.sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host's process was killed: %v", err)
	}
	// What is allowed still works: the allowed port, the workspace, the
	// read-only mount.
	if got := attempt(t, sb, "c = await D.connect(J({'hostname': '127.0.0.1', 'port': "+strconv.Itoa(tg.allowed)+"}))\nfrom js import Uint8Array\nu = Uint8Array.new(64)\nn = await c.read(u)\n_r = bytes(u.to_py()[:n]).decode()"); got != "OK:hello from the allowed port\n" {
		t.Errorf("the allowed port: %q", got)
	}
	if got := attempt(t, sb, "open('/workspace/made.txt', 'w').write('mine')\n_r = open('/mnt/ro/data.txt').read()"); got != "OK:read-only data" {
		t.Errorf("the workspace and the mount: %q", got)
	}

	for _, s := range tg.syscalls() {
		got := attempt(t, sb, "_r = "+s.call)
		if got != "OK:"+strconv.Itoa(-s.errno) {
			t.Errorf("%s: %q, want errno %d (%s)", s.name, got, s.errno, s.layer)
		} else {
			t.Logf("%-40s refused by %s: %s", "syscall "+s.name, s.layer, syscall.Errno(s.errno))
		}
	}
	if err := tg.sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host's process was killed: %v", err)
	}

	// The sandbox ran as the unprivileged user; what it wrote is given back
	// to the workspace's owner once it exits.
	made := filepath.Join(tg.ws, "made.txt")
	if owner(t, made) != 65532 {
		t.Errorf("made.txt is owned by %d while the sandbox runs", owner(t, made))
	}
	sb.Close()
	if o := owner(t, made); o != owner(t, tg.ws) {
		t.Errorf("made.txt is owned by %d after close, the workspace by %d", o, owner(t, tg.ws))
	}
	if strings.Contains(logs.String(), "[ERROR]") {
		t.Errorf("errors in the host's log:\n%s", logs)
	}
}

func owner(t *testing.T, path string) uint32 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid
}

// cgroupFile returns the path of a file of the process's cgroup in the
// hierarchy of a v1 controller ("" for v2).
func cgroupFile(t *testing.T, pid int, controller, file string) string {
	t.Helper()
	self, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for line := range strings.Lines(string(self)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), controller) || controller == "" && parts[1] == "" {
			path = parts[2]
		}
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for line := range strings.Lines(string(mi)) {
		pre, post, _ := strings.Cut(strings.TrimSpace(line), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 || f[3] != "/" {
			continue
		}
		if controller == "" && g[0] == "cgroup2" || g[0] == "cgroup" && slices.Contains(strings.Split(g[2], ","), controller) {
			if !strings.Contains(path, "parselbox-") {
				t.Fatalf("pid %d is in no cgroup of parselbox: %s", pid, self)
			}
			return filepath.Join(f[4], path, file)
		}
	}
	t.Fatalf("no %q cgroup hierarchy mounted", controller)
	return ""
}

// A thread bomb stops at the cgroup's pids limit: the kernel refuses the
// threads beyond it, the host and the sandbox live on.
func TestBreakInThreadBomb(t *testing.T) {
	needKernel(t)
	confine.WidenDeno(t)
	tg := newTarget(t)
	sb, logs := tg.sandbox(t, "required", 0)
	events := cgroupFile(t, sb.PID(), "pids", "pids.events")
	// pthread_create of threads that wait forever, through FFI.
	got := attempt(t, sb, `
lib = D.dlopen('libc.so.6', J({
    'dlsym': {'parameters': ['pointer', 'buffer'], 'result': 'pointer'},
    'pthread_create': {'parameters': ['buffer', 'pointer', 'pointer', 'pointer'], 'result': 'i32'},
}))
from js import Uint8Array, TextEncoder
from pyodide.ffi import jsnull
pause = lib.symbols.dlsym(jsnull, TextEncoder.new().encode('pause\0'))
n, err = 0, 0
for i in range(5000):
    err = lib.symbols.pthread_create(Uint8Array.new(8), jsnull, pause, jsnull)
    if err:
        break
    n += 1
_r = f'{n} {err}'`)
	var n, errno int
	if _, err := fmt.Sscanf(got, "OK:%d %d", &n, &errno); err != nil {
		t.Fatalf("thread bomb: %q", got)
	}
	if errno != int(syscall.EAGAIN) || n >= confine.DefaultPids {
		t.Errorf("%d threads made, then error %d: want EAGAIN below %d", n, errno, confine.DefaultPids)
	}
	b, err := os.ReadFile(events)
	if err != nil || !strings.Contains(string(b), "max ") || strings.Contains(string(b), "max 0\n") {
		t.Errorf("pids.events: %q, %v", b, err)
	}
	t.Logf("thread bomb: %d threads, then EAGAIN, refused by the cgroup's pids limit (%s: %s)", n, events, strings.TrimSpace(string(b)))
	if got := attempt(t, sb, "_r = 6 * 7"); got != "OK:42" {
		t.Errorf("after the bomb: %q", got)
	}
	// Nor does what comes later need a thread that the bomb took (Deno exits
	// when it cannot start one of its own): bash(), whose import (deferred
	// past boot) makes Deno listen for a signal, and a second for what the
	// import leaves to run.
	if got := attempt(t, sb, "_r = bash('echo hi')"); strings.TrimSpace(got) != "OK:hi" {
		t.Errorf("bash after the bomb: %q", got)
	}
	time.Sleep(time.Second)
	if got := attempt(t, sb, "_r = 6 * 7"); got != "OK:42" {
		t.Errorf("a second after bash: %q", got)
	}
	if strings.Contains(logs.String(), "restarting") {
		t.Errorf("the sandbox was restarted:\n%s", logs)
	}
}

// A worker bomb and a memory bomb are stopped by the cgroup: the sandbox
// is killed, reported as over its memory limit (or pids), and restarted.
func TestBreakInWorkerAndMemoryBombs(t *testing.T) {
	needKernel(t)
	confine.WidenDeno(t)
	tg := newTarget(t)
	sb, logs := tg.sandbox(t, "required", 256) // a 1024 MB cgroup
	// Memory outside WebAssembly's cap: JS buffers, touched. This needs no
	// widening at all: Uint8Array is on Python's side of the runner.
	r, err := sb.Execute(t.Context(), "import js\nbufs = []\nfor i in range(64):\n    b = js.Uint8Array.new(64 << 20); b.fill(1); bufs.append(b)\nlen(bufs)")
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Type != "MemoryError" || !strings.Contains(r.Error.Message, "exceeded its memory limit (1024 MB)") {
		t.Errorf("memory bomb: %s %+v", r.Output, r.Error)
	}
	if !strings.Contains(logs.String(), "memory limit exceeded: the kernel killed the sandbox process") {
		t.Error("the cgroup did not report an OOM kill: something else stopped the bomb")
	} else {
		t.Logf("memory bomb: %s (the cgroup's OOM kill)", r.Error.Message)
	}
	if got := attempt(t, sb, "_r = 6 * 7"); got != "OK:42" {
		t.Errorf("after the memory bomb: %q", got)
	}

	r, err = sb.Execute(t.Context(), `
from js import console, Object
from pyodide.ffi import to_js
opts = to_js({'type': 'module'}, dict_converter=Object.fromEntries)
for i in range(3000):
    console.Worker.new('data:text/javascript,setInterval(() => {}, 1e6)', opts)
'all started'`)
	if err != nil {
		t.Fatal(err)
	}
	log := logs.String()
	byKernel := strings.Count(log, "memory limit exceeded: the kernel killed") >= 2 || strings.Contains(log, "pids limit reached")
	if r.Error == nil || !byKernel {
		t.Errorf("worker bomb: %s %+v; kernel limits in the log: %v", r.Output, r.Error, byKernel)
	} else {
		t.Logf("worker bomb: %s: %s (stopped by the cgroup)", r.Error.Type, r.Error.Message)
	}
	if got := attempt(t, sb, "_r = 6 * 7"); got != "OK:42" {
		t.Errorf("after the worker bomb: %q", got)
	}
}

// The cpu option caps the sandbox's CPU time: a busy loop is throttled by
// the cgroup's quota (cpu.stat counts the periods it was stopped in).
func TestCPULimit(t *testing.T) {
	needKernel(t)
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t),
		Confinement: "required", CPU: 0.2, Logger: testenv.Logger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !strings.Contains(sb.Confinement().Summary(), "cpu 0.2") {
		t.Fatalf("no cpu limit: %s", sb.Confinement().Summary())
	}
	controller := "cpu"
	if strings.Contains(sb.Confinement().Summary(), "cgroup (v2") {
		controller = ""
	}
	stat := cgroupFile(t, sb.PID(), controller, "cpu.stat")
	r, err := sb.Execute(t.Context(), "n = 0\nfor i in range(500_000):\n    n += i\nn")
	if err != nil || r.Error != nil {
		t.Fatalf("busy loop: %v %+v", err, r.Error)
	}
	b, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	var throttled int
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "nr_throttled "); ok {
			throttled, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	if throttled == 0 {
		t.Errorf("a busy loop at 0.2 cores was never throttled: %s", b)
	}
	t.Logf("boot and a busy loop at cpu = 0.2: throttled in %d periods of 100 ms (%s)", throttled, stat)
}
