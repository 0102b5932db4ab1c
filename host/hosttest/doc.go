// Package hosttest starts real host sandboxes for tests (the pinned
// runtime, the shared snapshot cache, a logger through testing.T) and runs
// code in them, failing the test when the host itself fails: shared by the
// host package's tests and the break-in suite.
package hosttest
