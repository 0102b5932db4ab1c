// Package testenv finds the pinned runtime for tests that start real
// sandboxes, and gives them a logger that writes through testing.T. It
// imports nothing of parselbox (see package internal/protocol for the
// rule): it finds the runtime directory itself, and a test that needs a
// sandbox.Runtime passes its Dir to sandbox.FindRuntime.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// RuntimeEnv names the environment variable that points at the runtime
// directory (the one host/sandbox reads too).
const RuntimeEnv = "PARSELBOX_RUNTIME"

// A RuntimeDir is the runtime directory of this checkout, installed by
// `make runtime`.
type RuntimeDir struct {
	// Dir is the runtime directory (the one holding package.json).
	Dir string
}

// RequireEnv, when set (make test sets it), turns a missing runtime into a
// test failure instead of a skip, so that CI cannot pass by skipping.
const RequireEnv = "PARSELBOX_REQUIRE_RUNTIME"

// RequireConfinementEnv, when set (.ci/run sets it), turns a kernel layer
// of confinement this machine cannot apply into a failure of the tests
// that need it instead of a skip.
const RequireConfinementEnv = "PARSELBOX_REQUIRE_CONFINEMENT"

// Missing skips t because something it needs is missing (format says
// what), or fails it when the environment variable require is set.
func Missing(t testing.TB, require, format string, args ...any) {
	t.Helper()
	if os.Getenv(require) != "" {
		t.Fatalf(format+" (required: $%s is set)", append(args, require)...)
	}
	t.Skipf(format, args...)
}

var (
	once    sync.Once
	runtime *RuntimeDir
	findErr error
)

// Runtime returns the runtime of this checkout (runtime/ at the module root,
// or $PARSELBOX_RUNTIME). Without one, the test is skipped, or fails when
// $PARSELBOX_REQUIRE_RUNTIME is set.
func Runtime(t testing.TB) *RuntimeDir {
	t.Helper()
	once.Do(func() {
		dir := os.Getenv(RuntimeEnv)
		if dir == "" {
			dir = filepath.Join(ModuleRoot(t), "runtime")
		}
		runtime, findErr = findRuntime(dir)
	})
	if findErr != nil {
		Missing(t, RequireEnv, "no runtime (run `make runtime`): %v", findErr)
	}
	return runtime
}

// findRuntime checks that dir holds the installed runtime: the deno binary
// and Pyodide.
func findRuntime(dir string) (*RuntimeDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	deno := filepath.Join(abs, "node_modules", "@deno", "linux-x64-glibc", "deno")
	if fi, err := os.Stat(deno); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%s: no executable deno at %s", dir, deno)
	}
	if _, err := os.Stat(filepath.Join(abs, "node_modules", "pyodide", "package.json")); err != nil {
		return nil, errors.Join(fmt.Errorf("%s: pyodide not installed", dir), err)
	}
	return &RuntimeDir{Dir: abs}, nil
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
	t.Cleanup(w.stop)
	return hclog.New(&hclog.LoggerOptions{
		Name:   t.Name(),
		Level:  hclog.Debug,
		Output: w,
	})
}

// writer writes through t until stop; a write under way holds stop back, so
// that nothing reaches t after its test has ended.
type writer struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *writer) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// RequireNPMEnv, when set, turns an unreachable npm registry into a test
// failure instead of a skip.
const RequireNPMEnv = "PARSELBOX_REQUIRE_NPM"

// NPMRegistry checks that the npm registry ($NPM_CONFIG_REGISTRY, or
// registry.npmjs.org) answers. Otherwise the test is skipped, saying so, or
// fails when $PARSELBOX_REQUIRE_NPM is set.
func NPMRegistry(t testing.TB) {
	t.Helper()
	registry := os.Getenv("NPM_CONFIG_REGISTRY")
	if registry == "" {
		registry = "https://registry.npmjs.org/"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, strings.TrimSuffix(registry, "/")+"/lodash", nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
	}
	if err != nil {
		Missing(t, RequireNPMEnv, "the npm registry %s is unreachable, so the npm packages cannot be fetched: %v", registry, err)
	}
}
