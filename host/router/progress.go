package router

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/parselbox/parselbox/sdk"
)

// Progress is a sign of life from a running execution, for a front end to
// pass on while the code runs (MCP notifications/progress): from
// sbx.progress(done, total, message) in Python or js(), or from a bridge's log and
// progress lines (redacted of its secrets, like everything it sends).
type Progress struct {
	// Progress is how much is done; Total how much there is (0: unknown).
	// A bridge's line carries a value a fraction above the last of
	// sbx.progress (see progressSink.report): values always rise.
	Progress, Total float64
	// Message says what is going on; a bridge's line starts with the
	// tool's path ("gql.query: [3/10] (30%) ...").
	Message string
	// Tool is the tool path of a bridge's line, "" for sbx.progress.
	Tool string
}

type progressKey struct{}

// WithProgress returns a context whose executions (Begin) pass their
// progress to fn, at most one call every MinProgressInterval (a call that
// says the work is done always passes), with values that rise from call to
// call. fn runs on the goroutine of the tool call that reported it, one
// call at a time: it must not block.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// MinProgressInterval is the shortest time between two progress reports of
// one execution: reports in between are dropped.
const MinProgressInterval = 100 * time.Millisecond

// maxProgressMessage bounds a progress message, in bytes.
const maxProgressMessage = 500

// progressSink rate-limits the progress of one execution and keeps its
// values rising: MCP wants every notification's progress above the last.
type progressSink struct {
	fn      func(Progress)
	mu      sync.Mutex
	last    time.Time
	sent    bool    // a report was passed on
	value   float64 // the last Progress value passed on
	base    float64 // the last value sbx.progress advanced to
	total   float64 // the last total sbx.progress gave (0: none)
	steps   int     // reports passed on since base that did not advance it
	stopped bool    // the execution ended
}

// stop ends the reports: a task that outlives its execution reports to
// nobody.
func (s *progressSink) stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

func newProgressSink(ctx context.Context) *progressSink {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	if fn == nil {
		return nil
	}
	return &progressSink{fn: fn}
}

// report passes p on unless the last report was too recent. The values
// passed on rise strictly: a value of sbx.progress above the last one
// passes as it is; a bridge's line, or a value of sbx.progress that does
// not rise, is the n-th report since that value and carries
// base + unit*n/(n+1), which rises with n and stays below base + unit
// (unit: 1, or a hundredth of sbx.progress's total if that is smaller),
// so that the next step of sbx.progress still rises above it.
func (s *progressSink) report(p Progress) {
	if s == nil {
		return
	}
	p.Message = clipMessage(p.Message)
	s.mu.Lock()
	now := time.Now()
	// The report that the work is done passes the rate limit (once: a
	// repeat does not rise).
	final := p.Total > 0 && p.Progress >= p.Total && p.Tool == "" && (!s.sent || p.Progress > s.value)
	if s.stopped || !final && now.Sub(s.last) < MinProgressInterval {
		s.mu.Unlock()
		return
	}
	s.last = now
	if p.Tool == "" {
		s.total = p.Total
	}
	if p.Tool == "" && (!s.sent || p.Progress > s.value) {
		s.base, s.steps = p.Progress, 0
	} else {
		s.steps++
		unit := 1.0
		if s.total > 0 {
			unit = min(unit, s.total/100)
		}
		n := float64(s.steps)
		p.Progress = s.base + unit*n/(n+1)
		if s.sent && p.Progress <= s.value { // rounding, past many steps
			p.Progress = math.Nextafter(s.value, math.Inf(1))
		}
		p.Total = 0
		if s.total > p.Progress {
			p.Total = s.total
		}
	}
	s.sent, s.value = true, p.Progress
	defer s.mu.Unlock()
	s.fn(p) // under the lock: in the order of the values
}

func clipMessage(m string) string {
	m = strings.Join(strings.Fields(m), " ")
	if len(m) <= maxProgressMessage {
		return m
	}
	cut := maxProgressMessage
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + "…"
}

// toolEvents passes a bridge call's log and progress lines on as the
// execution's progress, after next (the task's log), if any.
type toolEvents struct {
	sink *progressSink
	path string
	next sdk.EventSink
}

func (t toolEvents) Log(line string) {
	if t.next != nil {
		t.next.Log(line)
	}
	t.sink.report(Progress{Tool: t.path, Message: t.path + ": " + line})
}

func (t toolEvents) Progress(progress, total float64, message string) {
	if t.next != nil {
		t.next.Progress(progress, total, message)
	}
	t.sink.report(Progress{Tool: t.path, Message: t.path + ": " + progressLine(progress, total, message)})
}
