package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exposeJS runs in the widened Deno before the runner (--preload): it hands
// Python, through the `console` object that the runner lets it reach, what
// a bug in Deno's permissions or in the runner would hand an attacker:
// Deno's whole API, Worker, fetch before the runner narrows it to network
// URLs, and raw system calls through FFI.
const exposeJS = `
console.Deno = Deno;
console.fetch = fetch;
console.Worker = Worker;
let libc;
console.sys = (nr, ...args) => {
  libc ??= Deno.dlopen("libc.so.6", {
    syscall: { parameters: ["i64", "i64", "i64", "i64", "i64"], result: "i64" },
    __errno_location: { parameters: [], result: "pointer" },
  });
  const a = [...args.map(BigInt), 0n, 0n, 0n, 0n].slice(0, 4);
  const ret = Number(libc.symbols.syscall(BigInt(nr), ...a));
  const errno = new Deno.UnsafePointerView(libc.symbols.__errno_location()).getInt32();
  return ret < 0 ? -errno : ret;
};
console.cstr = (s) => Deno.UnsafePointer.value(Deno.UnsafePointer.of(new TextEncoder().encode(s + "\0")));
`

// WidenDeno removes the first wall for the rest of the test: every Deno
// process started through Command (confined or not, Mode Off included)
// gets Deno's widest permissions (read and write anywhere, all network,
// run, env, sys, ffi) and exposeJS. Only the kernel's layers are left.
func WidenDeno(t testing.TB) {
	dir := t.TempDir()
	preload := filepath.Join(dir, "expose.js")
	if err := os.WriteFile(preload, []byte(exposeJS), 0o644); err != nil {
		t.Fatal(err)
	}
	hook := func(cmd *exec.Cmd, spec *Spec) *Spec {
		i := slices.Index(cmd.Args, "run")
		if spec == nil || i < 0 || !slices.Contains(cmd.Args, "--no-prompt") {
			return spec // not the sandbox's Deno
		}
		args := slices.Clone(cmd.Args[:i+1])
		for _, a := range cmd.Args[i+1 : len(cmd.Args)-1] {
			if !strings.HasPrefix(a, "--allow-") && !strings.HasPrefix(a, "--deny-") {
				args = append(args, a)
			}
		}
		args = append(args, "--allow-read", "--allow-write", "--allow-net", "--allow-run", "--allow-env",
			"--allow-sys", "--allow-ffi", "--preload="+preload, cmd.Args[len(cmd.Args)-1])
		cmd.Args = args
		s := *spec
		s.Read = append(slices.Clone(s.Read), dir)
		return &s
	}
	testHook.Store(&hook)
	t.Cleanup(func() { testHook.Store(nil) })
}
