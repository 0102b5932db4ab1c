package confine

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// limits are what a sandbox's cgroup caps.
type limits struct {
	MemoryMB int
	CPU      float64
	Pids     int
}

// cgroups says where this host can make a cgroup per sandbox: under the
// parent of its own cgroup in a delegated cgroup v2 hierarchy, or under its
// own cgroup of each cgroup v1 controller.
type cgroups struct {
	version int    // 2 or 1; 0: none
	reason  string // why none (or why not v2)
	v2      string // the directory sandbox cgroups are made in
	v1      map[string]string
}

// The v1 controllers a sandbox's cgroup needs; cpu only for a CPU limit.
var v1Needed = []string{"memory", "pids"}

// mount is one line of /proc/self/mountinfo that matters here.
type mount struct {
	root, point, fstype string
	options             []string // super options: the v1 controllers
}

func parseMountinfo(b []byte) []mount {
	var out []mount
	for line := range strings.Lines(string(b)) {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		out = append(out, mount{root: unescape.Replace(f[3]), point: unescape.Replace(f[4]), fstype: g[0], options: strings.Split(g[2], ",")})
	}
	return out
}

// unescape undoes the octal escapes the kernel writes in mountinfo paths:
// space, tab, newline and backslash.
var unescape = strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)

// parseSelfCgroup maps each v1 controller (and "" for v2) to the process's
// cgroup path, from /proc/self/cgroup ("4:memory:/a/b", "0::/c").
func parseSelfCgroup(b []byte) map[string]string {
	out := map[string]string{}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") { // "" (v2) is [""]
			out[c] = parts[2]
		}
	}
	return out
}

// within returns the directory of cgroup path p in a mount of its
// hierarchy whose root is m.root, or "" when p is outside the mount.
func within(m mount, p string) string {
	rel, ok := strings.CutPrefix(p, m.root)
	if !ok || (rel != "" && m.root != "/" && rel[0] != '/') {
		return ""
	}
	return filepath.Join(m.point, rel)
}

// detectCgroups finds where sandbox cgroups can go, from the mount table
// and the process's own cgroups; euid says whether to expect root's rights.
func detectCgroups(mountinfo, self []byte, euid int) cgroups {
	mounts := parseMountinfo(mountinfo)
	own := parseSelfCgroup(self)
	var reasons []string
	// cgroup v2: the parent of our cgroup must enable memory and pids for
	// its children, and be ours to write (root, or delegated to us).
	for _, m := range mounts {
		if m.fstype != "cgroup2" {
			continue
		}
		p, ok := own[""]
		if !ok {
			break
		}
		dir := within(m, p)
		if dir == "" {
			break
		}
		parent := dir
		if path.Clean(p) != path.Clean(m.root) {
			parent = filepath.Dir(dir)
		}
		sub := strings.Fields(string(readFile(filepath.Join(parent, "cgroup.subtree_control"))))
		switch {
		case !slices.Contains(sub, "memory") || !slices.Contains(sub, "pids"):
			reasons = append(reasons, fmt.Sprintf("cgroup v2: %s does not enable memory and pids for its sub-cgroups (not delegated)", parent))
		case unix.Access(parent, unix.W_OK) != nil || unix.Access(filepath.Join(parent, "cgroup.procs"), unix.W_OK) != nil:
			reasons = append(reasons, fmt.Sprintf("cgroup v2: %s is not writable (not delegated to uid %d)", parent, euid))
		default:
			sweep(parent)
			return cgroups{version: 2, v2: parent}
		}
		break
	}
	// cgroup v1: one hierarchy per controller; sandboxes go under our own
	// cgroup in each.
	v1 := map[string]string{}
	for _, m := range mounts {
		if m.fstype != "cgroup" {
			continue
		}
		for _, c := range append(slices.Clone(v1Needed), "cpu") {
			if !slices.Contains(m.options, c) || v1[c] != "" {
				continue
			}
			if dir := within(m, own[c]); dir != "" && own[c] != "" {
				v1[c] = dir
			}
		}
	}
	var missing []string
	for _, c := range v1Needed {
		if v1[c] == "" {
			missing = append(missing, c)
		}
	}
	switch {
	case len(missing) == len(v1Needed) && len(reasons) == 0:
		reasons = append(reasons, "no cgroup file system is mounted")
	case len(missing) == len(v1Needed):
	case len(missing) > 0:
		reasons = append(reasons, "cgroup v1: no "+strings.Join(missing, ", ")+" controller")
	default:
		for _, c := range slices.Sorted(maps.Keys(v1)) {
			if unix.Access(v1[c], unix.W_OK) != nil {
				reasons = append(reasons, fmt.Sprintf("cgroup v1: %s is not writable (uid %d)", v1[c], euid))
				return cgroups{reason: strings.Join(reasons, "; ")}
			}
		}
		for _, d := range v1 {
			sweep(d)
		}
		return cgroups{version: 1, v1: v1, reason: strings.Join(reasons, "; ")}
	}
	return cgroups{reason: strings.Join(reasons, "; ")} // each case above gave one
}

// usable returns why the cgroups cannot enforce l, or "".
func (c cgroups) usable(l limits) string {
	switch {
	case c.version == 0:
		return c.reason
	case c.version == 1 && l.CPU > 0 && c.v1["cpu"] == "":
		return "cgroup v1: no cpu controller for the cpu limit"
	case c.version == 2 && l.CPU > 0:
		sub := strings.Fields(string(readFile(filepath.Join(c.v2, "cgroup.subtree_control"))))
		if !slices.Contains(sub, "cpu") {
			return fmt.Sprintf("cgroup v2: %s does not enable cpu for its sub-cgroups", c.v2)
		}
	}
	return ""
}

func (c cgroups) describe(l limits) string {
	var parts []string
	if l.MemoryMB > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MB", l.MemoryMB))
	}
	parts = append(parts, fmt.Sprintf("pids %d", l.Pids))
	if l.CPU > 0 {
		parts = append(parts, "cpu "+strconv.FormatFloat(l.CPU, 'f', -1, 64))
	}
	return fmt.Sprintf("v%d: %s", c.version, strings.Join(parts, ", "))
}

// cgroup is one sandbox's cgroup: one directory in v2, one per controller
// in v1.
type cgroup struct {
	version  int
	dirs     []string
	memDir   string
	pidsDir  string
	memoryMB int
	pids     int
}

var cgroupSeq atomic.Int64

// cgroupName is parselbox-<host pid>-<n>: sweep recognises the cgroups of
// hosts that are gone.
var cgroupName = regexp.MustCompile(`^parselbox-([0-9]+)-[0-9]+$`)

// create makes a cgroup with limits l.
func (c cgroups) create(l limits) (_ *cgroup, err error) {
	name := fmt.Sprintf("parselbox-%d-%d", hostPID, cgroupSeq.Add(1))
	g := &cgroup{version: c.version, memoryMB: l.MemoryMB, pids: l.Pids}
	defer func() {
		if err != nil {
			g.remove()
		}
	}()
	mk := func(parent string) (string, error) {
		d := filepath.Join(parent, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", fmt.Errorf("creating cgroup: %w", err)
		}
		g.dirs = append(g.dirs, d)
		return d, nil
	}
	set := func(dir, file, value string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
			return fmt.Errorf("cgroup %s: %w", file, err)
		}
		return nil
	}
	mem := strconv.Itoa(l.MemoryMB << 20)
	if c.version == 2 {
		d, err := mk(c.v2)
		if err != nil {
			return nil, err
		}
		g.memDir, g.pidsDir = d, d
		if l.MemoryMB > 0 {
			if err := set(d, "memory.max", mem); err != nil {
				return nil, err
			}
			set(d, "memory.swap.max", "0") // absent without swap accounting
			set(d, "memory.oom.group", "1")
		}
		if err := set(d, "pids.max", strconv.Itoa(l.Pids)); err != nil {
			return nil, err
		}
		if l.CPU > 0 {
			if err := set(d, "cpu.max", fmt.Sprintf("%d %d", cpuQuota(l.CPU), cpuPeriod)); err != nil {
				return nil, err
			}
		}
		return g, nil
	}
	md, err := mk(c.v1["memory"])
	if err != nil {
		return nil, err
	}
	g.memDir = md
	if l.MemoryMB > 0 {
		if err := set(md, "memory.limit_in_bytes", mem); err != nil {
			return nil, err
		}
		set(md, "memory.memsw.limit_in_bytes", mem) // absent without swap accounting
	}
	pd, err := mk(c.v1["pids"])
	if err != nil {
		return nil, err
	}
	g.pidsDir = pd
	if err := set(pd, "pids.max", strconv.Itoa(l.Pids)); err != nil {
		return nil, err
	}
	if l.CPU > 0 {
		cd, err := mk(c.v1["cpu"])
		if err != nil {
			return nil, err
		}
		if err := set(cd, "cpu.cfs_period_us", strconv.Itoa(cpuPeriod)); err != nil {
			return nil, err
		}
		if err := set(cd, "cpu.cfs_quota_us", strconv.Itoa(cpuQuota(l.CPU))); err != nil {
			return nil, err
		}
	}
	return g, nil
}

const cpuPeriod = 100_000 // µs

func cpuQuota(cores float64) int { return max(1000, int(cores*cpuPeriod)) }

// joinFiles are the files the shim writes "0" (itself) to, to join the
// cgroup. In v1, each controller's tasks: that moves the writing thread
// alone, the one that then executes the program, which execve leaves the
// process's only thread and which makes every later one. Moving a whole
// process (cgroup.procs) write-locks the kernel's lock on all thread
// groups (cgroup_threadgroup_rwsem), which waits for an RCU grace period:
// 4 to 24 ms (median 11.7) on this 2-core machine, on the path of every
// confined boot, against 0.1 ms for the writer's own thread, which the
// kernel moves without that lock. In v2 a cgroup that is not threaded
// takes whole processes only (cgroup.procs).
func (g *cgroup) joinFiles() []string {
	file := "cgroup.procs"
	if g.version == 1 {
		file = "tasks"
	}
	var out []string
	for _, d := range g.dirs {
		out = append(out, filepath.Join(d, file))
	}
	return out
}

// oomKills is how many times the kernel killed a process of the cgroup for
// exceeding its memory limit.
func (g *cgroup) oomKills() int {
	file := "memory.events" // v2: "oom_kill N"
	if g.version == 1 {
		file = "memory.oom_control" // v1: "oom_kill N" too
	}
	return eventCount(filepath.Join(g.memDir, file), "oom_kill")
}

// pidsRefused is how many new tasks (threads, processes) the pids limit
// refused.
func (g *cgroup) pidsRefused() int {
	return eventCount(filepath.Join(g.pidsDir, "pids.events"), "max")
}

// eventCount is the number of the line "KEY N" of a cgroup file; 0 without one.
func eventCount(file, key string) int {
	for line := range strings.Lines(string(readFile(file))) {
		if rest, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n
		}
	}
	return 0
}

// remove deletes the cgroup's directories, waiting a little for the kernel
// to let go of tasks that are exiting.
func (g *cgroup) remove() error {
	var errs []error
	for _, d := range g.dirs {
		deadline := time.Now().Add(2 * time.Second)
		for {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	g.dirs = nil
	return errors.Join(errs...)
}

// sweep removes the empty cgroups left in dir by hosts that died without
// releasing them.
func sweep(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		m := cgroupName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() || !hostGone(m[1]) {
			continue
		}
		syscall.Rmdir(filepath.Join(dir, e.Name())) // fails, harmlessly, if not empty
	}
}
