package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parselbox/parselbox/host/sandbox"
)

// TestPruneBootRecompiles: a host whose compiled runner another host pruned
// from the Deno cache (or whose runner directory went too) boots all the
// same, and Deno compiles the runner again.
func TestPruneBootRecompiles(t *testing.T) {
	cache := t.TempDir()
	boot := func() {
		t.Helper()
		sb := start(t, sandbox.Options{CacheDir: cache, NoSnapshot: true})
		if got := output(t, run(t, sb, "1+1")); got != float64(2) {
			t.Fatalf("1+1 = %v", got)
		}
		sb.Close()
	}
	boot()
	runners, err := filepath.Glob(filepath.Join(cache, "runner-*"))
	if err != nil || len(runners) != 1 {
		t.Fatalf("runner directories: %v, %v", runners, err)
	}
	gen := filepath.Join(cache, "deno", "gen", "file", strings.TrimPrefix(runners[0], "/"))
	if _, err := os.Stat(filepath.Join(gen, "main.ts.js")); err != nil {
		t.Fatalf("no compiled runner where pruneRunners looks: %v", err)
	}
	if err := os.RemoveAll(gen); err != nil {
		t.Fatal(err)
	}
	boot()
	if _, err := os.Stat(filepath.Join(gen, "main.ts.js")); err != nil {
		t.Fatalf("Deno did not compile the runner again: %v", err)
	}

	// A live sandbox whose runner directory went too restarts all the same.
	sb := start(t, sandbox.Options{CacheDir: cache, NoSnapshot: true})
	for _, p := range []string{gen, runners[0]} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	pid := sb.PID()
	_ = syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "a restart", func() bool { p := sb.PID(); return p != 0 && p != pid })
	if got := output(t, run(t, sb, "'next'")); got != "next" {
		t.Errorf("after the runner was removed: %v", got)
	}
}
