package bridges

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoffDelays(t *testing.T) {
	t.Parallel()
	b := &backoff{base: 100 * time.Millisecond, max: time.Second}
	want := []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
		800 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := b.delay(i + 1); got != w {
			t.Errorf("delay(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := b.delay(1000); got != time.Second {
		t.Errorf("delay(1000) = %v, want the cap", got)
	}
}

// TestBackoffRemaining checks, on synctest's fake clock, when restarts are
// due after consecutive failures, and that a success resets the backoff.
func TestBackoffRemaining(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := &backoff{base: 100 * time.Millisecond, max: 300 * time.Millisecond}
		if got := b.remaining(); got != 0 {
			t.Errorf("remaining before any failure = %v", got)
		}
		for i, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond} {
			if got := b.fail(); got != want {
				t.Errorf("delay after failure %d = %v, want %v", i+1, got, want)
			}
			if got := b.remaining(); got != want {
				t.Errorf("remaining after failure %d = %v, want %v", i+1, got, want)
			}
			time.Sleep(want)
			if got := b.remaining(); got != 0 {
				t.Errorf("remaining %v after failure %d = %v, want 0", want, i+1, got)
			}
		}

		// Time passes.
		b.fail()
		time.Sleep(250 * time.Millisecond)
		if got := b.remaining(); got != 50*time.Millisecond {
			t.Errorf("remaining 250ms after a failure = %v, want 50ms", got)
		}

		// A success resets.
		b.reset()
		if got := b.remaining(); got != 0 || b.attempts() != 0 {
			t.Errorf("after reset: remaining %v, attempts %d", got, b.attempts())
		}
		if got := b.fail(); got != 0 {
			t.Errorf("delay after a reset and a failure = %v, want 0", got)
		}
	})
}
