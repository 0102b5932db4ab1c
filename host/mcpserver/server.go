package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/metrics"
	"github.com/parselbox/parselbox/host/sandbox"
	hostserve "github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/host/ui"
)

// Server is the Parselbox MCP server: one tool, execute_code, whose code
// runs in a sandbox of the session's own; the files the code writes become
// resources. Serve one session over any go-sdk transport with Run (stdio),
// or many over streamable HTTP with RunHTTP or as an http.Handler.
type Server struct {
	opts Options
	log  hclog.Logger
	pool *pool
	http *mcp.StreamableHTTPHandler
	// versions answers the HTTP handler's protocol version checks of
	// requests that do not open a session.
	versions *mcp.Server
	token    [sha256.Size]byte // of Options.AuthToken
	// servePort is the port the next session's sandbox serves its app
	// from (a fixed serve port's, then the one after the last given).
	servePort atomic.Int64

	mu       sync.Mutex
	sessions map[*session]struct{} // the sessions that hold a sandbox
	closed   bool
	draining bool
}

// New checks the sandbox configuration (host.Config.Validate) and the
// settings (Settings.Validate) and returns a server; it starts no sandbox
// until a client needs one (or RunHTTP warms the pool). A configuration the
// host cannot run with is a *host.ConfigError.
func New(opts Options) (*Server, error) {
	o := opts.resolved()
	if err := o.Config.Validate(); err != nil {
		return nil, &host.ConfigError{Err: err}
	}
	if err := o.Settings.Validate(); err != nil {
		return nil, &host.ConfigError{Err: err}
	}
	if _, err := sandbox.FindRuntime(o.Config.RuntimeDir); err != nil {
		return nil, &host.ConfigError{Err: err}
	}
	o.Config.UI = !o.Settings.NoUI
	var err error
	if o.renderer, err = newRenderer(&o, ui.CSP{}); err != nil {
		return nil, &host.ConfigError{Err: err}
	}
	s := &Server{
		opts:     o,
		log:      o.Logger.Named("mcp"),
		sessions: map[*session]struct{}{},
		versions: mcp.NewServer(&mcp.Implementation{Name: Name, Version: o.Version}, nil),
	}
	if o.Settings.AuthToken != "" {
		s.token = sha256.Sum256([]byte(o.Settings.AuthToken))
	}
	o.Metrics.Watch(metrics.Gauges{
		Sessions:      s.SessionCount,
		Pooled:        s.Pooled,
		Ready:         s.Ready,
		Draining:      s.Draining,
		SandboxMemory: s.sandboxMemory,
	})
	s.pool = &pool{size: o.Settings.PoolSize, prime: s.prime, log: s.log.Named("pool"),
		boot: func(ctx context.Context) (*box, error) { return s.boot(ctx, true) }}
	s.http = mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		Logger:              newSlog(s.log.Named("http")),
		SessionTimeout:      o.Settings.IdleTimeout,
		MaxRequestBodyBytes: MaxRequestBytes,
		// A reply is one application/json body rather than an SSE stream of
		// one event: less to write and parse per call. What the server sends
		// of its own during a call (an elicitation, a notification) goes on
		// the session's standalone stream.
		JSONResponse: true,
	})
	return s, nil
}

// boot starts a sandbox for a session. perSession gives it its own
// directory under Config.OutputDir, since sessions must not see each
// other's files.
func (s *Server) boot(ctx context.Context, perSession bool) (*box, error) {
	cfg := s.opts.Config
	b := &box{}
	if s.opts.Settings.Elicit {
		b.ap = &approver{}
		cfg.Hooks = append(slices.Clone(cfg.Hooks), b.ap)
	}
	if perSession && cfg.OutputDir != "" {
		// The sessions' parent is made here (not its own parent: a
		// missing one is a mistake the host reports).
		if err := os.Mkdir(cfg.OutputDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, &host.ConfigError{Err: fmt.Errorf("output directory: %w", err)}
		}
		b.dir = filepath.Join(cfg.OutputDir, sessionDirPrefix+rand.Text()[:12])
		cfg.OutputDir = b.dir
	}
	var serveBase, serveSpan int64
	if perSession && cfg.Serve != nil {
		// Each session's sandbox serves its app on a port of its own (its
		// own origin, so that one session's pages cannot reach another's):
		// the configured port when free, else the next free one; and a
		// port a closed session had is given again only after the others
		// of the span (a page of it left open must not meet the next
		// session's app).
		sc := *cfg.Serve
		serveSpan = int64(max(100, s.opts.Settings.MaxSessions+s.opts.Settings.PoolSize+1))
		sc.PortTries = int(serveSpan)
		h, p, err := net.SplitHostPort(sc.Addr)
		if serveBase, _ = strconv.ParseInt(p, 10, 64); serveBase != 0 { // 0: any free port
			s.servePort.CompareAndSwap(0, serveBase)
			sc.Addr = net.JoinHostPort(h, strconv.FormatInt(s.servePort.Load(), 10))
		}
		if err == nil && !hostserve.IsLoopback(h) {
			// Beyond loopback, each session's app has a token of its own,
			// in the app link its client gets (box.app): the configured
			// token would open every session's app.
			b.serveToken = rand.Text()
			sc.Token = b.serveToken
		}
		cfg.Serve = &sc
	}
	sb, err := host.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b.sb = sb
	if b.serveToken != "" {
		b.app = sb.ServeURL() + "/?token=" + url.QueryEscape(b.serveToken)
	}
	if serveBase != 0 {
		s.advanceServePort(sb.ServeURL(), serveBase, serveSpan)
	}
	return b, nil
}

// prime readies a sandbox booted ahead of its session (the pool's), while
// no one waits for it; a session that waits for its boot (an empty pool)
// gets it as booted, sooner.
func (s *Server) prime(ctx context.Context, b *box) error {
	// What the sandbox defers past boot (just-bash's import, on a timer
	// about when a pooled sandbox meets its session), done now: the
	// session's first executions would otherwise wait behind it. Not an
	// execution: hooks and the audit trail see nothing.
	if err := b.sb.Warm(ctx); err != nil {
		return err
	}
	if len(s.opts.Config.Hooks) == 0 && !audited(s.opts.Config) {
		// Code runs slowly at first after a snapshot restore: run some
		// while the sandbox waits in the pool rather than in the session's
		// first call. (Not with hooks of the embedder's, which would see
		// an execution nobody asked for, nor with an audit trail, which
		// would record one.)
		if _, err := b.sb.Execute(ctx, warmUp); err != nil {
			return fmt.Errorf("warming up the sandbox: %w", err)
		}
	}
	return nil
}

// audited reports whether cfg keeps an audit trail.
func audited(cfg host.Config) bool {
	return cfg.AuditLog != "" || cfg.OTLPEndpoint != "" || cfg.TracerProvider != nil
}

// advanceServePort makes the port after the one of url (a sandbox's
// app) the next to try, back to the configured one, base, past span ports.
func (s *Server) advanceServePort(url string, base, span int64) {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	got, err := strconv.ParseInt(p, 10, 64)
	if err != nil {
		return
	}
	next := got + 1
	if next >= base+span || next > 65535 {
		next = base
	}
	s.servePort.Store(next)
}

// sessionDirPrefix starts the name of a session's directory under
// Config.OutputDir.
const sessionDirPrefix = "session-"

// sweepSessionDirs removes the empty session directories that a server
// which did not close (killed, crashed) left under Config.OutputDir; a
// session's directory is otherwise removed with it when it holds nothing.
func (s *Server) sweepSessionDirs() {
	if s.opts.Config.OutputDir == "" {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(s.opts.Config.OutputDir, sessionDirPrefix+"*"))
	for _, d := range dirs {
		if os.Remove(d) == nil {
			s.log.Debug("removed an empty session directory left behind", "dir", d)
		}
	}
}

// warmUp is what a pooled sandbox runs before a session takes it: it
// leaves no names behind.
const warmUp = "(lambda: sum(i * i for i in range(100)))()"

// admit counts a session against MaxSessions.
func (s *Server) admit(sess *session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.draining {
		s.opts.Metrics.SessionRefused(metrics.RefusedDraining)
		return errRefusedDraining
	}
	if max := s.opts.Settings.MaxSessions; max > 0 && len(s.sessions) >= max {
		s.opts.Metrics.SessionRefused(metrics.RefusedLimit)
		return fmt.Errorf("parselbox: %w: %d are open, the limit (--max-sessions) is %d; "+
			"close a session or wait until an idle one times out", ErrTooManySessions, len(s.sessions), max)
	}
	s.sessions[sess] = struct{}{}
	return nil
}

func (s *Server) leave(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
}

// newSession makes a session whose sandbox comes from the pool (HTTP) or
// is booted for it (Run).
func (s *Server) newSession(pooled bool) *session {
	var sess *session
	acquire := func(ctx context.Context, ss *mcp.ServerSession) (*box, error) {
		if err := s.admit(sess); err != nil {
			return nil, err
		}
		var b *box
		var err error
		if pooled {
			b, err = s.pool.get(ctx)
		} else {
			b, err = s.boot(ctx, false)
		}
		if err != nil {
			s.leave(sess)
			s.opts.Metrics.SessionRefused(metrics.RefusedFailed)
			return nil, err
		}
		s.opts.Metrics.SessionCreated()
		if pooled && ss != nil {
			// An HTTP session ends when the client deletes it, it times
			// out, or the server closes.
			go func() {
				_ = ss.Wait()
				sess.end()
			}()
		}
		return b, nil
	}
	release := func(b *box) {
		if err := b.close(); err != nil {
			s.log.Warn("closing a sandbox", logError, err)
		}
		s.leave(sess)
		s.opts.Metrics.SessionClosed()
	}
	sess = newSession(&s.opts, s.log, acquire, release)
	return sess
}

// Run serves one MCP session over t (for example Stdio(os.Stdin, os.Stdout)),
// with a sandbox started when the client initializes, until the client
// disconnects (nil) or ctx is done (ctx.Err()). A crash or timeout in the
// sandbox ends neither: the sandbox restarts.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return serve(ctx, s.newSession(false), t)
}

// ServeMCP serves an existing sandbox over t, as Run does, until the client
// disconnects or ctx is done; sb stays open. opts may be nil; of it,
// the settings MaxOutputTokens, MaxResultMB and NoUI, Version and Logger
// apply. (Approvals need the
// sandbox's hooks: use a Server with Options.Elicit for them.)
func ServeMCP(ctx context.Context, sb *host.Sandbox, t mcp.Transport, opts *Options) error {
	o := opts.resolved()
	if o.Config.RuntimeDir == "" {
		o.Config.RuntimeDir = sb.RuntimeDir() // the renderer's assets are there
	}
	var err error
	if o.renderer, err = newRenderer(&o, ui.CSP{}); err != nil {
		return err
	}
	b := &box{sb: sb}
	sess := newSession(&o, o.Logger.Named("mcp"),
		func(context.Context, *mcp.ServerSession) (*box, error) { return b, nil },
		func(*box) {})
	sess.listStarts = true // sb runs already: its description is at hand
	return serve(ctx, sess, t)
}

func serve(ctx context.Context, sess *session, t mcp.Transport) error {
	defer sess.end()
	ss, err := sess.server.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer context.AfterFunc(ctx, func() { ss.Close() })()
	if err = ss.Wait(); ctx.Err() != nil {
		return ctx.Err()
	}
	// The client hung up: the normal end of a session.
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, mcp.ErrConnectionClosed) {
		err = nil
	}
	return err
}

// Close ends every session, stopping its sandbox, and the pool.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	sessions := slices.Collect(maps.Keys(s.sessions))
	s.mu.Unlock()
	// Each sandbox takes a moment to stop: stop them all at once.
	var wg sync.WaitGroup
	for _, sess := range sessions {
		wg.Go(func() {
			sess.mu.Lock()
			ss := sess.ss
			sess.mu.Unlock()
			if ss != nil {
				ss.Close()
			}
			sess.end()
		})
	}
	wg.Wait()
	s.pool.close()
	return nil
}

// SessionCount is the number of sessions holding a sandbox.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Pooled is the number of booted sandboxes waiting in the pool for new
// HTTP sessions.
func (s *Server) Pooled() int { return s.pool.idle() }
