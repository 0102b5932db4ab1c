package confine

import (
	"slices"

	"github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// seccompPlan is the system call filter: everything is allowed but what
// denied lists, new processes, and sockets beyond the network's needs.
type seccompPlan struct {
	// Inet allows IPv4 and IPv6 sockets (the network or an allowlist);
	// otherwise no socket can be created at all (socketpair still can).
	Inet bool `json:"inet"`
}

// denied are the system calls a Deno + WebAssembly runtime never makes, by
// what an attacker would use them for. They fail with EPERM.
var denied = []struct {
	why   string
	names []string
}{
	{"reading or steering other processes", []string{"ptrace", "process_vm_readv", "process_vm_writev",
		"pidfd_getfd", "kcmp"}},
	{"changing the file system's shape", []string{"mount", "umount2", "pivot_root", "chroot", "fsopen",
		"fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"}},
	{"new namespaces, where the process would be root", []string{"unshare", "setns"}},
	{"kernel attack surface the runtime does not use", []string{"bpf", "perf_event_open", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key", "request_key",
		"lookup_dcookie", "uselib"}},
	{"opening files by handle, around path checks", []string{"open_by_handle_at", "name_to_handle_at"}},
	{"administering the machine", []string{"kexec_load", "kexec_file_load", "init_module", "finit_module",
		"delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
		"iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname",
		"setdomainname", "vhangup"}},
	{"changing identity", []string{"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
		"setgroups", "setfsuid", "setfsgid", "capset"}},
	{"new processes (threads are clone with CLONE_THREAD)", []string{"fork", "vfork", "execveat"}},
}

// deniedNames lists every unconditionally denied system call.
func deniedNames() []string {
	var out []string
	for _, d := range denied {
		out = append(out, d.names...)
	}
	return out
}

// policy is the filter of the plan.
func (p *seccompPlan) policy() seccomp.Policy {
	eperm := seccomp.ActionErrno | seccomp.Action(unix.EPERM)
	groups := []seccomp.SyscallGroup{{Action: eperm, Names: deniedNames()}}
	// A clone that is not a thread is a new process.
	conds := []seccomp.NameWithConditions{{Name: "clone", Conditions: seccomp.ArgumentConditions{
		{Argument: 0, Operation: seccomp.BitsNotSet, Value: unix.CLONE_THREAD},
	}}}
	if p.Inet {
		conds = append(conds, seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_INET},
			{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_INET6},
		}})
	} else {
		groups[0].Names = append(slices.Clone(groups[0].Names), "socket")
	}
	groups = append(groups,
		seccomp.SyscallGroup{Action: eperm, NamesWithCondtions: conds},
		// clone3 passes its flags in memory, where a filter cannot look:
		// ENOSYS makes the C library fall back to clone, which is checked.
		seccomp.SyscallGroup{Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS), Names: []string{"clone3"}},
	)
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
}
