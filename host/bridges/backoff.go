package bridges

import (
	"sync"
	"sync/atomic"
	"time"
)

// backoff spaces out the restarts of a bridge that keeps failing. After the
// first failure (a crash, or a restart that failed) the next start is
// immediate; after the second it waits base, then 2*base, 4*base, ... up to
// max. Until a start is due, calls fail at once (an agent gets an error it
// can act on rather than a call that hangs). A call that succeeds resets it.
type backoff struct {
	base, max time.Duration

	failing  atomic.Bool // failures > 0, read without the lock on every call
	mu       sync.Mutex
	failures int
	retryAt  time.Time
}

// delay returns the wait before the start that follows the n-th
// consecutive failure.
func (b *backoff) delay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := b.base
	for i := 2; i < n && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// fail records a failure and returns the delay before the next start.
func (b *backoff) fail() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	b.failing.Store(true)
	d := b.delay(b.failures)
	b.retryAt = time.Now().Add(d)
	return d
}

// attempts returns the number of consecutive failures.
func (b *backoff) attempts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures
}

// reset forgets the failures.
func (b *backoff) reset() {
	if !b.failing.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures = 0
	b.retryAt = time.Time{}
	b.failing.Store(false)
}

// remaining returns how long until the next start is due; 0 when it is.
func (b *backoff) remaining() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(time.Until(b.retryAt), 0)
}
