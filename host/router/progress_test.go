package router

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The values a sink passes on rise strictly, whatever mix of sbx.progress
// steps (rising, repeated, falling) and bridge lines reaches it; a rising
// step of sbx.progress passes as it is, with its total.
func TestProgressRises(t *testing.T) {
	t.Parallel()
	var got []Progress
	s := newProgressSink(WithProgress(context.Background(), func(p Progress) { got = append(got, p) }))
	user := func(done, total float64) Progress { return Progress{Progress: done, Total: total, Message: "step"} }
	line := Progress{Tool: "gql.query", Message: "gql.query: a line"}
	reports := []Progress{line, line, user(1, 10), line, line, line, user(2, 10), user(2, 10), user(1, 10),
		line, user(3, 10), user(10, 10), line, user(0, 0), line}
	for i := range 2000 { // many lines without a step: still rising
		if i%500 == 0 {
			reports = append(reports, user(float64(11+i), 0))
		}
		reports = append(reports, line)
	}
	for _, p := range reports {
		s.last = time.Time{} // past the rate limit
		s.report(p)
	}
	if len(got) != len(reports) {
		t.Fatalf("%d of %d reports passed on", len(got), len(reports))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Progress <= got[i-1].Progress {
			t.Fatalf("report %d: %g after %g (%+v)", i, got[i].Progress, got[i-1].Progress, got[i])
		}
	}
	// The rising steps of sbx.progress pass as they are.
	for _, i := range []int{2, 6, 10, 11} {
		if want := reports[i]; got[i].Progress != want.Progress || got[i].Total != want.Total {
			t.Errorf("report %d: %+v, want %+v", i, got[i], want)
		}
	}
	// A line between steps of a total keeps the total and stays below
	// the next step.
	if p := got[3]; p.Total != 10 || p.Progress <= 1 || p.Progress >= 1.1 || p.Message != line.Message {
		t.Errorf("a line after step 1/10: %+v", p)
	}
	if p := got[0]; p.Total != 0 || p.Progress <= 0 {
		t.Errorf("a line before any step: %+v", p)
	}
	// Past the total, a line has no total (progress would exceed it).
	if p := got[12]; p.Total != 0 || p.Progress <= 10 {
		t.Errorf("a line after 10/10: %+v", p)
	}
}

// Reports within MinProgressInterval of the last are dropped, except the
// first that says the work is done; nothing passes after stop.
func TestProgressRateLimit(t *testing.T) {
	t.Parallel()
	var got []float64
	s := newProgressSink(WithProgress(context.Background(), func(p Progress) { got = append(got, p.Progress) }))
	s.report(Progress{Progress: 1, Total: 3})
	s.report(Progress{Progress: 2, Total: 3})
	s.report(Progress{Tool: "x.y", Message: "x.y: line"})
	s.report(Progress{Progress: 3, Total: 3})
	s.report(Progress{Progress: 3, Total: 3}) // done once already: limited
	s.stop()
	s.last = time.Time{}
	s.report(Progress{Progress: 4})
	if fmt.Sprint(got) != "[1 3]" {
		t.Errorf("passed on: %v, want [1 3]", got)
	}
}
