package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/elastic/go-seccomp-bpf"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ShimName is the argv[0] under which a program linking this package acts
// as the shim: Command starts /proc/self/exe (or Spec.Shim) with it.
const ShimName = "parselbox-confine"

// exitShim is the shim's exit status when it cannot confine or execute.
const exitShim = 125

// The shim runs during package initialization, before main and before the
// packages that come after this one have initialized: it never returns.
func init() {
	if len(os.Args) >= 3 && filepath.Base(os.Args[0]) == ShimName {
		shimMain(os.Args[1:])
	}
}

// shimMain applies the plan in args[0] to this process, then executes
// args[1] with the arguments args[2:].
func shimMain(args []string) {
	err := runShim(args)
	// stderr reaches the host's log, as the sandbox's own stderr does.
	fmt.Fprintf(os.Stderr, "[error] %s: %v\n", ShimName, err)
	os.Exit(exitShim)
}

func runShim(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: %s PLAN PROGRAM ARGV0 [ARG...]", ShimName)
	}
	var p plan
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		return fmt.Errorf("bad plan: %w", err)
	}
	prog, argv := args[1], args[2:]

	// Every layer is applied by this thread, which then executes the
	// program: the new program inherits this thread's credentials, Landlock
	// domain and seccomp filter. It is never unlocked.
	runtime.LockOSThread()

	if p.Parent != 0 && os.Getppid() != p.Parent {
		return fmt.Errorf("parent %d is gone", p.Parent)
	}
	for _, f := range p.Cgroup { // "0": this thread (v1 tasks), its process (cgroup.procs)
		if err := os.WriteFile(f, []byte("0"), 0); err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
	}
	ruleset := -1
	if p.Landlock != nil {
		fd, err := p.Landlock.ruleset() // opens the paths: before giving up root
		if err != nil {
			return err
		}
		ruleset = fd
	}
	if p.UID >= 0 {
		if err := becomeUser(p.UID, p.GID); err != nil {
			return fmt.Errorf("user: %w", err)
		}
		// A change of credentials clears the parent-death signal.
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
			return fmt.Errorf("pdeathsig: %w", err)
		}
		if p.Parent != 0 && os.Getppid() != p.Parent {
			return fmt.Errorf("parent %d is gone", p.Parent)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if ruleset >= 0 {
		if err := ll.LandlockRestrictSelf(ruleset, 0); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
		unix.Close(ruleset)
	}
	if p.Seccomp != nil {
		if err := seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Policy: p.Seccomp.policy()}); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	err := syscall.Exec(prog, argv, os.Environ())
	return fmt.Errorf("executing %s: %w", prog, err)
}
