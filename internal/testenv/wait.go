package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds; after a deadline long enough for a
// loaded machine (the wait ends with the event, not the deadline) it fails
// the test, saying what it waited for. Call it from the test's goroutine.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
