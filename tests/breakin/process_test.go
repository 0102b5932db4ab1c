package breakin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// TestProcesses tries to start a process on the host every way Python
// and the JS it reaches offer. None may run (a marker file would prove
// it), each must fail as a Python error, and the interpreter must live on:
// a variable set before survives every attempt.
func TestProcesses(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	sb, _ := newSandbox(t, host.Config{OutputDir: ws})
	run(t, sb, "survivor = 42")
	cmd := "touch " + marker
	for name, expr := range map[string]string{
		"os.system":               `os.system(` + pyq(cmd) + `)`,
		"os.popen":                `os.popen(` + pyq(cmd) + `).read()`,
		"subprocess.run":          `__import__("subprocess").run(["sh", "-c", ` + pyq(cmd) + `])`,
		"subprocess.Popen shell":  `__import__("subprocess").Popen(` + pyq(cmd) + `, shell=True)`,
		"os.fork":                 `os.fork()`,
		"os.execv":                `os.execv("/bin/sh", ["sh", "-c", ` + pyq(cmd) + `])`,
		"os.posix_spawn":          `os.posix_spawn("/bin/sh", ["sh", "-c", ` + pyq(cmd) + `], {})`,
		"os.spawnv":               `os.spawnv(os.P_WAIT, "/bin/sh", ["sh", "-c", ` + pyq(cmd) + `])`,
		"posix.system":            `__import__("posix").system(` + pyq(cmd) + `)`,
		"pty.spawn":               `__import__("pty").spawn(["sh", "-c", ` + pyq(cmd) + `])`,
		"ctypes system":           `__import__("ctypes").CDLL(None).system(` + pyq(cmd) + `.encode())`,
		"ctypes popen":            `__import__("ctypes").CDLL(None).popen(` + pyq(cmd) + `.encode(), b"r")`,
		"ctypes execv":            `__import__("ctypes").CDLL(None).execv(b"/bin/sh", None)`,
		"ctypes fork":             `__import__("ctypes").CDLL(None).fork()`,
		"emscripten system":       `__import__("pyodide_js")._module.__emscripten_system(0)`,
		"js Deno.Command":         `__import__("js").Deno.Command.new("sh")`,
		"js process":              `__import__("js").process.binding("spawn_sync")`,
		"js Function to Deno":     `__import__("js").Object.constructor("return new Deno.Command('sh', {args: ['-c', '` + cmd + `']}).outputSync()")()`,
		"js import child_process": `__import__("js").Object.constructor("return import('node:child_process')")()`,
		"os.kill parent":          `os.kill(os.getppid(), 9)`,
		"os.kill group":           `os.killpg(0, 9)`,
		"signal alarm":            `(__import__("signal").alarm(1), __import__("time").sleep(1.5))`,
		"WebAssembly host import": `__import__("js").WebAssembly.instantiate(__import__("js").Uint8Array.new([0, 97, 115, 109, 1, 0, 0, 0]))`,
		"Worker":                  `__import__("js").Worker.new("data:text/javascript,Deno.exit(3)")`,
	} {
		t.Run(name, func(t *testing.T) {
			got := try(t, sb, expr)
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("a process ran: %s", got)
			}
			r := run(t, sb, "survivor")
			if r.Error != nil || string(r.Output) != "42" || r.Note != "" {
				t.Errorf("after %s (%s) the interpreter lost its state: %s", name, got, resultText(r))
				run(t, sb, "survivor = 42")
			}
			if strings.HasPrefix(got, "ok: ") && (strings.Contains(name, "system") || strings.Contains(name, "subprocess") || strings.Contains(name, "popen")) {
				// ctypes returns the C function's status: never success.
				if got == "ok: 0" && name != "ctypes popen" {
					t.Errorf("%s reports success: %s", name, got)
				}
			}
		})
	}
}
