package mcpserver

import (
	"context"
	"os"
	"slices"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host"
)

// box is a sandbox as the server hands it to a session.
type box struct {
	sb  *host.Sandbox
	ap  *approver // nil unless the server asks for approvals
	dir string    // the session's own output directory, if any
	// app is the link to the session's app its client gets, when it is
	// not the app's URL: served beyond loopback, the URL with the
	// session's own token (serveToken), which opens that app only.
	app, serveToken string
}

func (b *box) close() error {
	if b.ap != nil {
		b.ap.bind(nil)
	}
	err := b.sb.Close()
	if b.dir != "" {
		_ = os.Remove(b.dir) // only if the session wrote nothing
	}
	return err
}

// pool keeps sandboxes booted ahead of the sessions that will take them. A
// take refills it in the background; a take from an empty pool waits for a
// boot in progress, or boots its own.
type pool struct {
	size int
	boot func(context.Context) (*box, error)
	// prime readies a sandbox booted ahead (warm, refill), not one a
	// taker waits for.
	prime func(context.Context, *box) error
	log   hclog.Logger

	mu      sync.Mutex
	ready   []*box         // oldest first
	waiters []chan *box    // takers waiting for a boot in progress
	booting int            // boots in progress
	closed  bool           //
	wg      sync.WaitGroup // boots in progress
}

// bootAhead boots and primes a sandbox for a session to come.
func (p *pool) bootAhead(ctx context.Context) (*box, error) {
	b, err := p.boot(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.prime(ctx, b); err != nil {
		_ = b.close()
		return nil, err
	}
	return b, nil
}

// warm boots the first sandbox and waits for it, so that a configuration
// that cannot start fails here; the rest boot in the background.
func (p *pool) warm(ctx context.Context) error {
	if p.size == 0 {
		return nil
	}
	b, err := p.bootAhead(ctx)
	if err != nil {
		return err
	}
	p.put(b)
	p.mu.Lock()
	p.refillLocked()
	p.mu.Unlock()
	return nil
}

// get takes a booted sandbox.
func (p *pool) get(ctx context.Context) (*box, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if len(p.ready) > 0 {
		b := p.ready[0]
		p.ready = p.ready[1:]
		p.refillLocked()
		p.mu.Unlock()
		return b, nil
	}
	var ch chan *box
	if p.booting > len(p.waiters) {
		// A boot is under way and nobody else waits for it: wait.
		ch = make(chan *box, 1)
		p.waiters = append(p.waiters, ch)
	}
	p.refillLocked()
	p.mu.Unlock()
	if ch == nil {
		return p.boot(ctx)
	}
	select {
	case b := <-ch:
		if b != nil {
			return b, nil
		}
		return p.boot(ctx) // that boot failed: boot our own
	case <-ctx.Done():
		p.mu.Lock()
		i := slices.Index(p.waiters, ch)
		if i >= 0 {
			p.waiters = slices.Delete(p.waiters, i, i+1)
		}
		p.mu.Unlock()
		if i < 0 { // served meanwhile (under p.mu): keep what came
			if b := <-ch; b != nil {
				p.put(b)
			}
		}
		return nil, ctx.Err()
	}
}

// put hands a booted sandbox to a waiter, or keeps it. A sandbox that
// arrives after close is closed here, synchronously: put runs in the boot's
// goroutine, which close waits for.
func (p *pool) put(b *box) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = b.close()
		return
	}
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		w <- b // buffered: never blocks
	} else {
		p.ready = append(p.ready, b)
	}
	p.mu.Unlock()
}

// refillLocked starts boots until the pool will hold size sandboxes once
// the waiters are served. p.mu must be held.
func (p *pool) refillLocked() {
	for !p.closed && len(p.ready)+p.booting < p.size+len(p.waiters) {
		p.booting++
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// Not cancelled on close, which waits for it instead: a boot
			// is short, and one cut off would leave a process behind.
			b, err := p.bootAhead(context.Background())
			p.mu.Lock()
			p.booting--
			p.mu.Unlock()
			if err != nil {
				p.log.Error("booting a sandbox for the pool failed", logError, err)
				p.failOne()
				return
			}
			p.put(b)
		}()
	}
}

// failOne tells a waiter that the boot it waited for failed.
func (p *pool) failOne() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.waiters) > p.booting {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		w <- nil
	}
}

// close stops the pool and its idle sandboxes.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	ready := p.ready
	p.ready = nil
	for _, w := range p.waiters {
		w <- nil
	}
	p.waiters = nil
	p.mu.Unlock()
	for _, b := range ready {
		_ = b.close()
	}
	p.wg.Wait()
}

// idle is how many booted sandboxes wait in the pool.
func (p *pool) idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}
