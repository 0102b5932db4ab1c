package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A fake cgroup file system in a temp dir: the directories and files the
// kernel would show, and the mountinfo and /proc/self/cgroup that point at
// them. The logic under test reads and writes these as it would the real
// ones; the real cgroups are exercised by the break-in tests.

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeV1 is a cgroup v1 machine like the build machine: memory, pids and cpu
// hierarchies, the process in /a/b of the memory one, a cgroup2 mount with
// no controllers.
func fakeV1(t *testing.T) cgroups {
	root := t.TempDir()
	mi := fmt.Sprintf(`25 1 0:22 / %[1]s/unified rw,nosuid - cgroup2 cgroup2 rw
30 25 0:26 / %[1]s/memory rw,nosuid - cgroup cgroup rw,memory
31 25 0:27 / %[1]s/pids rw,nosuid - cgroup cgroup rw,pids
32 25 0:28 / %[1]s/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct
33 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
`, root)
	for _, d := range []string{"unified", "memory/a/b", "pids", "cpu,cpuacct"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	write(t, filepath.Join(root, "unified", "cgroup.subtree_control"), "")
	self := "9:name=systemd:/\n8:pids:/\n4:memory:/a/b\n1:cpu,cpuacct:/\n0::/\n"
	c := detectCgroups([]byte(mi), []byte(self), 0)
	if c.version != 1 {
		t.Fatalf("fake v1: %+v", c)
	}
	return c
}

func TestCgroupV1Detect(t *testing.T) {
	t.Parallel()
	c := fakeV1(t)
	root := filepath.Dir(c.v1["pids"])
	want := map[string]string{
		"memory": filepath.Join(root, "memory", "a", "b"),
		"pids":   filepath.Join(root, "pids"),
		"cpu":    filepath.Join(root, "cpu,cpuacct"),
	}
	if diff := cmp.Diff(want, c.v1); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// v2 was considered and refused, and says why.
	if !strings.Contains(c.reason, "does not enable memory and pids") {
		t.Errorf("reason %q", c.reason)
	}
}

func TestCgroupV1CreateLimitsOOM(t *testing.T) {
	t.Parallel()
	c := fakeV1(t)
	g, err := c.create(limits{MemoryMB: 256, CPU: 0.5, Pids: 64})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(g.dirs[0])
	if !cgroupName.MatchString(name) || !strings.HasPrefix(name, "parselbox-"+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("name %q", name)
	}
	for file, want := range map[string]string{
		filepath.Join(c.v1["memory"], name, "memory.limit_in_bytes"):       "268435456",
		filepath.Join(c.v1["memory"], name, "memory.memsw.limit_in_bytes"): "268435456",
		filepath.Join(c.v1["pids"], name, "pids.max"):                      "64",
		filepath.Join(c.v1["cpu"], name, "cpu.cfs_period_us"):              "100000",
		filepath.Join(c.v1["cpu"], name, "cpu.cfs_quota_us"):               "50000",
	} {
		if got := read(t, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	// The shim's thread joins, not its process (joinFiles).
	wantJoin := []string{
		filepath.Join(c.v1["memory"], name, "tasks"),
		filepath.Join(c.v1["pids"], name, "tasks"),
		filepath.Join(c.v1["cpu"], name, "tasks"),
	}
	if diff := cmp.Diff(wantJoin, g.joinFiles()); diff != "" {
		t.Errorf("join (-want +got):\n%s", diff)
	}
	if n := g.oomKills(); n != 0 {
		t.Errorf("oom kills before any: %d", n)
	}
	write(t, filepath.Join(c.v1["memory"], name, "memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
	if n := g.oomKills(); n != 2 {
		t.Errorf("oom kills %d, want 2", n)
	}
	// Without a CPU limit there is no cpu cgroup to join.
	g2, err := c.create(limits{MemoryMB: 0, Pids: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(g2.joinFiles()) != 2 {
		t.Errorf("join %v", g2.joinFiles())
	}
	if _, err := os.Stat(filepath.Join(g2.memDir, "memory.limit_in_bytes")); err == nil {
		t.Error("a memory limit of 0 was written")
	}
}

func TestCgroupV2Delegated(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mi := fmt.Sprintf("25 1 0:22 / %s rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", root)
	self := []byte("0::/user.slice/app.scope\n")
	parent := filepath.Join(root, "user.slice")
	os.MkdirAll(filepath.Join(parent, "app.scope"), 0o755)

	// Not delegated: the parent does not enable the controllers.
	write(t, filepath.Join(parent, "cgroup.subtree_control"), "cpu\n")
	write(t, filepath.Join(parent, "cgroup.procs"), "")
	c := detectCgroups([]byte(mi), self, 1000)
	if c.version != 0 || !strings.Contains(c.reason, parent+" does not enable memory and pids") {
		t.Errorf("not delegated: %+v", c)
	}

	write(t, filepath.Join(parent, "cgroup.subtree_control"), "cpu memory pids\n")
	c = detectCgroups([]byte(mi), self, 1000)
	if c.version != 2 || c.v2 != parent {
		t.Fatalf("delegated: %+v", c)
	}
	if r := c.usable(limits{CPU: 1}); r != "" {
		t.Errorf("cpu enabled but %q", r)
	}
	g, err := c.create(limits{MemoryMB: 512, CPU: 1.5, Pids: 100})
	if err != nil {
		t.Fatal(err)
	}
	d := g.dirs[0]
	for file, want := range map[string]string{
		"memory.max": "536870912", "memory.oom.group": "1", "pids.max": "100", "cpu.max": "150000 100000",
	} {
		if got := read(t, filepath.Join(d, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if diff := cmp.Diff([]string{filepath.Join(d, "cgroup.procs")}, g.joinFiles()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	write(t, filepath.Join(d, "memory.events"), "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n")
	if n := g.oomKills(); n != 1 {
		t.Errorf("oom kills %d", n)
	}

	// A CPU limit needs cpu enabled too.
	write(t, filepath.Join(parent, "cgroup.subtree_control"), "memory pids\n")
	if r := c.usable(limits{CPU: 1}); !strings.Contains(r, "does not enable cpu") {
		t.Errorf("cpu not enabled: %q", r)
	}
	if r := c.usable(limits{}); r != "" {
		t.Errorf("no cpu limit: %q", r)
	}
}

func TestCgroupV2AtTheRoot(t *testing.T) {
	t.Parallel()
	// In a container with its own cgroup namespace the process is at "/":
	// sandboxes go in the root of the mount.
	root := t.TempDir()
	mi := fmt.Sprintf("25 1 0:22 / %s rw - cgroup2 cgroup2 rw\n", root)
	write(t, filepath.Join(root, "cgroup.subtree_control"), "memory pids")
	write(t, filepath.Join(root, "cgroup.procs"), "")
	if c := detectCgroups([]byte(mi), []byte("0::/\n"), 0); c.version != 2 || c.v2 != root {
		t.Errorf("%+v", c)
	}
}

func TestCgroupV1BindMountedRoot(t *testing.T) {
	t.Parallel()
	// A container sees its own cgroup as the root of a v1 mount.
	root := t.TempDir()
	mi := fmt.Sprintf(`30 25 0:26 /docker/abc %[1]s/memory ro,nosuid - cgroup cgroup rw,memory
31 25 0:27 /docker/abc %[1]s/pids rw,nosuid - cgroup cgroup rw,pids
`, root)
	os.MkdirAll(filepath.Join(root, "memory", "sub"), 0o755)
	os.MkdirAll(filepath.Join(root, "pids"), 0o755)
	c := detectCgroups([]byte(mi), []byte("4:memory:/docker/abc/sub\n8:pids:/docker/abc\n"), 0)
	if c.version != 1 || c.v1["memory"] != filepath.Join(root, "memory", "sub") || c.v1["pids"] != filepath.Join(root, "pids") {
		t.Errorf("%+v", c)
	}
	// A path outside the mount's root is not reachable.
	c = detectCgroups([]byte(mi), []byte("4:memory:/elsewhere\n8:pids:/docker/abc\n"), 0)
	if c.version != 0 || !strings.Contains(c.reason, "no memory controller") {
		t.Errorf("%+v", c)
	}
}

func TestCgroupNone(t *testing.T) {
	t.Parallel()
	c := detectCgroups([]byte("33 1 8:1 / / rw - ext4 /dev/sda1 rw\n"), nil, 0)
	if c.version != 0 || c.reason != "no cgroup file system is mounted" {
		t.Errorf("%+v", c)
	}
	if c.usable(limits{}) == "" {
		t.Error("usable without cgroups")
	}
}

func TestCgroupSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dead := 1 << 22 // above the default pid_max
	if syscall.Kill(dead, 0) != syscall.ESRCH {
		t.Fatalf("pid %d exists: above PID_MAX_LIMIT, it cannot", dead)
	}
	stale := filepath.Join(dir, fmt.Sprintf("parselbox-%d-1", dead))
	mine := filepath.Join(dir, fmt.Sprintf("parselbox-%d-1", os.Getpid()))
	other := filepath.Join(dir, "someone-else")
	for _, d := range []string{stale, mine, other} {
		os.Mkdir(d, 0o755)
	}
	sweep(dir)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("the cgroup of a dead host was left")
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed", d)
		}
	}
}

func TestMountinfoEscapes(t *testing.T) {
	t.Parallel()
	m := parseMountinfo([]byte(`30 25 0:26 / /sys/fs/cgroup/my\040dir rw - cgroup cgroup rw,memory` + "\n"))
	if len(m) != 1 || m[0].point != "/sys/fs/cgroup/my dir" {
		t.Errorf("%+v", m)
	}
}
