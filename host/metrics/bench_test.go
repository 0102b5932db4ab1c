package metrics_test

import (
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/metrics"
)

// What an execution and a tool call cost the host in metrics.
func BenchmarkExecuted(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.Executed(time.Millisecond, host.OutcomeOK)
	}
}

func BenchmarkToolCalled(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ToolCalled("github", "ok", time.Millisecond)
	}
}
