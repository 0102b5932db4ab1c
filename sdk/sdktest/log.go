package sdktest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// Logger returns an hclog logger that writes to t.Log at debug level, and
// drops what is logged after the test has ended (go-plugin's goroutines may
// log late).
func Logger(t testing.TB) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.stop)
	return hclog.New(&hclog.LoggerOptions{
		Name:   t.Name(),
		Level:  hclog.Debug,
		Output: w,
	})
}

type testWriter struct {
	mu      sync.Mutex
	t       testing.TB
	stopped bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}
