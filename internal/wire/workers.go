package wire

import (
	"sync"
	"sync/atomic"
)

// workers run the calls of one Calls stream, each call at once on a
// goroutine of its own: an idle worker if there is one, else a new one.
// A worker that has finished its call waits for the next (up to maxIdle of
// them wait), so that the calls of a stream reuse goroutines whose stacks
// have already grown to what a call needs. A new goroutine starts with a
// small stack and copies it each time a call's decoding and handler outgrow
// it: perf on BenchmarkCallPlugin put 14% of the plugin's CPU in
// runtime.newstack with a goroutine per call.
type workers struct {
	calls chan func() // unbuffered: a send succeeds only with an idle worker
	quit  chan struct{}
	idle  atomic.Int32
	wg    sync.WaitGroup
}

// maxIdle bounds the workers of a stream that wait for a call.
const maxIdle = 16

func newWorkers() *workers {
	return &workers{calls: make(chan func()), quit: make(chan struct{})}
}

// run runs call on an idle worker, or on a new one.
func (w *workers) run(call func()) {
	select {
	case w.calls <- call:
	default:
		w.wg.Add(1)
		go w.work(call)
	}
}

func (w *workers) work(call func()) {
	defer w.wg.Done()
	for {
		call()
		if w.idle.Add(1) > maxIdle {
			w.idle.Add(-1)
			return
		}
		select {
		case call = <-w.calls:
			w.idle.Add(-1)
		case <-w.quit:
			return
		}
	}
}

// stop ends the idle workers and waits for the busy ones to finish their
// call. run must not be called after it.
func (w *workers) stop() {
	close(w.quit)
	w.wg.Wait()
}
