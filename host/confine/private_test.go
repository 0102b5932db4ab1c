package confine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
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

	"github.com/parselbox/parselbox/internal/testenv"
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

// Of a SQLite write-ahead log, the copy keeps the header and the frames
// of its salt, up to the first of another salt (left from before the log
// was started again) or cut short; what is not a log is copied whole.
func TestPrivateWALFrames(t *testing.T) {
	t.Parallel()
	const pageSize = 512
	header := func(salt uint32) []byte {
		h := make([]byte, walHeader)
		binary.BigEndian.PutUint32(h[0:], walMagic)
		binary.BigEndian.PutUint32(h[4:], 3007000)
		binary.BigEndian.PutUint32(h[8:], pageSize)
		binary.BigEndian.PutUint32(h[16:], salt)
		binary.BigEndian.PutUint32(h[20:], salt+1)
		return h
	}
	frame := func(page, salt uint32) []byte {
		f := make([]byte, walFrameHeader+pageSize)
		binary.BigEndian.PutUint32(f[0:], page)
		binary.BigEndian.PutUint32(f[8:], salt)
		binary.BigEndian.PutUint32(f[12:], salt+1)
		for i := walFrameHeader; i < len(f); i++ {
			f[i] = byte(page)
		}
		return f
	}
	current := slices.Concat(header(7), frame(1, 7), frame(2, 7), frame(1, 7), frame(3, 7), frame(2, 7))
	old := slices.Concat(frame(4, 6), frame(5, 6), frame(6, 6), frame(7, 6))
	for name, c := range map[string]struct{ file, want []byte }{
		"restarted-wal": {slices.Concat(current, old), current},
		// A frame of another salt among the current ones: SQLite stops
		// there, and the copy may go on, but not stop before (want is
		// then the least it copies).
		"holed-wal": {slices.Concat(current, frame(4, 6), frame(5, 7), old), current},
		"cut-wal":   {slices.Concat(current, frame(3, 7)[:100]), current},
		"whole-wal": {current, current},
		"other-wal": {[]byte("not a log, as long as a header or more"), []byte("not a log, as long as a header or more")},
		"short-wal": {[]byte("short"), []byte("short")},
		"cache.db":  {slices.Concat(current, frame(3, 6)), slices.Concat(current, frame(3, 6))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := t.TempDir()
			if err := os.WriteFile(filepath.Join(src, name), c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			pc, err := newPrivateCopy(src, nil, -1, -1)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.remove()
			got, err := os.ReadFile(filepath.Join(pc.dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if name == "holed-wal" {
				if !bytes.HasPrefix(c.file, got) || !bytes.HasPrefix(got, c.want) {
					t.Errorf("copied %d bytes of %d, want at least %d", len(got), len(c.file), len(c.want))
				}
			} else if !bytes.Equal(got, c.want) {
				t.Errorf("copied %d bytes, want %d", len(got), len(c.want))
			}
		})
	}
}

// SQLite reads from the copy of a log started again after a checkpoint,
// without its older frames, all that it reads from the original.
func TestPrivateWALSQLite(t *testing.T) {
	t.Parallel()
	deno := filepath.Join(testenv.Runtime(t).Dir, "node_modules", "@deno", "linux-x64-glibc", "deno")
	run := func(code string) string {
		t.Helper()
		cmd := exec.Command(deno, "eval", "--no-config", "--quiet", code)
		cmd.Env = []string{"DENO_DIR=" + t.TempDir(), "NO_COLOR=1"}
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			err = nil // killed itself, as Deno's processes are
		}
		if err != nil {
			t.Fatalf("%v: %s", err, ee.Stderr)
		}
		return strings.TrimSpace(string(out))
	}
	shared := t.TempDir()
	db := strconv.Quote(filepath.Join(shared, "cache"))
	// 200 rows, a checkpoint, 5 rows more that start the log again over the
	// first frames; then no checkpoint on exit.
	run(`import { DatabaseSync } from "node:sqlite";
const db = new DatabaseSync(` + db + `);
db.exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
const put = db.prepare("INSERT INTO t(v) VALUES (?)");
for (let i = 0; i < 200; i++) put.run(new Uint8Array(1000).fill(i));
db.exec("PRAGMA wal_checkpoint(PASSIVE)");
for (let i = 0; i < 5; i++) put.run(new Uint8Array(1000).fill(i));
Deno.kill(Deno.pid, "SIGKILL");`)
	pc, err := newPrivateCopy(shared, nil, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.remove()
	orig, err := os.Stat(filepath.Join(shared, "cache-wal"))
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.Stat(filepath.Join(pc.dir, "cache-wal"))
	if err != nil {
		t.Fatal(err)
	}
	if copied.Size() >= orig.Size() {
		t.Errorf("a log of %d bytes copied as %d: its older frames too", orig.Size(), copied.Size())
	}
	query := func(dir string) string {
		return run(`import { DatabaseSync } from "node:sqlite";
const db = new DatabaseSync(` + strconv.Quote(filepath.Join(dir, "cache")) + `);
console.log(JSON.stringify([db.prepare("PRAGMA integrity_check").get(), db.prepare("SELECT count(*) AS n, sum(length(v)) AS bytes, max(k) AS last FROM t").get()]));`)
	}
	got := query(pc.dir)
	if want := query(shared); got != want || !strings.Contains(got, `"n":205`) {
		t.Errorf("the copy reads %s, the original %s", got, want)
	}
	t.Logf("log %d bytes, copied %d: %s", orig.Size(), copied.Size(), got)
}
