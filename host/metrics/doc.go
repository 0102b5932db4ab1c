// Package metrics counts what a Parselbox host does, in the Prometheus
// format (github.com/prometheus/client_golang): the MCP server's sessions
// (open, created, closed, refused), its pool of booted sandboxes, the
// executions with their latency, the tool calls by bridge and outcome, the
// sandbox restarts by cause, and the memory of the host and of its
// sandboxes. Names and labels say nothing of what a session holds: no
// session id, code, argument or result is ever a label.
//
// A Metrics is a host.Observer (set it as host.Config.Observer) and is
// handed to the MCP server (mcpserver.Options.Metrics), which serves it at
// /metrics:
//
//	m := metrics.New()
//	cfg.Observer = m
//	srv, err := mcpserver.New(mcpserver.Options{Config: cfg, Metrics: m})
//	http.Handle("/metrics", m.Handler())
package metrics
