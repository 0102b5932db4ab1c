package breakin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/internal/testenv"
)

// TestNoHostPathOrEnv looks for the host's paths and environment in
// everything the sandbox can read about itself: os.environ (with "_"),
// sys, Pyodide's configuration, JS stack traces, sbx.info() and help, and
// the messages of every failing file operation on every kind of root.
func TestNoHostPathOrEnv(t *testing.T) {
	t.Parallel()
	ft := newFileTarget(t)
	sb := ft.sb
	wd, _ := os.Getwd()
	cache := testenv.CacheDir(t)
	rtDir := testenv.Runtime(t).Dir
	needles := append(ft.hostPaths(), wd, cache, rtDir, filepath.Dir(rtDir), "/sys/fs/cgroup", hostSecretValue, hostSecretVar)
	home, _ := os.UserHomeDir()
	if home != "" && home != "/" {
		needles = append(needles, home)
	}

	for name, expr := range map[string]string{
		"os.environ":               `dict(os.environ)`,
		"environ underscore":       `os.environ.get("_")`,
		"getenv host var":          `os.getenv(` + pyq(hostSecretVar) + `)`,
		"Module ENV":               `__import__("pyodide_js")._module.ENV.to_py()`,
		"sys":                      `(__import__("sys").path, __import__("sys").executable, __import__("sys").argv, __import__("sys").prefix, __import__("sys").orig_argv)`,
		"cwd and home":             `(os.getcwd(), os.path.expanduser("~"))`,
		"pyodide config":           `{k: str(v)[:300] for k, v in __import__("pyodide_js")._api.config.object_entries()}`,
		"lockfile base":            `(str(__import__("pyodide_js").lockfileBaseUrl), __import__("pyodide_js").version)`,
		"js stack":                 `__import__("js").Error.new("x").stack`,
		"js error from runtime":    `attempt(lambda: __import__("js").JSON.parse("{"))`,
		"python traceback":         `__import__("traceback").format_stack()`,
		"module files":             `[getattr(m, "__file__", "") for m in list(__import__("sys").modules.values())]`,
		"sbx.info":                 `sbx.info()`,
		"help(sbx)":                `sbx.help()`,
		"tmp and proc listing":     `(os.listdir("/tmp"), os.listdir("/proc") if os.path.exists("/proc") else None, os.listdir("/dev"))`,
		"ENOENT on each root":      `[attempt(lambda p=p: open(p + "/nope")) for p in ("/workspace", "/files", "/mnt/ro", "/mnt/rw")]`,
		"EROFS on ro":              `[attempt(lambda: open("/mnt/ro/x", "w")), attempt(lambda: os.mkdir("/mnt/ro/d")), attempt(lambda: os.rename("/mnt/ro/data.txt", "/mnt/ro/y"))]`,
		"EXDEV across roots":       `attempt(lambda: os.rename("/mnt/rw/keep.txt", "/workspace/keep.txt"))`,
		"stat of roots":            `[tuple(os.stat(p)) for p in ("/workspace", "/files", "/mnt/ro", "/mnt/rw")]`,
		"statvfs":                  `tuple(os.statvfs("/workspace"))`,
		"realpath of roots":        `[os.path.realpath(p) for p in ("/workspace", "/files", "/mnt/ro", "/mnt/rw")]`,
		"mount table":              `[str(m.mountpoint) + " " + str(__import__("js").JSON.stringify(m.opts)) for m in __import__("pyodide_js").FS.root.mount.mounts]`,
		"mount opts of each root":  `[str(__import__("js").JSON.stringify(__import__("pyodide_js").FS.lookupPath(p).node.mount.opts)) for p in ("/workspace", "/files", "/mnt/ro", "/mnt/rw")]`,
		"mount type of each root":  `[str(__import__("pyodide_js").FS.lookupPath(p).node.mount.type.object_keys()) for p in ("/workspace", "/mnt/rw")]`,
		"node of a root":           `[{k: str(getattr(n, k, ""))[:200] for k in n.object_keys()} for n in (__import__("pyodide_js").FS.lookupPath(p).node for p in ("/workspace", "/mnt/ro"))]`,
		"driver on a forged root":  forgedRoot(ft.base),
		"fetch error":              `attempt(lambda: __import__("js").fetch("file:///x"))`,
		"unhandled JS error text":  `str(__import__("js").Error.new())`,
		"import of missing module": `attempt(lambda: __import__("no_such_module_xyz"))`,
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, sb, attempt+expr)
			value(t, r) // the expression ran: a failure would prove nothing
			noneOf(t, name, resultText(r), needles...)
		})
	}
	t.Run("environ is only what was given", func(t *testing.T) {
		got := str(t, run(t, sb, `import os, json; json.dumps(sorted(os.environ))`))
		if got != `["HOME", "USER"]` {
			t.Errorf("os.environ has %s", got)
		}
	})
	t.Run("no host path in the guide or the tool description", func(t *testing.T) {
		noneOf(t, "Prompt", sb.Prompt(), needles...)
	})
	if strings.Contains(ft.logs.String(), hostSecretValue) {
		t.Error("the host's environment reached the log")
	}
}

// forgedRoot is Python that calls the sandbox's own file system driver
// (the type of /workspace's mount) with a hand-made node whose mount claims
// a host directory as its root.
func forgedRoot(dir string) string {
	return `attempt(lambda: (lambda m, O: (lambda r: (setattr(r, "parent", r), setattr(r, "name", "/"), list(m.type.node_ops.readdir(r)))[-1])(O([["mount", O([["opts", O([["root", O([["dir", ` + pyq(dir) + `], ["target", "/workspace"], ["readOnly", False]])]])], ["mountpoint", "/nowhere"]])]])))(__import__("pyodide_js").FS.lookupPath("/workspace").node.mount, __import__("js").Object.fromEntries))`
}
