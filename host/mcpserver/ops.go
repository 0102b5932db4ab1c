package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// The operations endpoints RunHTTP serves next to Path. None needs the
// token, and none says anything about what a session holds.
const (
	// HealthPath answers 200 while the process serves (liveness).
	HealthPath = "/healthz"
	// ReadyPath answers 200 while the server takes new sessions, and 503
	// while it drains or has max_sessions open (readiness).
	ReadyPath = "/readyz"
	// MetricsPath serves the metrics in the Prometheus format (on
	// Settings.MetricsAddress when that is set).
	MetricsPath = "/metrics"
)

// Ready reports whether the server takes new sessions: it is not closed,
// not draining, and has fewer than MaxSessions open.
func (s *Server) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.draining {
		return false
	}
	max := s.opts.Settings.MaxSessions
	return max == 0 || len(s.sessions) < max
}

// Draining reports whether Drain was called.
func (s *Server) Draining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// Drain stops taking new sessions (ReadyPath answers 503; a request that
// would open a session gets 503 with ErrDraining's message) and stops the
// pool's idle sandboxes; the open sessions go on as before. It returns nil
// once no session is open, or ctx.Err() when ctx is done first. Close the
// server after it.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	already := s.draining
	s.draining = true
	s.mu.Unlock()
	if !already {
		s.log.Info("draining: taking no new sessions", logSessions, s.SessionCount())
		go s.pool.close()
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if n := s.SessionCount(); n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// sandboxMemory is the resident memory of the sessions' and the pool's
// sandbox processes, in bytes.
func (s *Server) sandboxMemory() int64 {
	var total int64
	for _, pid := range s.SandboxPIDs() {
		total += residentBytes(pid)
	}
	return total
}

// SandboxPIDs are the process ids of the sandboxes of the open sessions
// and of the pool (to measure them).
func (s *Server) SandboxPIDs() []int {
	var pids []int
	s.mu.Lock()
	for sess := range s.sessions {
		if sb := sess.Sandbox(); sb != nil {
			pids = append(pids, sb.PID())
		}
	}
	s.mu.Unlock()
	s.pool.mu.Lock()
	for _, b := range s.pool.ready {
		pids = append(pids, b.sb.PID())
	}
	s.pool.mu.Unlock()
	return pids
}

// residentBytes is a process's VmRSS, 0 if it cannot be read.
func residentBytes(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(rest, "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// handleOps adds the operations endpoints to mux; /metrics too unless
// Settings.MetricsAddress serves it elsewhere.
func (s *Server) handleOps(mux *http.ServeMux) {
	mux.HandleFunc(HealthPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc(ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case s.Draining():
			http.Error(w, "draining", http.StatusServiceUnavailable)
		case !s.Ready():
			http.Error(w, "full: max_sessions are open", http.StatusServiceUnavailable)
		default:
			fmt.Fprintln(w, "ready")
		}
	})
	if s.opts.Settings.MetricsAddress == "" {
		mux.Handle(MetricsPath, s.opts.Metrics.Handler())
	}
}

// refuseDraining answers a request that would open a session while the
// server drains: 503, so that a load balancer may retry it on another host.
func refuseDraining(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Service Unavailable: "+errRefusedDraining.Error(), http.StatusServiceUnavailable)
}
