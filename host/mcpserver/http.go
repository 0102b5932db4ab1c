package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host/metrics"
	hostserve "github.com/parselbox/parselbox/host/serve"
)

// Path is where RunHTTP serves MCP.
const Path = "/mcp"

// sessionHeader carries the MCP session id over streamable HTTP.
const sessionHeader = "Mcp-Session-Id"

type sessionKey struct{}

// ServeHTTP serves streamable HTTP MCP, each session with a sandbox of its
// own. Every request must come from no Origin or a loopback one (else 403),
// carry the bearer token if one is set (else 401), and have a body of at
// most MaxRequestBytes (else 413).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
		s.log.Warn("refused a request from a foreign origin", logOrigin, origin, logRemote, r.RemoteAddr)
		http.Error(w, "Forbidden: requests from origin "+origin+" are not allowed", http.StatusForbidden)
		return
	}
	if !s.authorized(r) {
		s.log.Warn("refused a request without the right bearer token", logRemote, r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="parselbox"`)
		http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
		return
	}
	if r.ContentLength > MaxRequestBytes {
		http.Error(w, fmt.Sprintf("Request Entity Too Large: the limit is %d bytes", MaxRequestBytes),
			http.StatusRequestEntityTooLarge)
		return
	}
	if r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" {
		if s.Draining() {
			s.opts.Metrics.SessionRefused(metrics.RefusedDraining)
			refuseDraining(w)
			return
		}
		// This request may open a session: give it a server of its own.
		r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, s.newSession(true)))
	}
	s.http.ServeHTTP(w, r)
}

// serverFor is the go-sdk handler's getServer: the new session's server
// for a request that opens one; otherwise a server that only answers the
// handler's protocol version checks.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	if sess, ok := r.Context().Value(sessionKey{}).(*session); ok {
		return sess.server
	}
	return s.versions
}

// authorized checks the bearer token in constant time.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Settings.AuthToken == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(got[:], s.token[:]) == 1
}

// loopbackOrigin reports whether an Origin header names this machine.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return IsLoopback(u.Hostname())
}

// IsLoopback reports whether host (a name or an IP, without port) is this
// machine: it is [hostserve.IsLoopback].
func IsLoopback(host string) bool { return hostserve.IsLoopback(host) }

// RunHTTP serves MCP at /mcp on ln until ctx is done, then closes every
// session and returns ctx.Err(). It refuses a listener beyond loopback
// without Options.AuthToken, and boots the pool's first sandbox before it
// serves, so that a configuration that cannot start fails here.
func (s *Server) RunHTTP(ctx context.Context, ln net.Listener) error {
	addr := ln.Addr().String()
	if host, _, err := net.SplitHostPort(addr); err != nil || !IsLoopback(host) {
		if s.opts.Settings.AuthToken == "" {
			ln.Close()
			return fmt.Errorf("listening on %s: %w (set --auth-token or PARSELBOX_AUTH_TOKEN)", addr, ErrNeedToken)
		}
	}
	var metricsLn net.Listener
	if a := s.opts.Settings.MetricsAddress; a != "" {
		var err error
		if metricsLn, err = net.Listen("tcp", a); err != nil {
			ln.Close()
			return fmt.Errorf("listening for metrics: %w", err)
		}
	}
	s.sweepSessionDirs()
	if err := s.pool.warm(ctx); err != nil {
		ln.Close()
		if metricsLn != nil {
			metricsLn.Close()
		}
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s)
	s.handleOps(mux)
	servers := []*http.Server{s.httpServer(mux)}
	served := make(chan error, 2)
	go func() { served <- servers[0].Serve(ln) }()
	s.log.Info("MCP available", logURL, "http://"+addr+Path)
	if metricsLn != nil {
		mm := http.NewServeMux()
		mm.Handle(MetricsPath, s.opts.Metrics.Handler())
		servers = append(servers, s.httpServer(mm))
		go func() { served <- servers[1].Serve(metricsLn) }()
		s.log.Info("metrics available", logURL, "http://"+metricsLn.Addr().String()+MetricsPath)
	}
	var failed error
	select {
	case failed = <-served:
	case <-ctx.Done():
	}
	// Sessions hold streams open: end them first, then the servers.
	s.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, hs := range servers {
		if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Warn("stopping the HTTP server", logError, err)
		}
		hs.Close()
	}
	if failed != nil {
		return fmt.Errorf("serving HTTP: %w", failed)
	}
	return ctx.Err()
}

func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          s.log.Named("http").StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	}
}
