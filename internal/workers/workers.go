// Package workers runs calls on reused goroutines: each call at once, on a
// goroutine of its own, never waiting for another call.
//
// A new goroutine starts with a small stack and copies it each time a
// call's decoding and handler outgrow it: perf put 14% of a bridge's CPU
// (BenchmarkCallPlugin) and 5% of the host's (the sandbox's tool calls) in
// runtime.newstack with a goroutine per call. A Pool's worker that has
// finished its call waits for the next one, its stack already grown.
//
// A bridge's Calls stream (internal/wire) and a sandbox process's requests
// to the host (host/sandbox) each run their calls on a Pool.
package workers

import (
	"sync"
	"sync/atomic"
)

// Pool runs each call at once on an idle worker if there is one, else on a
// new one. Up to MaxIdle workers wait for a call; one past that ends when
// its call is done. The zero Pool is not usable: use New.
type Pool struct {
	calls chan func() // unbuffered: a send succeeds only with an idle worker
	quit  chan struct{}
	idle  atomic.Int32
	wg    sync.WaitGroup
}

// MaxIdle bounds the workers of a Pool that wait for a call.
const MaxIdle = 16

// New returns a Pool with no workers yet.
func New() *Pool {
	return &Pool{calls: make(chan func()), quit: make(chan struct{})}
}

// Run runs call on an idle worker, or on a new one; it does not wait for
// call. Run must not be called after Close.
func (p *Pool) Run(call func()) {
	select {
	case p.calls <- call:
	default:
		p.wg.Add(1)
		go p.work(call)
	}
}

func (p *Pool) work(call func()) {
	defer p.wg.Done()
	for {
		call()
		if p.idle.Add(1) > MaxIdle {
			p.idle.Add(-1)
			return
		}
		select {
		case call = <-p.calls:
			p.idle.Add(-1)
		case <-p.quit:
			p.idle.Add(-1)
			return
		}
	}
}

// Close ends the idle workers; a busy one ends when its call is done.
// It does not wait for them (Stop does).
func (p *Pool) Close() { close(p.quit) }

// Stop ends the idle workers and waits for the busy ones to finish their
// call.
func (p *Pool) Stop() {
	p.Close()
	p.wg.Wait()
}

// Idle is the number of workers waiting for a call.
func (p *Pool) Idle() int { return int(p.idle.Load()) }
