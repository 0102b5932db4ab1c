// Package testenv finds the pinned runtime for tests that start real
// sandboxes, and gives them a logger that writes through testing.T.
package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host/sandbox"
)

// RequireEnv, when set (make test sets it), turns a missing runtime into a
// test failure instead of a skip, so that CI cannot pass by skipping.
const RequireEnv = "PARSELBOX_REQUIRE_RUNTIME"

var (
	once    sync.Once
	runtime *sandbox.Runtime
	findErr error
)

// Runtime returns the runtime of this checkout (runtime/ at the module root,
// or $PARSELBOX_RUNTIME). Without one, the test is skipped, or fails when
// $PARSELBOX_REQUIRE_RUNTIME is set.
func Runtime(t testing.TB) *sandbox.Runtime {
	t.Helper()
	once.Do(func() {
		dir := os.Getenv(sandbox.RuntimeEnv)
		if dir == "" {
			dir = filepath.Join(ModuleRoot(t), "runtime")
		}
		runtime, findErr = sandbox.FindRuntime(dir)
	})
	if findErr != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("runtime required: %v", findErr)
		}
		t.Skipf("no runtime (run `make runtime`): %v", findErr)
	}
	return runtime
}

// ModuleRoot returns the directory holding go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// CacheDir is the cache shared by all tests, so that the memory snapshot is
// built once: $PARSELBOX_TEST_CACHE, or the user cache directory.
func CacheDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("PARSELBOX_TEST_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "parselbox")
}

// Logger returns an hclog logger that writes through t, and drops what
// goroutines log after the test's cleanups have run.
func Logger(t testing.TB) hclog.Logger {
	w := &writer{t: t}
	t.Cleanup(func() { w.done.Store(true) })
	return hclog.New(&hclog.LoggerOptions{
		Name:   t.Name(),
		Level:  hclog.Debug,
		Output: w,
	})
}

type writer struct {
	t    testing.TB
	done atomic.Bool
}

func (w *writer) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}
