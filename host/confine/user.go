package confine

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultRunAs is the user a sandbox runs as when the host runs as root:
// 65532, "nonroot" in distroless images, used by nothing on a usual host.
const DefaultRunAs = "65532:65532"

// ParseRunAs parses a run_as value: "UID", "UID:GID" (the group defaults
// to the uid) or a user name from the user database. Empty is
// DefaultRunAs. Root (0) is refused.
func ParseRunAs(s string) (uid, gid int, err error) {
	s = cmp.Or(s, DefaultRunAs)
	us, gs, hasGID := strings.Cut(s, ":")
	if uid, err = strconv.Atoi(us); err != nil {
		u, lerr := user.Lookup(us)
		if lerr != nil {
			return 0, 0, fmt.Errorf(`%q is neither "UID[:GID]" nor a known user`, s)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	} else {
		gid = uid
	}
	if hasGID {
		if gid, err = strconv.Atoi(gs); err != nil {
			g, lerr := user.LookupGroup(gs)
			if lerr != nil {
				return 0, 0, fmt.Errorf("%q: unknown group %q", s, gs)
			}
			gid, _ = strconv.Atoi(g.Gid)
		}
	}
	switch {
	case uid <= 0 || gid <= 0:
		return 0, 0, fmt.Errorf("%q: the sandbox must not run as root (uid and gid 0)", s)
	case uid > 1<<31-2 || gid > 1<<31-2:
		return 0, 0, fmt.Errorf("%q: out of range", s)
	}
	return uid, gid, nil
}

// becomeUser makes the calling thread uid:gid with no supplementary groups
// and one capability, CAP_DAC_OVERRIDE, kept across the execve that follows
// (in the ambient set; every other one is dropped from the bounding set).
// The uid owns what the sandbox creates and has no other privilege of
// root; CAP_DAC_OVERRIDE lets it open the granted paths whatever their
// owner and mode (a root-only cache, a 0700 temporary directory), and
// Landlock, which the shim applies next, confines it to those paths.
//
// It works on the calling thread only, with raw system calls: the shim
// executes the program from this thread, and the other threads of the Go
// runtime end with the execve.
func becomeUser(uid, gid int) error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if c == unix.CAP_DAC_OVERRIDE {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("keepcaps: %w", err)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return fmt.Errorf("setgroups: %w", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return fmt.Errorf("setresgid %d: %w", gid, e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return fmt.Errorf("setresuid %d: %w", uid, e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	bit := uint32(1) << unix.CAP_DAC_OVERRIDE
	data[0] = unix.CapUserData{Effective: bit, Permitted: bit, Inheritable: bit}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, unix.CAP_DAC_OVERRIDE, 0, 0); err != nil {
		return fmt.Errorf("ambient capability: %w", err)
	}
	return nil
}

// maxGiveBack bounds the files one Release walks.
const maxGiveBack = 500_000

// giveBack returns what the sandbox's user created under the writable
// roots to the owner of each root, once the process has exited.
type giveBack struct {
	uid   int
	roots []string
}

func newGiveBack(uid int, roots []string) *giveBack {
	return &giveBack{uid: uid, roots: roots}
}

func (g *giveBack) restore() error {
	var errs []error
	seen := 0
	for _, root := range g.roots {
		var st syscall.Stat_t
		if err := syscall.Stat(root, &st); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		owner, group := int(st.Uid), int(st.Gid)
		if owner == g.uid {
			continue // the root itself is the sandbox's: nothing to give back to
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if seen++; seen > maxGiveBack {
				return filepath.SkipAll
			}
			var s syscall.Stat_t
			if syscall.Lstat(p, &s) == nil && int(s.Uid) == g.uid {
				if err := os.Lchown(p, owner, group); err != nil {
					errs = append(errs, err)
				}
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
