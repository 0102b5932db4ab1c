package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestPruneRunners removes another version's runner unused for a day, with
// its compiled output, and keeps a recent one, the current one (however
// old), names that are not runners, and what a symbolic link points to.
func TestPruneRunners(t *testing.T) {
	cache := t.TempDir()
	now := time.Now()
	old, recent := now.Add(-runnerKeep-time.Hour), now.Add(-time.Hour)
	gen := func(name string) string {
		return filepath.Join(cache, "deno", "gen", "file", strings.TrimPrefix(cache, "/"), name)
	}
	mk := func(dir string, mtime time.Time) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.ts"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	const (
		stale   = "runner-00112233445566aa"
		fresh   = "runner-00112233445566bb"
		current = "runner-00112233445566cc"
		linked  = "runner-00112233445566dd"
	)
	for _, n := range []string{stale, fresh, current} {
		mk(gen(n), old)
	}
	mk(filepath.Join(cache, stale), old)
	mk(filepath.Join(cache, fresh), recent)
	mk(filepath.Join(cache, current), old)
	mk(filepath.Join(cache, "runner-old"), old)
	mk(filepath.Join(cache, "runner-00112233445566AA"), old)
	target := t.TempDir()
	mk(target, old)
	if err := os.Symlink(target, filepath.Join(cache, linked)); err != nil {
		t.Fatal(err)
	}

	pruneRunners(hclog.NewNullLogger(), cache, current, now)

	for p, want := range map[string]bool{
		filepath.Join(cache, stale):                     false,
		gen(stale):                                      false,
		filepath.Join(cache, fresh):                     true,
		gen(fresh):                                      true,
		filepath.Join(cache, current):                   true,
		gen(current):                                    true,
		filepath.Join(cache, "runner-old"):              true,
		filepath.Join(cache, "runner-00112233445566AA"): true,
		filepath.Join(cache, linked):                    true,
		filepath.Join(target, "main.ts"):                true,
		filepath.Join(cache, "deno", "gen", "file"):     true,
	} {
		if _, err := os.Lstat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}

	// Once per process and cache directory.
	mk(filepath.Join(cache, stale), old)
	pruneRunners(hclog.NewNullLogger(), cache, current, now)
	if _, err := os.Stat(filepath.Join(cache, stale)); err != nil {
		t.Errorf("pruned twice: %v", err)
	}
}

// TestPruneRunnersGenThroughSymlink keeps compiled output reached through a
// symbolic link under the Deno cache: it is not followed.
func TestPruneRunnersGenThroughSymlink(t *testing.T) {
	cache := t.TempDir()
	old := time.Now().Add(-2 * runnerKeep)
	const stale = "runner-00112233445566aa"
	elsewhere := t.TempDir()
	genParent := filepath.Join(elsewhere, strings.TrimPrefix(cache, "/"))
	if err := os.MkdirAll(filepath.Join(genParent, stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, "deno", "gen"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(cache, "deno", "gen", "file")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(cache, stale), old, old); err != nil {
		t.Fatal(err)
	}
	pruneRunners(hclog.NewNullLogger(), cache, "runner-00112233445566cc", time.Now())
	if _, err := os.Stat(filepath.Join(cache, stale)); err == nil {
		t.Error("the old runner was kept")
	}
	if _, err := os.Stat(filepath.Join(genParent, stale)); err != nil {
		t.Errorf("removed through a symbolic link: %v", err)
	}
}

// TestInstallRunnerRefreshesMtime: a runner in use never looks old to
// another host's pruneRunners.
func TestInstallRunnerRefreshesMtime(t *testing.T) {
	cache := t.TempDir()
	rt := &Runtime{Pyodide: "/opt/pyodide", Modules: "/opt/node_modules"}
	dir, err := installRunner(cache, rt)
	if err != nil {
		t.Fatal(err)
	}
	if !isRunnerName(filepath.Base(dir)) {
		t.Fatalf("runner directory %q does not match isRunnerName", dir)
	}
	old := time.Now().Add(-2 * runnerKeep)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := installRunner(cache, rt); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if age := time.Since(info.ModTime()); age > time.Hour {
		t.Errorf("runner mtime is %v old after installRunner", age)
	}
}
