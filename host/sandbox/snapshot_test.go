package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/testenv"
)

// snapshots lists the snapshot files in a cache directory.
func snapshots(t *testing.T, cache string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(cache, "snapshots", "pyodide-*.snap"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSnapshotLifecycle builds a snapshot in a fresh cache on the first
// start, loads it on the next, removes stale ones, and recovers from a
// corrupt one. (The builds make this test take ~10-20 s.)
func TestSnapshotLifecycle(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	os.MkdirAll(filepath.Join(cache, "snapshots"), 0o700)
	// Of another version's snapshots, one built 15 days ago is removed, one
	// built 13 days ago stays: another parselbox may share the cache.
	stale := filepath.Join(cache, "snapshots", "pyodide-0.0.1-0123456789abcdef.snap")
	other := filepath.Join(cache, "snapshots", "pyodide-0.0.2-0123456789abcdef.snap")
	os.MkdirAll(filepath.Join(cache, "snapshots", "packages"), 0o700)
	stalePkgs := filepath.Join(cache, "snapshots", "packages", "pkgs-000000000000000000000000.snap")
	for name, age := range map[string]time.Duration{stale: 15 * 24 * time.Hour, other: 13 * 24 * time.Hour, stalePkgs: 15 * 24 * time.Hour} {
		os.WriteFile(name, []byte("an old snapshot"), 0o600)
		if err := os.Chtimes(name, time.Now().Add(-age), time.Now().Add(-age)); err != nil {
			t.Fatal(err)
		}
	}

	var notes []string
	note := func(m string) { notes = append(notes, m) } // called during Start only
	first := start(t, sandbox.Options{CacheDir: cache, Notify: note})
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "preparing the Python runtime (once, a few seconds") ||
		!strings.HasPrefix(notes[1], "the Python runtime is ready (") {
		t.Errorf("what the first start said: %q", notes)
	}
	if !first.Ready().Snapshot {
		t.Fatal("first start did not boot from the snapshot it built")
	}
	snaps := slices.DeleteFunc(snapshots(t, cache), func(s string) bool { return s == other })
	if len(snaps) != 1 || snaps[0] == stale {
		t.Fatalf("snapshots after the build: %v (the stale one must be gone)", snaps)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another version's snapshot of 13 days: %v", err)
	}
	if _, err := os.Stat(stalePkgs); err == nil {
		t.Error("a package snapshot of 15 days is still there")
	}
	built, _ := os.Stat(snaps[0])
	first.Close()

	notes = nil
	second := start(t, sandbox.Options{CacheDir: cache, Notify: note})
	if len(notes) != 0 {
		t.Errorf("the second start said: %q", notes)
	}
	if !second.Ready().Snapshot {
		t.Error("second start did not load the snapshot")
	}
	if fi, _ := os.Stat(snaps[0]); !fi.ModTime().Equal(built.ModTime()) {
		t.Error("second start rebuilt the snapshot")
	}
	if got := output(t, run(t, second, "1 + 1")); got != 2.0 {
		t.Errorf("exec after snapshot boot: %v", got)
	}
	second.Close()

	// A corrupt snapshot is rebuilt, not fatal.
	if err := os.WriteFile(snaps[0], []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := start(t, sandbox.Options{CacheDir: cache})
	if got := output(t, run(t, third, "'recovered'")); got != "recovered" {
		t.Errorf("after a corrupt snapshot: %v", got)
	}
	if fi, err := os.Stat(snaps[0]); err != nil || fi.Size() < 1<<20 {
		t.Errorf("corrupt snapshot not rebuilt: %v", err)
	}

	// The cache directory is shared: another host may remove the snapshot
	// (a newer runner's clean-up, a cache clean) while this one runs. A
	// restart then builds it again instead of failing.
	if err := os.Remove(snaps[0]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(third.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The first execution after the kill reports the crash; the next runs.
	if r := run(t, third, "'lost'"); r.Error == nil || !strings.Contains(r.Error.Message, "sandbox process died") {
		t.Errorf("the crash was not reported: %+v", r.Error)
	}
	if got := output(t, run(t, third, "'restarted'")); got != "restarted" {
		t.Errorf("after the snapshot was removed and the process killed: %v", got)
	}
	info, err := third.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Restarts != 1 || !info.Snapshot {
		t.Errorf("restart after the snapshot was removed: restarts %d, snapshot %v (want 1, true)", info.Restarts, info.Snapshot)
	}
	if fi, err := os.Stat(snaps[0]); err != nil || fi.Size() < 1<<20 {
		t.Errorf("removed snapshot not built again: %v", err)
	}
}

// TestColdBoot boots without any snapshot: the bootstrap runs in-process.
func TestColdBoot(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{NoSnapshot: true})
	if sb.Ready().Snapshot {
		t.Error("NoSnapshot booted from a snapshot")
	}
	if got := output(t, run(t, sb, "import sys; sys.version_info[:2] >= (3, 12)")); got != true {
		t.Errorf("cold boot exec: %v", got)
	}
	_ = testenv.Runtime
}

// TestBootFailureKeepsSnapshot: a start that fails after the snapshot
// loaded (here, a workspace the runner cannot mount) says why, once, and
// leaves the shared snapshot alone (no removal, no rebuild).
func TestBootFailureKeepsSnapshot(t *testing.T) {
	t.Parallel()
	cache, rt, unchanged := sharedSnapshot(t)
	_, err := sandbox.Start(t.Context(), sandbox.Options{Runtime: rt, CacheDir: cache, Workspace: "/proc/1", Logger: testenv.Logger(t)})
	if err == nil {
		t.Fatal("a sandbox started with /proc/1 as its workspace")
	}
	if msg := err.Error(); !strings.Contains(msg, "sandbox exited before becoming ready (exit status 1): file system error E") ||
		strings.Contains(msg, "snapshot") || strings.Contains(msg, "[object Object]") {
		t.Errorf("error: %v", err)
	}
	if err := unchanged(); err != nil {
		t.Errorf("the snapshot was removed or rebuilt: %v", err)
	}
}

// sharedSnapshot makes sure that the tests' shared cache holds the
// snapshot; it returns the cache, the runtime, and a check that the
// snapshot is still that file, unmodified: neither removed nor rebuilt.
func sharedSnapshot(t *testing.T) (string, *sandbox.Runtime, func() error) {
	t.Helper()
	cache := testenv.CacheDir(t)
	start(t, sandbox.Options{CacheDir: cache}).Close() // the snapshot exists
	// Another runner's snapshots stay for a while (pruneSnapshots): this
	// runner's is the one written last.
	snaps := snapshots(t, cache)
	slices.SortFunc(snaps, func(a, b string) int {
		fa, _ := os.Stat(a)
		fb, _ := os.Stat(b)
		return fb.ModTime().Compare(fa.ModTime())
	})
	if len(snaps) == 0 {
		t.Fatalf("no snapshot in %s", cache)
	}
	before, err := os.Stat(snaps[0])
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sandbox.FindRuntime(testenv.Runtime(t).Dir)
	if err != nil {
		t.Fatal(err)
	}
	return cache, rt, func() error {
		after, err := os.Stat(snaps[0])
		switch {
		case err != nil:
			return err
		case !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()):
			return fmt.Errorf("%s is another file, or was modified", snaps[0])
		}
		return nil
	}
}

// TestKilledWhileRestoringKeepsSnapshot: a sandbox process SIGKILLed while
// it loads the snapshot (by an operator, the OOM killer) says nothing about
// the snapshot, which other sandboxes may be using: the start fails, saying
// the process was killed, the snapshot is neither marked unusable (rebuilt)
// nor removed, and the next start boots from it.
func TestKilledWhileRestoringKeepsSnapshot(t *testing.T) {
	t.Parallel()
	cache, rt, unchanged := sharedSnapshot(t)

	// The sandbox's process is killed as soon as it exists: before it
	// said it restored the snapshot (it is found by its workspace, which
	// is its own, on its command line).
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	killed := make(chan int, 1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if pid := processWith("--allow-write=", ws); pid != 0 {
				if syscall.Kill(pid, syscall.SIGKILL) == nil {
					killed <- pid
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	sb, err := sandbox.Start(t.Context(), sandbox.Options{Runtime: rt, CacheDir: cache, Workspace: ws, Logger: testenv.Logger(t)})
	close(stop)
	if err == nil {
		sb.Close()
		t.Fatal("the sandbox started though its process was killed while it restored the snapshot")
	}
	select {
	case <-killed:
	default:
		t.Fatalf("the start failed before its process was killed: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "killed by signal 9") || strings.Contains(msg, "snapshot") {
		t.Errorf("error: %v (want the kill, not the snapshot, named)", err)
	}
	if err := unchanged(); err != nil {
		t.Fatalf("the snapshot was removed or rebuilt after the kill: %v", err)
	}

	next := start(t, sandbox.Options{CacheDir: cache, Workspace: ws})
	if !next.Ready().Snapshot {
		t.Error("the next start did not boot from the snapshot")
	}
	if got := output(t, run(t, next, "6 * 7")); got != 42.0 {
		t.Errorf("the next start: %v", got)
	}
	if err := unchanged(); err != nil {
		t.Errorf("the next start rebuilt the snapshot: %v", err)
	}
}

// processWith is the id of a process whose command line has an argument
// that is prefix followed by a comma-separated list of paths holding path
// (as Deno's --allow-write), or 0.
func processWith(prefix, path string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for arg := range strings.SplitSeq(string(cmdline), "\x00") {
			if list, ok := strings.CutPrefix(arg, prefix); ok && slices.Contains(strings.Split(list, ","), path) {
				return pid
			}
		}
	}
	return 0
}
