package sdktest

import (
	"slices"
	"sync"

	"github.com/parselbox/parselbox/sdk"
)

// Recorder is an sdk.EventSink that keeps what a call reports, for tests. Its
// zero value is ready to use; it is safe for concurrent use.
type Recorder struct {
	mu       sync.Mutex
	lines    []string
	progress []Progress
	changed  chan struct{}
}

// Progress is one progress report.
type Progress struct {
	Progress, Total float64
	Message         string
}

// Log implements sdk.EventSink.
func (r *Recorder) Log(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	r.notify()
}

// Progress implements sdk.EventSink.
func (r *Recorder) Progress(progress, total float64, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, Progress{Progress: progress, Total: total, Message: message})
	r.notify()
}

func (r *Recorder) notify() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Lines returns the log lines so far.
func (r *Recorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// ProgressReports returns the progress reports so far.
func (r *Recorder) ProgressReports() []Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.progress)
}

// Changed returns a channel that is closed at the next Log or Progress, to
// wait for an event without polling:
//
//	for !slices.Contains(rec.Lines(), "tick 1") {
//		<-rec.Changed()
//	}
//
// Take the channel before checking the condition it waits for, or use
// WaitFor.
func (r *Recorder) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// WaitFor blocks until the recorder holds the log line, or done is closed;
// it reports whether the line arrived.
func (r *Recorder) WaitFor(line string, done <-chan struct{}) bool {
	for {
		changed := r.Changed()
		if slices.Contains(r.Lines(), line) {
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

var _ sdk.EventSink = (*Recorder)(nil)
