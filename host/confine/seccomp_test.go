package confine

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// decide runs the filter in x/net/bpf's virtual machine for one system
// call, as the kernel would. The machine loads words big-endian, so each
// 32-bit word of seccomp_data is written big-endian where the (little-
// endian) filter looks for it.
func decide(t *testing.T, p seccomp.Policy, name string, args ...uint64) seccomp.Action {
	t.Helper()
	insts, err := p.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	nr, ok := info.SyscallNames[name]
	if !ok {
		t.Fatalf("no system call %q", name)
	}
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], uint32(nr))
	binary.BigEndian.PutUint32(data[4:], uint32(info.ID))
	for i, a := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[16+8*i+4:], uint32(a>>32))
	}
	ret, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return seccomp.Action(ret)
}

func TestSeccompDenyList(t *testing.T) {
	t.Parallel()
	// The calls the issue names are on the list.
	names := deniedNames()
	for _, n := range []string{"ptrace", "mount", "unshare", "setns", "bpf", "keyctl", "perf_event_open",
		"kexec_load", "init_module", "finit_module", "process_vm_readv", "process_vm_writev",
		"io_uring_setup", "open_by_handle_at", "fork", "vfork"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not denied", n)
		}
	}
	// And none that the runtime needs.
	for _, n := range []string{"execve", "clone", "mmap", "mprotect", "openat", "read", "write", "futex",
		"socketpair", "epoll_wait", "getrandom", "madvise", "prctl", "seccomp", "kill", "tgkill"} {
		if slices.Contains(names, n) {
			t.Errorf("%s is denied", n)
		}
	}
	eperm := seccomp.ActionErrno | seccomp.Action(unix.EPERM)
	enosys := seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)
	thread := uint64(unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM)
	for _, tc := range []struct {
		inet bool
		name string
		args []uint64
		want seccomp.Action
	}{
		{false, "getpid", nil, seccomp.ActionAllow},
		{false, "execve", nil, seccomp.ActionAllow},
		{false, "ptrace", nil, eperm},
		{false, "unshare", []uint64{unix.CLONE_NEWUSER}, eperm},
		{false, "keyctl", nil, eperm},
		{false, "clone", []uint64{thread}, seccomp.ActionAllow},
		{false, "clone", []uint64{uint64(unix.SIGCHLD)}, eperm},                                    // fork
		{false, "clone", []uint64{unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD)}, eperm}, // posix_spawn
		{false, "clone3", nil, enosys},
		{false, "socket", []uint64{unix.AF_INET}, eperm},
		{false, "socket", []uint64{unix.AF_UNIX}, eperm},
		{false, "socketpair", []uint64{unix.AF_UNIX}, seccomp.ActionAllow},
		{true, "socket", []uint64{unix.AF_INET}, seccomp.ActionAllow},
		{true, "socket", []uint64{unix.AF_INET6}, seccomp.ActionAllow},
		{true, "socket", []uint64{unix.AF_UNIX}, eperm},
		{true, "socket", []uint64{unix.AF_NETLINK}, eperm},
		{true, "socket", []uint64{unix.AF_PACKET}, eperm},
		{true, "socket", []uint64{1<<32 | unix.AF_INET}, eperm}, // the high word counts too
	} {
		p := (&seccompPlan{Inet: tc.inet}).policy()
		if got := decide(t, p, tc.name, tc.args...); got != tc.want {
			t.Errorf("inet=%v %s%v: %v (%#x), want %v (%#x)", tc.inet, tc.name, tc.args, got, uint32(got), tc.want, uint32(tc.want))
		}
	}
}
