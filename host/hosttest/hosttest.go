package hosttest

import (
	"encoding/json"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// New starts a host sandbox for t with the test runtime, closed at t's
// cleanup. cfg's RuntimeDir is set; an empty CacheDir becomes the shared
// test cache and a nil Logger one that writes through t.
func New(t *testing.T, cfg host.Config) *host.Sandbox {
	t.Helper()
	cfg.RuntimeDir = testenv.Runtime(t).Dir
	if cfg.CacheDir == "" {
		cfg.CacheDir = testenv.CacheDir(t)
	}
	if cfg.Logger == nil {
		cfg.Logger = testenv.Logger(t)
	}
	sb, err := host.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// Run executes code; a failure of Execute itself (not a Python exception)
// fails the test: whatever the guest does, the host answers.
func Run(t *testing.T, sb *host.Sandbox, code string) *host.Result {
	t.Helper()
	r, err := sb.Execute(t.Context(), code)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return r
}

// Value is the result's output decoded from JSON; a Python exception fails
// the test.
func Value(t *testing.T, r *host.Result) any {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("unexpected %s: %s\n%s", r.Error.Type, r.Error.Message, r.Error.Traceback)
	}
	var v any
	if err := json.Unmarshal(r.Output, &v); err != nil {
		t.Fatalf("output %s: %v", r.Output, err)
	}
	return v
}
