package confine

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/elastic/go-seccomp-bpf"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// plan is what the shim applies to itself before it executes the program:
// everything is decided on the host's side, where it can be reported and
// tested; the shim only carries it out.
type plan struct {
	// Parent is the host's pid; the shim refuses to run for another parent.
	Parent int `json:"parent"`
	// Cgroup lists the files the shim writes "0" (itself) to, to join the
	// cgroup (cgroup.joinFiles).
	Cgroup   []string      `json:"cgroup,omitempty"`
	Landlock *landlockPlan `json:"landlock,omitempty"`
	Seccomp  *seccompPlan  `json:"seccomp,omitempty"`
	// UID and GID are the user to become; -1 keeps the host's.
	UID int `json:"uid"`
	GID int `json:"gid"`

	cgroupLimits *limits // the cgroup Command creates
}

// system is what this machine offers, probed once.
type system struct {
	landlockABI    int // 0: none
	landlockReason string
	seccomp        bool
	seccompReason  string
	euid           int
	cgroups        cgroups
}

var probe = sync.OnceValue(func() *system {
	s := &system{euid: os.Geteuid()}
	s.landlockABI, s.landlockReason = landlockABI()
	if s.seccomp = seccomp.Supported(); !s.seccomp {
		s.seccompReason = "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)"
	}
	s.cgroups = detectCgroups(readFile("/proc/self/mountinfo"), readFile("/proc/self/cgroup"), s.euid)
	// Once per host, as the cgroups are swept; in the background, off the
	// first sandbox's boot: a left copy is a hundred files to unlink.
	go sweepPrivate(os.TempDir(), time.Now())
	return s
})

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// landlockABI returns the Landlock ABI version the kernel offers, lowered
// as go-landlock lowers it for kernels with known errata.
func landlockABI() (int, string) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v <= 0 {
		return 0, "the kernel has no Landlock (it needs Linux 5.13 or later with landlock in the lsm= boot parameter)"
	}
	if v >= 6 {
		if e, err := ll.LandlockGetErrata(); err != nil || e&0x2 == 0 {
			v = 5 // signal scoping is broken on this kernel
		}
	}
	return min(v, maxABI), ""
}

// maxABI is the newest Landlock ABI this package knows the rights of.
const maxABI = 11

// newPlan decides what to apply for spec on sys, and reports it. prog is
// the program to execute ("" only reports).
func newPlan(spec *Spec, sys *system, prog string) (*plan, Report, error) {
	mode := spec.mode()
	rep := Report{Mode: mode}
	if mode == Off {
		return nil, rep, nil
	}
	p := &plan{Parent: hostPID, UID: -1, GID: -1}
	ports, err := spec.ports()
	if err != nil {
		return nil, rep, fmt.Errorf("confine: %w", err)
	}

	without := func(name string) bool { return slices.Contains(spec.Without, name) }
	for _, name := range spec.Without {
		if !slices.Contains(layerNames, name) || name == LayerNoNewPrivs {
			return nil, rep, fmt.Errorf("confine: cannot leave out layer %q (layers: %s; no_new_privs is always applied)",
				name, strings.Join(layerNames, ", "))
		}
	}
	abi := sys.landlockABI
	if abi > 0 && without(LayerLandlock) {
		rep.set(LayerLandlock, Unavailable, "", leftOut)
		abi = 0
	} else if abi > 0 {
		rep.set(LayerLandlock, Active, "ABI "+strconv.Itoa(abi), "")
	} else {
		rep.set(LayerLandlock, Unavailable, "", sys.landlockReason)
	}
	switch {
	case spec.Network:
		rep.set(LayerLandlockNet, NotNeeded, "", "network = true allows every port")
	case without(LayerLandlock) || (abi >= 4 && without(LayerLandlockNet)):
		rep.set(LayerLandlockNet, Unavailable, "", leftOut)
	case abi >= 4:
		rep.set(LayerLandlockNet, Active, describePorts(ports), "")
	case abi > 0:
		rep.set(LayerLandlockNet, Unavailable, "", fmt.Sprintf("Landlock ABI %d has no network rules (ABI 4, Linux 6.7)", abi))
	default:
		rep.set(LayerLandlockNet, Unavailable, "", sys.landlockReason)
	}
	if sys.seccomp && without(LayerSeccomp) {
		rep.set(LayerSeccomp, Unavailable, "", leftOut)
	} else if sys.seccomp {
		rep.set(LayerSeccomp, Active, strconv.Itoa(len(deniedNames()))+" system calls denied, no new processes", "")
		p.Seccomp = &seccompPlan{Inet: spec.Network || len(ports) > 0}
	} else {
		rep.set(LayerSeccomp, Unavailable, "", sys.seccompReason)
	}
	rep.set(LayerNoNewPrivs, Active, "", "")

	switch {
	case sys.euid != 0:
		rep.set(LayerUser, NotNeeded, "", fmt.Sprintf("the host runs as uid %d, not root", sys.euid))
	case without(LayerUser):
		rep.set(LayerUser, Unavailable, "", leftOut)
	case abi == 0:
		rep.set(LayerUser, Unavailable, "", "needs Landlock, which bounds the file access the unprivileged user is given")
	default:
		uid, gid, err := ParseRunAs(spec.RunAs)
		if err != nil {
			return nil, rep, fmt.Errorf("confine: run_as: %w", err)
		}
		p.UID, p.GID = uid, gid
		rep.set(LayerUser, Active, fmt.Sprintf("uid %d, gid %d", uid, gid), "")
	}

	lim := limits{MemoryMB: spec.MemoryMB, CPU: spec.CPU, Pids: spec.Pids}
	if lim.Pids <= 0 {
		lim.Pids = DefaultPids
	}
	if without(LayerCgroup) {
		rep.set(LayerCgroup, Unavailable, "", leftOut)
	} else if reason := sys.cgroups.usable(lim); reason != "" {
		rep.set(LayerCgroup, Unavailable, "", reason)
	} else {
		rep.set(LayerCgroup, Active, sys.cgroups.describe(lim), "")
		p.cgroupLimits = &lim
	}

	if missing := rep.Unavailable(); mode == Required && len(missing) > 0 {
		var parts []string
		for _, l := range missing {
			parts = append(parts, l.Name+": "+l.Reason)
		}
		return nil, rep, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(parts, "; "))
	}
	if abi > 0 && prog != "" {
		if p.Landlock, err = newLandlockPlan(abi, spec, ports, prog); err != nil {
			return nil, rep, err
		}
		if without(LayerLandlockNet) {
			p.Landlock.Net, p.Landlock.Connect, p.Landlock.DNS = 0, nil, false
		}
	}
	return p, rep, nil
}

// leftOut is the reason of a layer named in Spec.Without.
const leftOut = "left out (Spec.Without)"

// layerNames are the layers, in the order of a Report.
var layerNames = []string{LayerLandlock, LayerLandlockNet, LayerSeccomp, LayerNoNewPrivs, LayerUser, LayerCgroup}

func describePorts(ports []uint16) string {
	if len(ports) == 0 {
		return "no TCP connections"
	}
	var s []string
	for _, p := range ports {
		s = append(s, strconv.Itoa(int(p)))
	}
	if len(s) == 1 {
		return "TCP connections to port " + s[0] + " only"
	}
	return "TCP connections to ports " + strings.Join(s, ", ") + " only"
}

// ErrUnavailable means Mode Required and a layer the machine cannot apply.
var ErrUnavailable = errors.New("confinement required but unavailable")

// Machine is what this machine offers for confinement, as `parselbox
// doctor` shows it.
type Machine struct {
	Kernel      string `json:"kernel"`
	LandlockABI int    `json:"landlock_abi"` // 0: none
	Seccomp     bool   `json:"seccomp"`
	EUID        int    `json:"euid"`
	// Cgroup says where sandbox cgroups go ("v1: memory /sys/fs/cgroup/...")
	// or why there are none.
	Cgroup string `json:"cgroup"`
}

// Probe describes this machine.
func Probe() Machine {
	s := probe()
	m := Machine{LandlockABI: s.landlockABI, Seccomp: s.seccomp, EUID: s.euid}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	switch c := s.cgroups; c.version {
	case 2:
		m.Cgroup = "v2: under " + c.v2
	case 1:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.v1)) {
			parts = append(parts, k+" under "+c.v1[k])
		}
		m.Cgroup = "v1: " + strings.Join(parts, ", ")
		if c.reason != "" {
			m.Cgroup += " (" + c.reason + ")"
		}
	default:
		m.Cgroup = "none: " + c.reason
	}
	return m
}
