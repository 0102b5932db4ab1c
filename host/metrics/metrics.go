package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of Parselbox's own.
const Namespace = "parselbox"

// The reasons a new session is refused (label "reason" of
// parselbox_sessions_refused_total).
const (
	RefusedLimit    = "limit"    // max_sessions are open
	RefusedDraining = "draining" // the host is draining
	RefusedFailed   = "failed"   // its sandbox could not start
)

// Metrics holds the host's metrics in a registry of its own.
type Metrics struct {
	reg *prometheus.Registry

	sessionsCreated prometheus.Counter
	sessionsClosed  prometheus.Counter
	sessionsRefused *prometheus.CounterVec
	executions      *prometheus.CounterVec
	execSeconds     prometheus.Histogram
	toolCalls       *prometheus.CounterVec
	toolSeconds     prometheus.Histogram
	restarts        *prometheus.CounterVec

	// executed holds the executions' counters of the known outcomes,
	// resolved once (read-only after New): Executed runs for every
	// execution, and looking a child up by its label hashes and locks.
	executed map[string]prometheus.Counter
}

// New returns Metrics with the Go runtime's and the process's own
// collectors (process_resident_memory_bytes and the like) registered.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	auto := promauto.With(m.reg) // registers what it makes
	m.sessionsCreated = auto.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sessions_created_total",
		Help: "MCP sessions that got a sandbox.",
	})
	m.sessionsClosed = auto.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sessions_closed_total",
		Help: "MCP sessions closed (by the client, the idle timeout, draining or the host stopping).",
	})
	m.sessionsRefused = auto.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sessions_refused_total",
		Help: "New MCP sessions refused, by reason: limit (max_sessions), draining, failed (the sandbox did not start).",
	}, []string{"reason"})
	m.executions = auto.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "executions_total",
		Help: "Executions, by outcome: ok, raised, timeout, crashed, failed.",
	}, []string{"outcome"})
	m.execSeconds = auto.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "execution_duration_seconds",
		Help:    "How long executions took in the sandbox.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	})
	m.toolCalls = auto.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "tool_calls_total",
		Help: "Tool calls from sandboxes, by bridge (namespace) and outcome: ok, error, refused, cancelled.",
	}, []string{"bridge", "outcome"})
	m.toolSeconds = auto.NewHistogram(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "tool_call_duration_seconds",
		Help:    "How long tool calls took, sandbox to bridge and back.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})
	m.restarts = auto.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sandbox_restarts_total",
		Help: "Sandbox processes that ended unexpectedly and were restarted, by cause: timeout, interrupt, memory, runaway, fatal, wedged, protocol, crash.",
	}, []string{"cause"})
	m.executed = map[string]prometheus.Counter{}
	for _, o := range []string{"ok", "raised", "timeout", "crashed", "failed"} {
		m.executed[o] = m.executions.WithLabelValues(o) // present at 0, so that sums add up
	}
	for _, r := range []string{RefusedLimit, RefusedDraining, RefusedFailed} {
		m.sessionsRefused.WithLabelValues(r)
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Gauges are read when /metrics is scraped.
type Gauges struct {
	// Sessions is the number of open sessions (each holding a sandbox).
	Sessions func() int
	// Pooled is the number of booted sandboxes waiting for a session.
	Pooled func() int
	// Ready is 1 while the host takes new sessions, else 0.
	Ready func() bool
	// Draining is 1 once the host drains.
	Draining func() bool
	// SandboxMemory is the resident memory of all sandbox processes, in
	// bytes.
	SandboxMemory func() int64
}

// Watch registers the gauges that read g; nil functions are left out. The
// MCP server calls it once.
func (m *Metrics) Watch(g Gauges) {
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, f))
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	if g.Sessions != nil {
		gauge("sessions_open", "MCP sessions open, each holding a sandbox.", func() float64 { return float64(g.Sessions()) })
	}
	if g.Pooled != nil {
		gauge("pool_sandboxes", "Booted sandboxes waiting in the pool for new sessions.", func() float64 { return float64(g.Pooled()) })
	}
	if g.Ready != nil {
		gauge("ready", "1 while the host takes new sessions (as /readyz says), else 0.", func() float64 { return b(g.Ready()) })
	}
	if g.Draining != nil {
		gauge("draining", "1 once the host drains (after SIGTERM), else 0.", func() float64 { return b(g.Draining()) })
	}
	if g.SandboxMemory != nil {
		gauge("sandbox_resident_memory_bytes", "Resident memory of all sandbox processes (sessions' and pooled).",
			func() float64 { return float64(g.SandboxMemory()) })
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is where the metrics are registered (to add an application's).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// SessionCreated counts a session that got its sandbox.
func (m *Metrics) SessionCreated() { m.sessionsCreated.Inc() }

// SessionClosed counts a session that ended after it had a sandbox.
func (m *Metrics) SessionClosed() { m.sessionsClosed.Inc() }

// SessionRefused counts a refused session; reason is one of the Refused*
// constants.
func (m *Metrics) SessionRefused(reason string) { m.sessionsRefused.WithLabelValues(reason).Inc() }

// Executed implements host.Observer.
func (m *Metrics) Executed(d time.Duration, outcome string) {
	c, ok := m.executed[outcome]
	if !ok {
		c = m.executions.WithLabelValues(outcome)
	}
	c.Inc()
	m.execSeconds.Observe(d.Seconds())
}

// ToolCalled implements host.Observer.
func (m *Metrics) ToolCalled(bridge, outcome string, d time.Duration) {
	m.toolCalls.WithLabelValues(bridge, outcome).Inc()
	m.toolSeconds.Observe(d.Seconds())
}

// Restarted implements host.Observer.
func (m *Metrics) Restarted(cause string) { m.restarts.WithLabelValues(cause).Inc() }
