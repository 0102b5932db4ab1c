package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/metrics"
)

var _ host.Observer = (*metrics.Metrics)(nil)

// What an Observer is told appears in the exposition, by label.
func TestExposition(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	open := 3
	m.Watch(metrics.Gauges{Sessions: func() int { return open }, Ready: func() bool { return false }})
	m.Executed(20*time.Millisecond, host.OutcomeOK)
	m.Executed(2*time.Second, host.OutcomeTimeout)
	m.ToolCalled("github", "error", time.Millisecond)
	m.Restarted("memory")
	m.SessionCreated()
	m.SessionRefused(metrics.RefusedDraining)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		"parselbox_sessions_open 3",
		"parselbox_ready 0",
		`parselbox_executions_total{outcome="ok"} 1`,
		`parselbox_executions_total{outcome="timeout"} 1`,
		`parselbox_executions_total{outcome="crashed"} 0`,
		"parselbox_execution_duration_seconds_count 2",
		`parselbox_execution_duration_seconds_bucket{le="0.025"} 1`,
		`parselbox_tool_calls_total{bridge="github",outcome="error"} 1`,
		`parselbox_sandbox_restarts_total{cause="memory"} 1`,
		"parselbox_sessions_created_total 1",
		`parselbox_sessions_refused_total{reason="draining"} 1`,
		`parselbox_sessions_refused_total{reason="limit"} 0`,
		"go_goroutines ",
	} {
		if !strings.Contains(string(body), want+"\n") && !strings.Contains(string(body), want) {
			t.Errorf("missing %q in:\n%s", want, body)
		}
	}
}

// The executions' counters, resolved once for the known outcomes, expose
// exactly what looking each up by its label did: every outcome at 0 from
// the start, each execution counted under its own, an outcome not known
// in advance as well.
func TestExecutionsExposition(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	for _, o := range []string{host.OutcomeOK, host.OutcomeOK, host.OutcomeRaised, host.OutcomeTimeout, host.OutcomeOK, "other"} {
		m.Executed(time.Millisecond, o)
	}
	const want = `# HELP parselbox_executions_total Executions, by outcome: ok, raised, timeout, crashed, failed.
# TYPE parselbox_executions_total counter
parselbox_executions_total{outcome="crashed"} 0
parselbox_executions_total{outcome="failed"} 0
parselbox_executions_total{outcome="ok"} 3
parselbox_executions_total{outcome="other"} 1
parselbox_executions_total{outcome="raised"} 1
parselbox_executions_total{outcome="timeout"} 1
`
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var got strings.Builder
	for line := range strings.Lines(rec.Body.String()) {
		if strings.Contains(line, "parselbox_executions_total") {
			got.WriteString(line)
		}
	}
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("scraped (-want +got):\n%s", diff)
	}
}
