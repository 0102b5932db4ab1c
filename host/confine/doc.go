// Package confine puts the sandbox process in the kernel's jail: the layer
// of defence between Deno's own permissions and the host. A bug in Deno's
// permission checks, in Pyodide or in the runner then still meets:
//
//   - Landlock (files): the process reads only the paths it is given (the
//     runtime's files, the snapshot, /workspace, /files, the mounts, the
//     system's shared libraries) and writes only the writable ones; it
//     executes nothing but its own program. The kernel checks paths after
//     resolving symlinks, so a link in a mount that leads elsewhere fails.
//   - Landlock (network, ABI 4): TCP connections only to the ports of the
//     network allowlist, no listening; UDP (ABI 10) only for DNS then.
//   - Landlock scopes (ABI 6): no signals to, and no abstract sockets of,
//     processes outside the sandbox.
//   - seccomp: the system calls a Deno + WebAssembly runtime never makes
//     fail with EPERM (ptrace, mount, unshare, setns, bpf, keyctl,
//     perf_event_open, io_uring, kexec, modules, ...); so does any clone
//     that is not a thread (no new processes), and any socket beyond IPv4
//     and IPv6 (none at all without network).
//   - no_new_privs, always.
//   - an unprivileged user when the host runs as root (run_as, default
//     DefaultRunAs), which owns what the sandbox creates (given back to the
//     host's owner on Release) and holds no privilege of root but
//     CAP_DAC_OVERRIDE, which lets it reach the granted paths whatever
//     their owner and which Landlock bounds to them (so this layer needs
//     Landlock).
//   - a cgroup per sandbox (v2 where delegated, v1 otherwise) capping
//     memory, tasks (a thread or worker bomb stops there) and CPU. Where
//     there is none, the sandbox's RSS watchdog caps memory instead.
//
// Check says which layers a Spec gets on this machine and why any is
// missing; with Mode Required a missing layer is an error. Verify proves
// them: it confines a process of this program, which reports what it was
// refused (`parselbox doctor` shows both).
//
// A directory the processes share and must also write to read (Deno's
// DENO_DIR: SQLite caches) is given to each process as a private copy
// (Spec.Private), so that none writes what another will read; what in it
// the process only reads (Spec.Linked: the runner's compiled modules) is
// linked to instead, read-only.
//
// # The shim
//
// Landlock, seccomp, no_new_privs and the user apply to the calling thread
// and survive execve, so a process is confined by a shim that applies them
// to itself and then executes the real program. Command rewrites an
// *exec.Cmd before it is started so that it starts the shim:
//
//	cmd := exec.Command(deno, args...) // with Env, Dir, SysProcAttr as usual
//	guard, err := confine.Command(cmd, &confine.Spec{Read: ..., Write: ..., MemoryMB: 2560})
//	if err != nil { ... }
//	err = cmd.Start() // /proc/self/exe parselbox-confine PLAN deno args...
//	...
//	cmd.Wait()
//	oom := guard.OOMKilled()
//	guard.Release() // removes the cgroup, gives files back
//
// The shim is this package: its init function recognises the argv[0]
// ShimName, applies the plan (decided and checked on the host's side and
// passed as the first argument), and executes the program, before main
// and before the packages initialized after this one. So the shim is any
// program that links package confine, which every program that links
// package host does: bin/parselbox, a Go program embedding host, a test
// binary. Command starts it as /proc/self/exe, with nothing to install
// and nothing to call from main. A program that cannot be re-executed that
// way (its package initialization has side effects, or it is not a Go
// program) sets Spec.Shim to a small binary that does:
//
//	package main
//
//	import _ "github.com/parselbox/parselbox/host/confine"
//
//	func main() {} // never reached when started as the shim
//
// The shim's order: join the cgroup (as root; in v1 the thread that will
// execute the program joins, not the whole shim); open the Landlock rules'
// paths (as root); become the user (keeping only CAP_DAC_OVERRIDE); set
// the parent-death signal again (a change of user clears it) and check the
// parent; no_new_privs; Landlock; seccomp; execve. If any step fails it
// writes "[error] parselbox-confine: ..." to stderr and exits with 125: a
// process is confined as reported, or does not start.
package confine
