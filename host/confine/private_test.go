package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
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
