package host_test

import (
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
)

// bashError runs code and returns the RuntimeError bash() raised.
func bashError(t *testing.T, sb *host.Sandbox, code string) string {
	t.Helper()
	e := raised(t, exec(t, sb, code), "RuntimeError")
	return e.Message
}

// bash() is a shell over the same files as Python: what one writes,
// deletes or creates, the other sees at once, with the same read-only
// and read-write mounts, and the files bash writes are reported.
func TestBash(t *testing.T) {
	t.Parallel()
	ro, rw := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ro, "ref.txt"), []byte("b\na\nc\n"), 0o644)
	in := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(in, []byte(`{"items":[{"n":1},{"n":2}]}`), 0o644)
	out := t.TempDir()
	sb := newSandbox(t, host.Config{
		OutputDir: out,
		Files:     []string{in},
		Mounts: map[string]host.Mount{
			"data":    {Source: ro},
			"scratch": {Source: rw, Mode: "rw"},
		},
	})

	if got := value(t, exec(t, sb, `bash("echo hi")`)); got != "hi\n" {
		t.Errorf("echo: %q", got)
	}
	// The guide (help(), Prompt()) says how to use it; help(bash) the
	// details (TestHelpDetails).
	if got, _ := value(t, exec(t, sb, `help()`)).(string); !strings.Contains(got, "`bash(\"grep -c x data.csv | sort\")` returns stdout") ||
		!strings.Contains(got, "help(bash)") || !strings.Contains(sb.Prompt(), "bash exit N") {
		t.Errorf("the guide does not describe bash(): %q", got)
	}
	// Pipes, loops, the working directory, HOME and USER.
	if got := value(t, exec(t, sb, `bash("for i in 3 1 2; do echo $i; done | sort | tr '\\n' ,; pwd; echo $HOME $USER")`)); got != "1,2,3,/workspace\n/workspace user\n" {
		t.Errorf("pipes and loops: %q", got)
	}
	// Python writes, bash reads; bash writes, Python reads; both see deletes and mkdirs.
	r := exec(t, sb, `open("py.txt", "w").write("from python\n")
s = bash("cat py.txt; echo from bash > sh.txt; mkdir -p d/e; echo deep > d/e/f.txt; sort /mnt/data/ref.txt > /mnt/scratch/sorted.txt")
[s, open("sh.txt").read(), open("d/e/f.txt").read(), open("/mnt/scratch/sorted.txt").read()]`)
	if diff := cmp.Diff([]any{"from python\n", "from bash\n", "deep\n", "a\nb\nc\n"}, value(t, r)); diff != "" {
		t.Errorf("shared files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/mnt/scratch/sorted.txt", "/workspace/d/e/f.txt", "/workspace/py.txt", "/workspace/sh.txt"}, sorted(r.Files)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "d", "e", "f.txt")); string(b) != "deep\n" {
		t.Errorf("on disk: %q", b)
	}
	r = exec(t, sb, `import os
os.remove("py.txt"); os.mkdir("pydir")
a = bash("ls; test -e py.txt || echo gone; test -d pydir && echo dir; rm sh.txt; rmdir pydir; echo x >> /mnt/scratch/sorted.txt")
[a, os.path.exists("sh.txt"), os.path.exists("pydir"), open("/mnt/scratch/sorted.txt").read()]`)
	if diff := cmp.Diff([]any{"d\npydir\nsh.txt\ngone\ndir\n", false, false, "a\nb\nc\nx\n"}, value(t, r)); diff != "" {
		t.Errorf("deletes and mkdirs (-want +got):\n%s", diff)
	}
	// /files and jq.
	if got := value(t, exec(t, sb, `bash("jq '[.items[].n] | add' /files/in.json")`)); got != "3\n" {
		t.Errorf("jq: %q", got)
	}

	// A fresh shell per call: cd, variables and functions do not persist.
	r = exec(t, sb, `bash("cd /mnt; X=1; export Y=2; f() { echo f; }")
bash("pwd; echo x${X}y${Y}; type f >/dev/null 2>&1 || echo nof")`)
	if got := value(t, r); got != "/workspace\nxy\nnof\n" {
		t.Errorf("state persisted: %q", got)
	}

	// Errors: a non-zero exit with stderr raises; without stderr it returns.
	if msg := bashError(t, sb, `bash("cat nope.txt")`); msg != "bash exit 1: cat: nope.txt: No such file or directory" {
		t.Errorf("missing file: %q", msg)
	}
	if got := value(t, exec(t, sb, `bash("echo partial; false")`)); got != "partial\n" {
		t.Errorf("exit 1 without stderr: %q", got)
	}
	if msg := bashError(t, sb, `bash("echo x > /mnt/data/new.txt")`); !strings.Contains(msg, "read-only file system") {
		t.Errorf("write to the read-only mount: %q", msg)
	}
	if msg := bashError(t, sb, `bash("rm /mnt/data/ref.txt")`); !strings.Contains(msg, "read-only file system") {
		t.Errorf("rm on the read-only mount: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the write reached the read-only mount: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ro, "ref.txt")); err != nil {
		t.Errorf("rm reached the read-only mount: %v", err)
	}
	e := raised(t, exec(t, sb, `bash(["ls"])`), "TypeError")
	if e.Message != "bash() takes a command line (str), not list" {
		t.Errorf("bad argument: %s", e.Message)
	}

	// Limits: loops and commands are bounded.
	if msg := bashError(t, sb, `bash("while true; do :; done")`); !strings.Contains(msg, "too many commands executed (>50000)") {
		t.Errorf("endless loop: %q", msg)
	}
	if msg := bashError(t, sb, `bash("f() { f; }; f")`); !strings.Contains(msg, "depth") && !strings.Contains(msg, "recursion") {
		t.Errorf("endless recursion: %q", msg)
	}
	// The sandbox is fine after all of this.
	if got := value(t, exec(t, sb, `bash("echo ok")`)); got != "ok\n" {
		t.Errorf("after errors: %q", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Break-in attempts through bash(): nothing outside the granted
// directories is read or written, whatever the path, redirection or link.
func TestBashFilesIsolation(t *testing.T) {
	t.Parallel()
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	parent := t.TempDir()
	mnt := filepath.Join(parent, "mnt")
	os.Mkdir(mnt, 0o755)
	os.WriteFile(filepath.Join(mnt, "real.txt"), []byte("inside"), 0o644)
	os.Symlink(filepath.Join(mnt, "real.txt"), filepath.Join(mnt, "link.txt"))
	out := t.TempDir()
	sb := newSandbox(t, host.Config{OutputDir: out, Mounts: map[string]host.Mount{"data": {Source: mnt, Mode: "rw"}}})

	// The control: a link within the mount is followed, so that a leak
	// would show.
	if got := value(t, exec(t, sb, `bash("cat /mnt/data/link.txt")`)); got != "inside" || !leaked(got) {
		t.Fatalf("control: %v", got)
	}
	// Links the host places later that lead out of the mount: a file, a
	// directory.
	os.Symlink(secret, filepath.Join(mnt, "leak.txt"))
	os.Symlink(secretDir, filepath.Join(mnt, "escape"))

	for name, cmd := range map[string]string{
		"etc passwd":         "cat /etc/passwd",
		"host path":          "cat " + secret,
		"dot-dot":            "cat /workspace/../../../../etc/passwd",
		"cd out of a mount":  "cd /mnt/data; cd ..; cd ..; cd ..; cat etc/passwd; cat ." + secret,
		"relative dot-dot":   "cat ../../../.." + secret,
		"symlink file":       "cat /mnt/data/leak.txt",
		"symlink dir":        "cat /mnt/data/escape/secret.txt",
		"symlink ls":         "ls /mnt/data/escape/",
		"symlink cp":         "cp /mnt/data/leak.txt /workspace/copy.txt; cat /workspace/copy.txt",
		"redirect in":        "while read l; do echo $l; done < /mnt/data/leak.txt",
		"grep -r":            "grep -r secret /mnt/data/",
		"find":               "find /mnt/data -name secret.txt -exec cat {} \\;",
		"ln -s":              "ln -s " + secret + " /workspace/s.txt && cat /workspace/s.txt",
		"ln -s relative":     "cd /mnt/data; ln -s ../../.. up && cat up" + secret,
		"curl file":          "curl -s file://" + secret,
		"source secret":      "source " + secret,
		"write through link": "echo pwned > /mnt/data/leak.txt",
	} {
		r := exec(t, sb, "bash("+quote(cmd)+")")
		if leaked(string(r.Output)) || r.Error != nil && leaked(r.Error.Message) {
			t.Errorf("%s: leaked: %s %v", name, r.Output, r.Error)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "top secret" {
		t.Errorf("the secret was overwritten: %q", b)
	}
	// (just-bash's commands say "No such file" whatever the cause.)
	if msg := bashError(t, sb, `bash("ls /mnt/data/escape/")`); msg != "bash exit 2: ls: /mnt/data/escape/: No such file or directory" {
		t.Errorf("an escaping link: %q", msg)
	}
	if msg := bashError(t, sb, `bash("ln -s /etc /workspace/etc")`); !strings.Contains(msg, "links cannot be created in the sandbox") {
		t.Errorf("ln -s: %q", msg)
	}

	// Writes outside the granted directories stay in bash's own memory:
	// nothing reaches the host next to the mount or the output directory.
	exec(t, sb, `bash("echo x > /mnt/data/../../outside.txt; cd /workspace/..; echo y > up.txt; echo z > /tmp/t.txt; mkdir -p /etc/x")`)
	for _, p := range []string{filepath.Join(parent, "outside.txt"), filepath.Join(filepath.Dir(out), "up.txt"), "/outside.txt", "/up.txt", "/etc/x"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a write left the sandbox: %v", p, err)
		}
	}
	if got := value(t, exec(t, sb, `import os; [bash("cat /up.txt /tmp/t.txt"), os.path.exists("/up.txt")]`)); !cmp.Equal(got, []any{"y\nz\n", false}) {
		t.Errorf("bash's own files: %v", got)
	}
	// The sandbox survives.
	if got := value(t, exec(t, sb, `bash("cat /mnt/data/real.txt")`)); got != "inside" {
		t.Errorf("after attempts: %v", got)
	}
}

// bash() has the sandbox's environment only, starts no process, and its
// curl follows the network rules.
func TestBashEnvProcessesNetwork(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/ping", http.StatusFound)
			return
		}
		w.Write([]byte("pong"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	sb := newSandbox(t, host.Config{Env: map[string]string{"GREETING": "hello"}})
	env := value(t, exec(t, sb, `bash("printenv")`)).(string)
	if !strings.Contains(env, "GREETING=hello\n") || !strings.Contains(env, "HOME=/workspace\n") {
		t.Errorf("printenv: %q", env)
	}
	allowed := []string{"HOME", "USER", "GREETING", "PATH", "PWD", "OLDPWD", "SHLVL", "IFS", "OSTYPE", "MACHTYPE", "HOSTTYPE", "HOSTNAME", "OPTIND", "SHELLOPTS", "BASHOPTS", "_"}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		k, _, ok := strings.Cut(line, "=")
		if ok && !slices.Contains(allowed, k) {
			t.Errorf("unexpected variable in bash: %s", line)
		}
	}
	if got := value(t, exec(t, sb, `import os; os.environ["FROM_PY"] = "1"; bash("echo $GREETING $FROM_PY $HOME")`)); got != "hello 1 /workspace\n" {
		t.Errorf("environment: %q", got)
	}
	// No processes: only just-bash's own commands exist.
	for _, c := range []string{"deno --version", "node -e 1", "python3 -c 1", "/usr/bin/id", "perl -e 1"} {
		msg := bashError(t, sb, "bash("+quote(c)+")")
		if !strings.HasPrefix(msg, "bash exit 127: ") {
			t.Errorf("%s: %q", c, msg)
		}
	}

	// curl: denied by default, allowed for an allowlisted address only.
	url := "http://" + addr + "/ping"
	if msg := bashError(t, sb, `bash("curl -sS `+url+`")`); !strings.Contains(msg, "network access to "+addr+" is not allowed in the sandbox") {
		t.Errorf("curl without network: %q", msg)
	}
	other := newSandbox(t, host.Config{AllowNet: []string{"127.0.0.1:1"}})
	if msg := bashError(t, other, `bash("curl -sS `+url+`")`); !strings.Contains(msg, "not allowed") {
		t.Errorf("curl outside the allowlist: %q", msg)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("denied requests reached the server %d times", n)
	}
	allowedSb := newSandbox(t, host.Config{AllowNet: []string{addr}})
	if got := value(t, exec(t, allowedSb, `bash("curl -s `+url+` | tr a-z A-Z")`)); got != "PONG" {
		t.Errorf("curl to an allowed address: %q", got)
	}
	if got := value(t, exec(t, allowedSb, `bash("curl -sL http://`+addr+`/redirect")`)); got != "pong" {
		t.Errorf("curl following a redirect: %q", got)
	}
}

// The execution's timeout ends a bash() call; the interpreter's state is
// kept and the next call works.
func TestBashTimeout(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{Timeout: 2 * time.Second})
	exec(t, sb, "x = 41")
	e := raised(t, exec(t, sb, `bash("sleep 30")`), "KeyboardInterrupt")
	if !strings.Contains(e.Message, "timed out after 2s") {
		t.Errorf("timeout: %s", e.Message)
	}
	if got := value(t, exec(t, sb, `x + 1, bash("echo ok")`)); !cmp.Equal(got, []any{42.0, "ok\n"}) {
		t.Errorf("after the timeout: %v", got)
	}
}
