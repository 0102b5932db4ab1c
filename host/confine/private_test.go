package confine

import (
	"encoding/json"
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

// A directory named in Linked is linked to rather than copied where
// Landlock makes it read-only: the process reads the shared one, granted
// read and nothing more.
func TestPrivateLinked(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	write(t, filepath.Join(shared, "cache.db"), "rows")
	write(t, filepath.Join(shared, "gen", "runner", "main.ts.js"), "js")
	write(t, filepath.Join(shared, "gen", "guest", "mod.ts.js"), "guest js")
	prog, _ := os.Executable()
	cmd := exec.Command(prog)
	cmd.Env = []string{"DENO_DIR=" + shared}
	g, err := Command(cmd, &Spec{Mode: BestEffort, Private: []string{"DENO_DIR"}, Linked: []string{"gen/runner"}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	priv := strings.TrimPrefix(cmd.Env[0], "DENO_DIR=")
	fi, err := os.Lstat(filepath.Join(priv, "gen", "runner"))
	if err != nil {
		t.Fatal(err)
	}
	linked := g.Report().Active(LayerLandlock)
	if linked != (fi.Mode()&os.ModeSymlink != 0) {
		t.Errorf("gen/runner is %v with Landlock %v", fi.Mode(), linked)
	}
	if fi, err := os.Lstat(filepath.Join(priv, "gen", "guest")); err != nil || !fi.IsDir() {
		t.Errorf("gen/guest, not linked, is not copied: %v", err)
	}
	for f, want := range map[string]string{"gen/runner/main.ts.js": "js", "gen/guest/mod.ts.js": "guest js", "cache.db": "rows"} {
		if got := read(t, filepath.Join(priv, f)); got != want {
			t.Errorf("%s: %q", f, got)
		}
	}
	if !linked {
		return
	}
	var p plan
	if err := json.Unmarshal([]byte(cmd.Args[1]), &p); err != nil {
		t.Fatal(err)
	}
	var granted []pathRule
	for _, r := range p.Landlock.Paths {
		if strings.HasPrefix(r.Path, shared) || strings.HasPrefix(shared, r.Path+"/") {
			granted = append(granted, r)
		}
	}
	if want := []pathRule{{filepath.Join(shared, "gen", "runner"), rightsReadDir & p.Landlock.FS}}; !slices.Equal(granted, want) {
		t.Errorf("granted %+v in the shared directory, want %+v", granted, want)
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
	pc, err := newPrivateCopy(t.TempDir(), nil, -1, -1)
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
