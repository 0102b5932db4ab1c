package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/sdk"
)

// A session is one connection to the server: for a stdio server, one run
// of its process.
type session struct {
	p    *proxy
	cfg  *serverConfig
	obs  *observer
	proc *process // stdio servers only

	cs   *mcp.ClientSession
	info *mcp.InitializeResult

	ready   chan struct{} // closed when dial is over (cs is set if it succeeded)
	done    chan struct{} // closed when the connection has ended
	waitErr error         // why, set before done is closed
	closing atomic.Bool   // close was called: the session is not to be used
	end     func()        // cancels the connection's context

	mu    sync.Mutex
	calls map[string]*call // the running task calls, by progress token
	next  atomic.Int64     // the last progress token handed out

	refreshMu      sync.Mutex
	refreshPending atomic.Bool
}

// loopbackError says that the server is Parselbox itself.
type loopbackError struct{ why string }

func (e *loopbackError) Error() string { return e.why }

// clientInfo is how the proxy introduces itself to servers.
var clientInfo = &mcp.Implementation{Name: "parselbox-mcpproxy", Title: "Parselbox", Version: version}

// dial connects to the server: starts it (stdio) or reaches it (http, sse),
// and completes MCP's handshake. A server that turns out to be Parselbox
// itself is a *loopbackError.
func dial(ctx context.Context, cfg *serverConfig, p *proxy) (*session, error) {
	s := &session{p: p, cfg: cfg, obs: newObserver(), ready: make(chan struct{}), done: make(chan struct{}), calls: map[string]*call{}}
	defer close(s.ready)
	client := mcp.NewClient(clientInfo, &mcp.ClientOptions{
		// No roots, sampling or elicitation: the proxy has none to offer.
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { p.refresh(s) },
		LoggingMessageHandler:       s.onLog,
		ProgressNotificationHandler: s.onProgress,
	})
	var t mcp.Transport
	switch cfg.Type {
	case typeStdio:
		path, err := cfg.executable()
		if err != nil {
			return nil, err
		}
		if s.proc, err = startProcess(path, cfg.Args, cfg.environ(), cfg.redact, p.log); err != nil {
			return nil, fmt.Errorf("starting %s: %w", path, err)
		}
		t = observedTransport{s.proc.transport(), s.obs}
	case typeHTTP:
		t = &mcp.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: s.httpClient()}
	case typeSSE:
		t = &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: s.httpClient()}
	}
	// The connection outlives ctx, which bounds only the handshake (the
	// SSE transport, for one, keeps the context of its event stream).
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	s.end = end
	stop := context.AfterFunc(ctx, end)
	cs, err := client.Connect(life, t, nil)
	if !stop() && err == nil {
		_ = cs.Close()
		err = ctx.Err()
	}
	if err != nil {
		end()
		if s.proc == nil {
			return nil, fmt.Errorf("MCP handshake with %s: %w", cfg, err)
		}
		defer func() { go s.proc.stop() }()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no answer to the MCP handshake in time (%v)%s", err, s.proc.tail)
		}
		switch how := s.proc.waitExited(200 * time.Millisecond); how {
		case "":
			return nil, fmt.Errorf("MCP handshake: %w%s", err, s.proc.tail)
		case "exit status 0":
			return nil, &loopbackError{fmt.Sprintf("the server exited with status 0 before the MCP handshake%s. "+
				"That is what Parselbox does when %s is set (the loopback guard: an mcp.json that launches "+
				"Parselbox lists Parselbox itself, and Parselbox is not served to itself); any other server "+
				"that does it is misconfigured", s.proc.tail, ProbeEnv)}
		default:
			return nil, fmt.Errorf("the server exited (%s) before the MCP handshake%s", how, s.proc.tail)
		}
	}
	s.cs, s.info = cs, cs.InitializeResult()
	if s.info == nil {
		s.info = &mcp.InitializeResult{}
	}
	go func() {
		s.waitErr = cs.Wait()
		close(s.done)
	}()
	if si := s.info.ServerInfo; si != nil && si.Name == ParselboxName {
		s.close()
		return nil, &loopbackError{fmt.Sprintf("the server is Parselbox itself (serverInfo.name %q), "+
			"and Parselbox is not served to itself (the loopback guard)", si.Name)}
	}
	s.setLogLevel(ctx)
	return s, nil
}

// httpClient is the HTTP client of an http or sse server: no timeout (its
// event streams stay open), the configured headers on every request to the
// server's origin (none where a redirect leads elsewhere), and the
// observer reading along.
func (s *session) httpClient() *http.Client {
	tap := &tapTransport{base: http.DefaultTransport, headers: s.cfg.Headers, obs: s.obs}
	if u, err := url.Parse(s.cfg.URL); err == nil { // parseConfig checked it
		tap.server = u
	}
	return &http.Client{Transport: tap}
}

// newProtocol is the first MCP version without logging/setLevel: the log
// level goes with each request instead.
const newProtocol = "2026-07-28"

// logLevel is the level of the server's log notifications that reach a
// task's log.
const logLevel mcp.LoggingLevel = "info"

// setLogLevel asks a server that logs (and speaks a protocol with
// logging/setLevel) for logLevel and above: servers need not send any log
// notifications before a client sets a level.
func (s *session) setLogLevel(ctx context.Context) {
	caps := s.info.Capabilities
	if caps == nil || caps.Logging == nil || s.info.ProtocolVersion >= newProtocol {
		return
	}
	if err := s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: logLevel}); err != nil {
		s.p.log.Debug("logging/setLevel failed", "error", err)
	}
}

// listTools lists all the server's tools, page by page.
func (s *session) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// alive reports whether the session can take calls.
func (s *session) alive() bool {
	if s.closing.Load() {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// close ends the session: for a stdio server, it stops the process (stdin
// closed, then SIGTERM, then SIGKILL).
func (s *session) close() {
	s.closing.Store(true)
	if s.cs != nil {
		_ = s.cs.Close()
	}
	if s.proc != nil {
		s.proc.stop()
	}
	if s.end != nil {
		s.end()
	}
}

// how says how the session ended, for messages: `exit status 1 (stderr:
// ...)` or the connection's error.
func (s *session) how() string {
	if s.proc != nil {
		if st := s.proc.waitExited(100 * time.Millisecond); st != "" {
			return st + s.proc.tail.String()
		}
	}
	select {
	case <-s.done:
		if s.waitErr != nil {
			return "connection lost: " + safeURLs(s.waitErr.Error())
		}
	default:
	}
	return "connection lost"
}

func (s *session) serverName() string {
	if si := s.info.ServerInfo; si != nil {
		return strings.TrimSpace(si.Name + " " + si.Version)
	}
	return ""
}

// A call is a running task call: the notifications of its progress token,
// and the server's log notifications, go to its log.
type call struct {
	token string
	req   *sdk.CallToolRequest
}

// onProgress routes a progress notification to its call's log.
func (s *session) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	key := tokenKey(req.Params.ProgressToken)
	s.mu.Lock()
	c := s.calls[key]
	s.mu.Unlock()
	if c != nil {
		c.req.Progress(req.Params.Progress, req.Params.Total, req.Params.Message)
	}
	s.obs.done(key)
}

// onLog sends a log notification to the log of every task call running on
// the session (MCP's log notifications belong to the session, not to a
// call), and to the bridge's own log at debug level.
func (s *session) onLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	line := logLine(req.Params)
	s.p.log.Debug("server log", "line", line)
	s.mu.Lock()
	calls := slices.Collect(maps.Values(s.calls))
	s.mu.Unlock()
	for _, c := range calls {
		c.req.Log(line)
	}
	s.obs.done(logKey)
}

// logLine formats a log notification: "[level] message", where the message
// is the data when it is a string, its "message" or "msg" field when it is
// an object that has one, and the data as JSON otherwise; a logger name
// goes before the message ("[info] db: connected").
func logLine(p *mcp.LoggingMessageParams) string {
	var msg string
	switch d := p.Data.(type) {
	case string:
		msg = d
	case map[string]any:
		if m, ok := d["message"].(string); ok {
			msg = m
		} else if m, ok := d["msg"].(string); ok {
			msg = m
		}
	}
	if msg == "" && p.Data != nil {
		b, _ := json.Marshal(p.Data)
		msg = string(b)
	}
	if p.Logger != "" {
		msg = p.Logger + ": " + msg
	}
	return fmt.Sprintf("[%s] %s", p.Level, msg)
}
