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

// fileTarget is a sandbox with every kind of directory, and host files
// around them that it must never reach.
type fileTarget struct {
	base, ws, ro, rw, in, secret string
	sb                           *host.Sandbox
	logs                         *testenv.SyncBuffer
}

const (
	secretText = "TOP-SECRET-8d1f0c3b"
	roText     = "read-only data 5e2a"
)

func newFileTarget(t *testing.T) *fileTarget {
	base := t.TempDir()
	ft := &fileTarget{
		base: base, ws: filepath.Join(base, "ws"), ro: filepath.Join(base, "ro"), rw: filepath.Join(base, "rw"),
		in: filepath.Join(base, "in", "input.txt"), secret: filepath.Join(base, "secret.txt"),
	}
	writeFile(t, ft.secret, secretText, 0o644)
	writeFile(t, filepath.Join(ft.ro, "data.txt"), roText, 0o644)
	writeFile(t, filepath.Join(ft.rw, "keep.txt"), "rw data", 0o644)
	writeFile(t, ft.in, "input", 0o644)
	os.MkdirAll(ft.ws, 0o755)
	ft.sb, ft.logs = newSandbox(t, host.Config{
		OutputDir: ft.ws,
		Files:     []string{ft.in},
		Mounts:    map[string]host.Mount{"ro": {Source: ft.ro}, "rw": {Source: ft.rw, Mode: "rw"}},
	})
	return ft
}

// hostPaths are the host paths that no answer may show.
func (ft *fileTarget) hostPaths() []string {
	return []string{ft.base, ft.ws, ft.ro, ft.rw, os.TempDir() + "/", "/root", "/home/"}
}

// TestFiles attacks the host's files through every file API the guest
// has: Python's open and os, Pyodide's JS objects, fetch, Emscripten's
// file systems, symlinks made by the guest and by the host after start,
// hard links and renames across roots, and read-only mounts.
func TestFiles(t *testing.T) {
	t.Parallel()
	ft := newFileTarget(t)
	sb := ft.sb

	// Each read attack must not return the secret (or /etc/passwd's
	// first line), whatever it raises.
	reads := map[string]string{
		"open etc passwd":              `open("/etc/passwd").read()`,
		"open host path":               `open(` + pyq(ft.secret) + `).read()`,
		"dotdot from workspace":        `open("/workspace/../secret.txt").read()`,
		"dotdot from mount":            `open("/mnt/ro/../../` + filepath.Base(ft.secret) + `").read()`,
		"dotdot many":                  `open("/workspace/" + "../" * 40 + ` + pyq(strings.TrimPrefix(ft.secret, "/")) + `).read()`,
		"os.open host path":            `os.read(os.open(` + pyq(ft.secret) + `, os.O_RDONLY), 100)`,
		"listdir host dir":             `os.listdir(` + pyq(ft.base) + `)`,
		"scandir root":                 `[e.name for e in os.scandir("/")]`,
		"urllib file url":              `__import__("urllib.request").request.urlopen("file://" + ` + pyq(ft.secret) + `).read()`,
		"pathlib host":                 `__import__("pathlib").Path(` + pyq(ft.secret) + `).read_text()`,
		"proc self environ":            `open("/proc/self/environ").read()`,
		"proc self cmdline":            `open("/proc/self/cmdline").read()`,
		"dev fd 3 interrupt pipe":      `os.read(3, 10)`,
		"FS.readFile host path":        `__import__("pyodide_js").FS.readFile(` + pyq(ft.secret) + `, {"encoding": "utf8"})`,
		"Module FS_readFile":           `__import__("pyodide_js")._module.FS_readFile(` + pyq(ft.secret) + `)`,
		"loadPackage file":             `__import__("pyodide_js").loadPackage("file://" + ` + pyq(ft.secret) + `)`,
		"mountNodeFS":                  `__import__("pyodide_js").mountNodeFS("/tmp/n1", ` + pyq(ft.base) + `)`,
		"FS.mount NODEFS":              `(os.makedirs("/tmp/n2", exist_ok=True), __import__("pyodide_js").FS.mount(__import__("pyodide_js")._module.NODEFS, __import__("js").Object.fromEntries([["root", ` + pyq(ft.base) + `]]), "/tmp/n2"), os.listdir("/tmp/n2"))`,
		"Module FS_mount NODEFS":       `(os.makedirs("/tmp/n3", exist_ok=True), __import__("pyodide_js")._module.FS_mount(__import__("pyodide_js")._module.NODEFS, __import__("js").Object.fromEntries([["root", ` + pyq(ft.base) + `]]), "/tmp/n3"), os.listdir("/tmp/n3"))`,
		"Function constructor to Deno": `__import__("js").Object.constructor("return Deno.readTextFileSync(" + ` + pyq(`"`+ft.secret+`"`) + ` + ")")()`,
		"run_js":                       `__import__("pyodide.code").code.run_js("Deno.readTextFileSync('` + ft.secret + `')")`,
		"js Deno global":               `__import__("js").Deno.readTextFileSync(` + pyq(ft.secret) + `)`,
		"import from js":               `__import__("js").eval("1")`,
		"preloaded file":               preloaded(ft.secret),
		"globalThis via pyodide_js":    `__import__("pyodide_js")._api.config.jsglobals.Deno`,
		"ctypes open host path":        `__import__("ctypes").CDLL(None).open(` + pyq(ft.secret) + `.encode(), 0)`,
	}
	for name, expr := range reads {
		t.Run("read/"+name, func(t *testing.T) {
			got := try(t, sb, expr)
			noneOf(t, "the attempt", got, secretText, "root:x:0")
		})
	}

	t.Run("read/NODEFS driver called directly", func(t *testing.T) {
		// Emscripten's host file system driver, with a hand-made node: no
		// mount, so no check of FS.mount; a host link leads out.
		p := filepath.Join(ft.rw, "nodeup")
		if err := os.Symlink(ft.base, p); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		for _, dir := range []string{p, ft.rw} {
			got := try(t, sb, nodefsReaddir(dir))
			if strings.HasPrefix(got, "ok: ") {
				t.Errorf("NODEFS lists the host directory %s: %s", dir, got)
			}
			noneOf(t, "NODEFS", got, "secret.txt")
		}
	})
	t.Run("read/fetch file url", func(t *testing.T) {
		for _, u := range []string{"file://" + ft.secret, "file:///etc/passwd", "file:///proc/self/environ"} {
			got := str(t, run(t, sb, attempt+asyncAttempt+`
import js
await attempt_async(lambda: js.fetch(`+pyq(u)+`))`))
			refused(t, got, "JsException", "TypeError")
			noneOf(t, "fetch", got, secretText, "root:x:0")
		}
	})
	t.Run("read/fetch relative and blob urls", func(t *testing.T) {
		got := str(t, run(t, sb, attempt+asyncAttempt+`
import js
await attempt_async(lambda: js.fetch("secret.txt"))`))
		refused(t, got, "JsException", "TypeError")
	})
	t.Run("read/fetch Request object with changing url", func(t *testing.T) {
		// An object whose URL is a network one when checked and a file
		// one when used.
		got := str(t, run(t, sb, attempt+asyncAttempt+`
import js
n = [0]
class Sly:
    def toString(self):
        n[0] += 1
        return "http://127.0.0.1:9/" if n[0] == 1 else "file://`+ft.secret+`"
await attempt_async(lambda: js.fetch(Sly()))`))
		noneOf(t, "fetch", got, secretText)
	})

	t.Run("symlink/guest to host path", func(t *testing.T) {
		refused(t, try(t, sb, `os.symlink(`+pyq(ft.secret)+`, "/workspace/l1")`), "PermissionError", "OSError")
		if _, err := os.Lstat(filepath.Join(ft.ws, "l1")); err == nil {
			t.Error("the guest made a symlink on the host")
		}
	})
	t.Run("symlink/guest relative out of root", func(t *testing.T) {
		refused(t, try(t, sb, `os.symlink("../secret.txt", "/mnt/rw/l2")`), "PermissionError", "OSError")
		if _, err := os.Lstat(filepath.Join(ft.rw, "l2")); err == nil {
			t.Error("the guest made a symlink on the host")
		}
	})
	t.Run("symlink/guest in memory then copy", func(t *testing.T) {
		// A link in the in-memory /tmp, then a copy into /workspace:
		// the copy reads the in-memory target, never the host.
		got := tryCode(t, sb, `
os.symlink("/workspace/../secret.txt", "/tmp/l3")
return open("/tmp/l3").read()`)
		noneOf(t, "the link", got, secretText)
	})
	for _, c := range []struct{ name, dir, link string }{
		{"host link in rw mount after start", ft.rw, "/mnt/rw/late"},
		{"host link in ro mount after start", ft.ro, "/mnt/ro/late"},
		{"host link in workspace after start", ft.ws, "/workspace/late"},
	} {
		t.Run("symlink/"+c.name, func(t *testing.T) {
			p := filepath.Join(c.dir, "late")
			os.Remove(p)
			if err := os.Symlink(ft.secret, p); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(p)
			for _, expr := range []string{
				`open(` + pyq(c.link) + `).read()`,
				`os.readlink(` + pyq(c.link) + `)`,
				`os.stat(` + pyq(c.link) + `).st_size`,
				`__import__("shutil").copy(` + pyq(c.link) + `, "/tmp/copied") and open("/tmp/copied").read()`,
			} {
				got := try(t, sb, expr)
				noneOf(t, expr, got, secretText, ft.base)
				if strings.HasPrefix(got, "ok: ") && strings.Contains(expr, "st_size") && got == "ok: "+strconv.Itoa(len(secretText)) {
					t.Errorf("%s: stat follows the link out of its root: %s", expr, got)
				}
			}
		})
	}
	t.Run("symlink/resources follow no link out", func(t *testing.T) {
		// What the host serves of the sandbox's files (MCP resources,
		// the Go API) resolves links as the sandbox does.
		p := filepath.Join(ft.ws, "res-link")
		if err := os.Symlink(ft.secret, p); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		if b, err := sb.ReadFile("/workspace/res-link"); err == nil || strings.Contains(string(b), secretText) {
			t.Errorf("ReadFile followed a link out of the workspace: %q, %v", b, err)
		}
		if b, err := sb.ReadFile("/workspace/../secret.txt"); err == nil || strings.Contains(string(b), secretText) {
			t.Errorf("ReadFile of a dot-dot path: %q, %v", b, err)
		}
	})
	t.Run("symlink/host dir link after start", func(t *testing.T) {
		p := filepath.Join(ft.rw, "updir")
		if err := os.Symlink(ft.base, p); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		for _, expr := range []string{`os.listdir("/mnt/rw/updir")`, `open("/mnt/rw/updir/secret.txt").read()`, `open("/mnt/rw/updir/ro/data.txt", "a").write("x")`} {
			got := try(t, sb, expr)
			if strings.HasPrefix(got, "ok: ") {
				t.Errorf("%s: %s", expr, got)
			}
			noneOf(t, expr, got, secretText, ft.base)
		}
		if b, _ := os.ReadFile(filepath.Join(ft.ro, "data.txt")); string(b) != roText {
			t.Errorf("the read-only file changed through the link: %q", b)
		}
	})
	t.Run("symlink/swap dir for link while open", func(t *testing.T) {
		// The guest resolves a path, the host then swaps a directory on
		// it for a link out: the open does not follow it.
		dir := filepath.Join(ft.rw, "swap")
		os.Mkdir(dir, 0o755)
		writeFile(t, filepath.Join(dir, "secret.txt"), "decoy", 0o644)
		run(t, sb, `import os; st = os.stat("/mnt/rw/swap/secret.txt")`)
		os.RemoveAll(dir)
		if err := os.Symlink(ft.base, dir); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(dir)
		got := try(t, sb, `open("/mnt/rw/swap/secret.txt").read()`)
		noneOf(t, "the swapped path", got, secretText)
	})

	for _, c := range []struct{ name, code, host string }{
		{"chmod setuid and world write", `open("/workspace/m1", "w").close()
os.chmod("/workspace/m1", 0o6777)`, "ws/m1"},
		{"create with any mode", `os.close(os.open("/workspace/m2", os.O_CREAT | os.O_WRONLY, 0o7777))`, "ws/m2"},
		{"mkdir sticky world-writable", `os.mkdir("/workspace/m3", 0o1777)`, "ws/m3"},
		{"umask 0", `os.umask(0)
open("/mnt/rw/m4", "w").close()
os.chmod("/mnt/rw/m4", 0o777)`, "rw/m4"},
		{"fchmod", `f = open("/workspace/m5", "w")
os.fchmod(f.fileno(), 0o4777)
f.close()`, "ws/m5"},
		{"copy of a setuid mode", `import shutil
open("/tmp/s", "w").close()
os.chmod("/tmp/s", 0o4755)
shutil.copy2("/tmp/s", "/workspace/m6")`, "ws/m6"},
		{"chmod the workspace root", `os.chmod("/workspace", 0o777)`, "ws"},
		{"chmod the rw mount root", `os.chmod("/mnt/rw", 0o1777)`, "rw"},
		{"chmod the files root", `os.chmod("/files", 0o777)`, "in/../ws/../files-root-unknown"},
	} {
		t.Run("mode/"+c.name, func(t *testing.T) {
			got := tryCode(t, sb, c.code)
			if c.host == "in/../ws/../files-root-unknown" {
				// /files is a host directory of its own: its mode as
				// Python sees it after the attempt.
				if m := str(t, run(t, sb, "import os\noct(os.stat('/files').st_mode & 0o7777)")); m == "0o777" {
					t.Errorf("/files was chmod-ed: %s (%s)", m, got)
				}
				return
			}
			fi, err := os.Stat(filepath.Join(ft.base, c.host))
			if err != nil {
				t.Fatalf("%v (%s)", err, got)
			}
			if m := fi.Mode(); m&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 || m.Perm()&0o022 != 0 {
				t.Errorf("the host file has mode %v (%s)", m, got)
			}
		})
	}
	t.Run("hardlink/ro into workspace then write", func(t *testing.T) {
		got := try(t, sb, `(os.link("/mnt/ro/data.txt", "/workspace/hl"), open("/workspace/hl", "a").write("pwned"))`)
		if b, _ := os.ReadFile(filepath.Join(ft.ro, "data.txt")); string(b) != roText {
			t.Errorf("the read-only file changed to %q (%s)", b, got)
		}
	})
	t.Run("hardlink/secret into workspace", func(t *testing.T) {
		got := try(t, sb, `(os.link(`+pyq(ft.secret)+`, "/workspace/hl2"), open("/workspace/hl2").read())`)
		noneOf(t, "the link", got, secretText)
	})
	t.Run("rename/out of ro mount", func(t *testing.T) {
		refused(t, try(t, sb, `os.rename("/mnt/ro/data.txt", "/workspace/stolen.txt")`), "OSError", "PermissionError")
		if _, err := os.Stat(filepath.Join(ft.ro, "data.txt")); err != nil {
			t.Errorf("the read-only file is gone: %v", err)
		}
	})
	t.Run("rename/workspace over ro file", func(t *testing.T) {
		refused(t, try(t, sb, `(open("/workspace/evil", "w").write("evil"), os.replace("/workspace/evil", "/mnt/ro/data.txt"))`), "OSError", "PermissionError")
	})
	for name, expr := range map[string]string{
		"write":          `open("/mnt/ro/data.txt", "w").write("pwned")`,
		"append":         `open("/mnt/ro/data.txt", "a").write("pwned")`,
		"r+ write":       `open("/mnt/ro/data.txt", "r+").write("pwned")`,
		"os.open O_RDWR": `os.write(os.open("/mnt/ro/data.txt", os.O_RDWR), b"pwned")`,
		"truncate":       `os.truncate("/mnt/ro/data.txt", 0)`,
		"unlink":         `os.unlink("/mnt/ro/data.txt")`,
		"chmod":          `os.chmod("/mnt/ro/data.txt", 0o777)`,
		"utime":          `os.utime("/mnt/ro/data.txt", (0, 0))`,
		"mkdir":          `os.mkdir("/mnt/ro/newdir")`,
		"create":         `open("/mnt/ro/new.txt", "x")`,
		"rmdir root":     `os.rmdir("/mnt/ro")`,
		"shutil.rmtree":  `__import__("shutil").rmtree("/mnt/ro")`,
	} {
		t.Run("ro/"+name, func(t *testing.T) {
			got := try(t, sb, expr)
			refused(t, got, "OSError", "PermissionError", "FileExistsError", "IsADirectoryError")
			if b, err := os.ReadFile(filepath.Join(ft.ro, "data.txt")); err != nil || string(b) != roText {
				t.Errorf("read-only data now %q, %v (%s)", b, err, got)
			}
			if fi, _ := os.Stat(filepath.Join(ft.ro, "data.txt")); fi != nil && (fi.Mode().Perm() != 0o644 || fi.ModTime().Before(time.Unix(1, 0))) {
				t.Errorf("read-only file's mode or time changed: %v %v", fi.Mode(), fi.ModTime())
			}
			entries, _ := os.ReadDir(ft.ro)
			if len(entries) != 1 {
				t.Errorf("read-only mount holds %d entries (%s)", len(entries), got)
			}
		})
	}
}

// nodefsReaddir is Python that lists a host directory through Emscripten's
// NODEFS driver called directly, with a hand-made node (no mount at all).
func nodefsReaddir(dir string) string {
	return `(lambda m, O: (lambda r: (setattr(r, "parent", r), setattr(r, "name", "/"), list(m.NODEFS.node_ops.readdir(r)))[-1])(O([["mount", O([["opts", O([["root", ` + pyq(dir) + `]])]])]])))(__import__("pyodide_js")._module, __import__("js").Object.fromEntries)`
}

// preloaded is Python asking Emscripten to preload a host file (its
// loader reads paths from the host file system).
func preloaded(path string) string {
	return `(__import__("pyodide_js")._module.FS_createPreloadedFile("/tmp", "pre", ` + pyq(path) + `, True, False), __import__("time").sleep(0.2), open("/tmp/pre").read())`
}

// asyncAttempt defines attempt_async(f): awaits f() and reports as attempt.
const asyncAttempt = `
async def attempt_async(f):
    try:
        r = await f()
        try:
            r = await r.text()
        except BaseException:
            pass
        return "ok: " + repr(r)[:2000]
    except BaseException as e:
        return type(e).__name__ + ": " + str(e)[:2000]
`

// pyq quotes s as a Python string literal.
func pyq(s string) string {
	b := strings.Builder{}
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\x%02x`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
