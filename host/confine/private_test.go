package confine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A private directory is a copy the process may write, owned by its user,
// named in its environment in place of the shared one, and removed on
// Release; the shared one is never granted.
func TestPrivateCopy(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	write(t, filepath.Join(shared, "cache.db"), "rows")
	write(t, filepath.Join(shared, "cache.db-shm"), "index")
	write(t, filepath.Join(shared, "gen", "file", "runner.ts.js"), "js")
	prog, _ := os.Executable()
	cmd := exec.Command(prog)
	cmd.Env = []string{"A=1", "DENO_DIR=" + shared, "Z=2"}
	g, err := Command(cmd, &Spec{Mode: BestEffort, Private: []string{"DENO_DIR"}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "DENO_DIR=") })
	priv := strings.TrimPrefix(cmd.Env[i], "DENO_DIR=")
	if priv == shared || len(cmd.Env) != 3 || cmd.Env[0] != "A=1" || cmd.Env[2] != "Z=2" {
		t.Fatalf("env %v", cmd.Env)
	}
	if got := read(t, filepath.Join(priv, "gen", "file", "runner.ts.js")); got != "js" {
		t.Errorf("copied %q", got)
	}
	if _, err := os.Stat(filepath.Join(priv, "cache.db-shm")); err == nil {
		t.Error("SQLite's shared-memory file was copied")
	}
	if g.Report().Active(LayerUser) {
		var st syscall.Stat_t
		syscall.Stat(filepath.Join(priv, "cache.db"), &st)
		if st.Uid != 65532 {
			t.Errorf("the copy is owned by %d", st.Uid)
		}
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(priv); !os.IsNotExist(err) {
		t.Errorf("the private copy is left: %v", err)
	}
	if got := read(t, filepath.Join(shared, "cache.db")); got != "rows" {
		t.Errorf("the shared directory changed: %q", got)
	}
}

// The private copies of hosts that died are swept; those of live hosts,
// and what only looks like one, are left.
func TestPrivateSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := child.Process.Pid
	if syscall.Kill(deadPID, 0) != syscall.ESRCH {
		t.Skipf("pid %d was reused at once", deadPID)
	}
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		write(t, filepath.Join(p, "gen", "file.js"), "js")
		if err := os.Chmod(p, 0o700); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := mk(fmt.Sprintf("parselbox-private-%d-123", deadPID), 0)
	deadOld := mk(fmt.Sprintf("parselbox-private-%d-456", deadPID), 48*time.Hour)
	oldStyle := mk("parselbox-private-789", 25*time.Hour)
	keep := []string{
		mk(fmt.Sprintf("parselbox-private-%d-123", os.Getpid()), 48*time.Hour), // live host
		mk("parselbox-private-790", time.Hour),                                 // old style, recent
		mk(fmt.Sprintf("parselbox-private-%d-1-x", deadPID), 48*time.Hour),     // not the pattern
		mk(fmt.Sprintf("other-%d-1", deadPID), 48*time.Hour),
	}
	// A symbolic link named as a dead host's copy: neither it nor what it
	// points to is removed.
	target := mk("target", 48*time.Hour)
	link := filepath.Join(dir, fmt.Sprintf("parselbox-private-%d-999", deadPID))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, target, filepath.Join(target, "gen", "file.js"), link)

	sweepPrivate(dir, time.Now())
	for _, p := range []string{dead, deadOld, oldStyle} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s was left: %v", filepath.Base(p), err)
		}
	}
	for _, p := range keep {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// newPrivateCopy names its directory with the host's pid, as sweepPrivate
// expects.
func TestPrivateName(t *testing.T) {
	t.Parallel()
	pc, err := newPrivateCopy(t.TempDir(), -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.remove()
	m := privateName.FindStringSubmatch(filepath.Base(pc.dir))
	if m == nil || m[1] != strconv.Itoa(os.Getpid()) || filepath.Dir(pc.dir) != os.TempDir() {
		t.Errorf("private copy %s", pc.dir)
	}
	if fi, err := os.Lstat(pc.dir); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v", fi.Mode())
	}
}
