package breakin

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/inproc"
)

// TestDiskQuota tries to fill the host's disk past workspace_quota: big
// writes, sparse files, many empty files and directories, a file removed
// while still open, renames that would be counted as freeing twice, the rw
// mounts, and a chatty tool's task log. On the host, what the writable
// directories hold stays within the quota (plus what the host itself
// writes: capped task logs).
func TestDiskQuota(t *testing.T) {
	t.Parallel()
	const quota = 1 << 20
	ws, rw := t.TempDir(), t.TempDir()
	sb, _ := newSandbox(t, host.Config{
		OutputDir: ws, WorkspaceQuota: 1,
		// Removing 5000 nested directories through the sandbox is slow on
		// a loaded machine; the quota, not the time, is under test.
		Timeout: 5 * time.Minute,
		Mounts:  map[string]host.Mount{"rw": {Source: rw, Mode: "rw"}},
		Context: map[string]any{"chatty": chatty{}},
	})
	usage := func() (bytes, entries int64) {
		for _, dir := range []string{ws, rw} {
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
				if p == dir || strings.Contains(p, ".parselbox") {
					return nil
				}
				entries++
				if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
					bytes += fi.Size()
				}
				return nil
			})
		}
		return
	}
	clean := func() {
		// Through the sandbox, so that what it counts is freed too.
		r := run(t, sb, `import gc, os, shutil
gc.collect()
for d in ("/workspace", "/mnt/rw"):
    for n in os.listdir(d):
        if n != ".parselbox":
            p = d + "/" + n
            shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)`)
		if r.Error != nil {
			t.Fatalf("cleaning the workspace: %s: %s", r.Error.Type, r.Error.Message)
		}
	}
	within := func(t *testing.T) {
		t.Helper()
		if b, n := usage(); b+n*4096 > quota+64<<10 {
			t.Errorf("the sandbox holds %d bytes in %d entries on the host, past the quota of %d", b, n, quota)
		}
	}
	full := func(t *testing.T, got string) {
		t.Helper()
		if !strings.HasPrefix(got, "OSError: ") || !strings.Contains(got, "quota") {
			t.Errorf("want OSError (quota exceeded), got %q", got)
		}
	}
	for _, c := range []struct{ name, code string }{
		{"one big write", `open("/workspace/big", "wb").write(b"x" * (2 << 20))`},
		{"many writes", `f = open("/workspace/many", "wb")
for i in range(100): f.write(b"x" * 100_000); f.flush()`},
		{"sparse by seek", `f = open("/workspace/sparse", "wb")
f.seek(100 << 20)
f.write(b"x")
f.close()`},
		{"truncate up", `open("/workspace/t", "wb").close()
os.truncate("/workspace/t", 100 << 20)`},
		{"many empty files", `for i in range(5000): open(f"/workspace/e{i}", "w").close()`},
		{"many directories", `for i in range(5000): os.mkdir(f"/workspace/d{i}")`},
		{"deep directories", `p = "/workspace"
for i in range(5000):
    p += "/d"
    os.mkdir(p)`},
		{"rw mount counts", `open("/workspace/half", "wb").write(b"x" * 600_000)
open("/mnt/rw/half", "wb").write(b"x" * 600_000)`},
		{"removed while open", `f = open("/workspace/held", "wb")
f.write(b"x" * 700_000)
f.flush()
os.remove("/workspace/held")
f.write(b"x" * 200_000)
open("/workspace/more", "wb").write(b"x" * 700_000)`},
		{"rename frees once", `open("/workspace/a", "wb").write(b"x" * 400_000)
open("/workspace/b", "wb").write(b"x" * 400_000)
os.rename("/workspace/a", "/workspace/b")
os.rename("/workspace/b", "/workspace/c")
open("/workspace/d", "wb").write(b"x" * 400_000)
open("/workspace/e", "wb").write(b"x" * 400_000)`},
		{"mmap grow", `import mmap
f = open("/workspace/m", "w+b")
f.truncate(4096)
m = mmap.mmap(f.fileno(), 4096)
m.resize(100 << 20)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			clean()
			got := tryCode(t, sb, c.code)
			full(t, got)
			within(t)
		})
	}
	t.Run("closing a removed file frees it", func(t *testing.T) {
		clean()
		got := tryCode(t, sb, `f = open("/workspace/held", "wb")
f.write(b"x" * 700_000)
os.remove("/workspace/held")
f.close()
open("/workspace/more", "wb").write(b"x" * 700_000)
return "written"`)
		if got != "ok: 'written'" {
			t.Errorf("after closing the removed file: %s", got)
		}
	})
	t.Run("task log of a chatty tool", func(t *testing.T) {
		clean()
		got := str(t, run(t, sb, `t = chatty.talk.task(lines=6000)
await t
t.tail(1)`))
		if !strings.Contains(got, "line 5999") {
			t.Errorf("the tail lost the last line: %q", got)
		}
		var logBytes int64
		filepath.WalkDir(filepath.Join(ws, ".parselbox"), func(p string, d fs.DirEntry, _ error) error {
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
				logBytes += fi.Size()
			}
			return nil
		})
		if logBytes > 1<<20+64<<10 {
			t.Errorf("a task's log holds %d bytes", logBytes)
		}
	})
}

// chatty is a tool that logs a lot.
type chatty struct{}

// Talk logs lines of 1 KB.
func (chatty) Talk(ctx context.Context, lines int) (int, error) {
	pad := strings.Repeat("x", 1000)
	for i := range lines {
		inproc.Request(ctx).Log(pad + " line " + strconv.Itoa(i))
	}
	return lines, nil
}

// ParamNames names Talk's parameter.
func (chatty) ParamNames() map[string][]string { return map[string][]string{"Talk": {"lines"}} }
