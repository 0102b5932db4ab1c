package workers

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// goroutineID is the id of the calling goroutine, from its stack header
// ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// waitIdle waits until n workers wait for a call.
func waitIdle(t *testing.T, w *Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // a deadline, not a measure
	for w.Idle() != n {
		if time.Now().After(deadline) {
			t.Fatalf("idle workers = %d, want %d", w.Idle(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWorkersReuse: a call that follows a finished one runs on the same
// goroutine, not on a new one.
func TestWorkersReuse(t *testing.T) {
	w := New()
	defer w.Stop()
	ids := make(chan string, 2)
	w.Run(func() { ids <- goroutineID() })
	first := <-ids
	waitIdle(t, w, 1)
	w.Run(func() { ids <- goroutineID() })
	if second := <-ids; second != first {
		t.Errorf("the second call ran on goroutine %s, the first on %s; want the same", second, first)
	}
}

// TestWorkersConcurrent: calls never wait for each other, beyond the idle
// workers too; the extra workers end when their call is done, and stop
// waits for the calls running.
func TestWorkersConcurrent(t *testing.T) {
	w := New()
	const n = MaxIdle + 4
	var (
		started sync.WaitGroup
		release = make(chan struct{})
		done    atomic.Int32
	)
	started.Add(n)
	for range n {
		w.Run(func() {
			started.Done()
			<-release // every call waits until all have started
			done.Add(1)
		})
	}
	started.Wait()
	close(release)
	waitIdle(t, w, MaxIdle)

	// One more call, while the idle ones wait: it runs once stop is called
	// only if stop waits for it.
	hold := make(chan struct{})
	w.Run(func() {
		<-hold
		done.Add(1)
	})
	go func() {
		time.Sleep(10 * time.Millisecond)
		close(hold)
	}()
	w.Stop()
	if got := done.Load(); got != n+1 {
		t.Errorf("%d calls done when stop returned, want %d", got, n+1)
	}
	if got := w.Idle(); got > MaxIdle {
		t.Errorf("idle workers = %d, more than %d", got, MaxIdle)
	}
}

// TestWorkersClose: Close ends the idle workers at once and lets a busy
// one finish its call, without waiting for it.
func TestWorkersClose(t *testing.T) {
	w := New()
	w.Run(func() {})
	waitIdle(t, w, 1)
	hold := make(chan struct{})
	var done atomic.Bool
	w.Run(func() {
		<-hold
		done.Store(true)
	})
	w.Close() // returns while the call waits for hold
	close(hold)
	w.wg.Wait()
	if !done.Load() {
		t.Error("a call running at Close did not finish")
	}
	if got := w.Idle(); got != 0 {
		t.Errorf("idle workers after Close = %d, want 0", got)
	}
}
