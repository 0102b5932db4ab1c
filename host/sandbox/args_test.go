package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
)

// The Deno command line is the permission set: each flag here is a promise
// (no processes, environment, FFI, system information; reads and writes of
// the granted paths only; network per the rules).
func TestDenoArgs(t *testing.T) {
	t.Parallel()
	rt := &Runtime{Deno: "/rt/deno", Pyodide: "/rt/pyodide"}
	perms := permissions{
		read:  []string{"/cache/runner-1", interruptPipe, "/ws", "/cache/snap", "/ws"},
		write: []string{"/ws"},
	}
	want := []string{"/rt/deno", "run",
		"--no-prompt", "--no-config", "--no-lock", "--no-remote", "--no-check", "--cached-only",
		"--node-modules-dir=manual",
		"--allow-read=/cache/runner-1,/cache/snap,/dev/fd/3,/rt/pyodide/pyodide-lock.json,/rt/pyodide/pyodide.asm.wasm,/rt/pyodide/python_stdlib.zip,/ws",
		"--allow-write=/ws",
		"--deny-net",
		"--deny-env", "--deny-run", "--deny-ffi", "--deny-sys",
		"--v8-flags=--disallow-code-generation-from-strings,--expose-gc,--no-wasm-deopt,--wasm-max-mem-pages=4096",
		"/cache/runner-1/main.ts",
	}
	if diff := cmp.Diff(want, denoArgs(rt, "/cache/runner-1", perms, 256)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The network: all of it, or an allowlist.
	perms.network = true
	if got := denoArgs(rt, "/cache/runner-1", perms, 256)[11]; got != "--allow-net" {
		t.Errorf("network: %s", got)
	}
	perms.network, perms.allowNet = false, []string{"127.0.0.1:8080", "example.com:443"}
	if got := denoArgs(rt, "/cache/runner-1", perms, 256)[11]; got != "--allow-net=127.0.0.1:8080,example.com:443" {
		t.Errorf("allowlist: %s", got)
	}
}

// Reported files are kept only when they are regular files inside the
// granted directories.
func TestCheckFiles(t *testing.T) {
	t.Parallel()
	ws, mnt, outside := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), nil, 0o644)
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)
	os.WriteFile(filepath.Join(mnt, "m.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), nil, 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "link"))
	os.Symlink(outside, filepath.Join(ws, "out"))
	s := &Supervisor{log: hclog.NewNullLogger(), roots: []initRoot{
		{Target: "/workspace", Dir: ws}, {Target: "/mnt/data", Dir: mnt}}}
	got := s.checkFiles([]string{
		"/workspace/a.txt", "/mnt/data/m.txt", // kept
		"/workspace/missing", "/workspace/dir", "/workspace/link", "/workspace/out/secret",
		"/workspace/../etc/passwd", "/workspace/./a.txt", "workspace/a.txt", "/etc/passwd",
		"/mnt/other/x", "/workspace", "/mnt/data/../../" + outside + "/secret",
	})
	if diff := cmp.Diff([]string{"/workspace/a.txt", "/mnt/data/m.txt"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The environment is all Deno gets: nothing of the host's, and the malloc
// setting that returns freed memory (denoEnv).
func TestDenoEnv(t *testing.T) {
	t.Setenv("PARSELBOX_SECRET", "x")
	want := []string{"DENO_DIR=/cache/deno", "DENO_NO_PACKAGE_JSON=1", "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1",
		"GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4194304"}
	if diff := cmp.Diff(want, denoEnv("/cache")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
