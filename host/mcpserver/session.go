package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

// Method names the session intercepts.
const (
	methodInitialize = "initialize"
	methodListTools  = "tools/list"
)

// codeSessionRefused is the JSON-RPC error code of a session the server
// cannot open (limit reached, sandbox failed to start).
const codeSessionRefused = -32000

// session is one MCP session: its own go-sdk Server (so that its resources
// are its own), and the sandbox it runs code in, started on the first
// request that needs it.
type session struct {
	opts    *Options
	log     hclog.Logger
	server  *mcp.Server
	shape   shaper
	acquire func(context.Context, *mcp.ServerSession) (*box, error)
	release func(*box)

	ctx    context.Context // the session's life: executions stop with it
	cancel context.CancelFunc

	// listStarts: tools/list starts the sandbox (its tools are in
	// execute_code's description, describe_tools = "signatures").
	listStarts bool

	startMu sync.Mutex    // held while the sandbox starts
	turn    chan struct{} // one execution at a time

	mu        sync.Mutex
	box       *box
	ss        *mcp.ServerSession
	running   *execution             // the execution in the sandbox now
	suspended map[string]*suspension // by request state (multi round trip)
	files     map[string]bool        // paths announced as resources
	announced []string               // the same, oldest first
	ended     bool

	warnNoElicit sync.Once // logs that the client cannot elicit
}

func newSession(o *Options, log hclog.Logger, acquire func(context.Context, *mcp.ServerSession) (*box, error), release func(*box)) *session {
	s := &session{
		opts:      o,
		log:       log,
		shape:     newShaper(o.Settings),
		acquire:   acquire,
		release:   release,
		turn:      make(chan struct{}, 1),
		suspended: map[string]*suspension{},
		files:     map[string]bool{},

		listStarts: o.Config.DescribeTools == host.DescribeSignatures,
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.server = mcp.NewServer(&mcp.Implementation{Name: Name, Version: o.Version}, &mcp.ServerOptions{
		Logger: newSlog(log.Named("sdk")),
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Logging:   logging(o.Settings.StreamOutput),
		},
		// Resources are this session's files: no one else may cache them.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" },
	})
	tool := &mcp.Tool{
		Name:        ToolName,
		Description: ToolDescription,
		InputSchema: InputSchema,
	}
	if o.renderer != nil {
		tool.Meta = o.renderer.ToolMeta()
		s.addRenderer(o.renderer)
	}
	s.server.AddTool(tool, s.executeCode)
	s.server.AddReceivingMiddleware(s.middleware)
	return s
}

// middleware starts the sandbox when a client begins the session, so that
// the answer carries the guide text as instructions, or lists the tools
// with describe_tools = "signatures", so that execute_code's description
// carries their signatures.
func (s *session) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// With listStarts the description lists the sandbox's tools: a
		// client that lists them first (the sessionless protocol needs no
		// initialize or discover) waits for the start it would otherwise
		// wait for in its first execute_code.
		if method == methodInitialize || method == methodListTools && s.listStarts {
			if _, err := s.sandbox(ctx, req); err != nil {
				return nil, refusal(err)
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = s.prompt()
		case *mcp.DiscoverResult:
			// Not for a probe that will fall back to initialize (stateful HTTP).
			if modern(r.SupportedVersions) {
				if _, err := s.sandbox(ctx, req); err != nil {
					return nil, refusal(err)
				}
				r.Instructions = s.prompt()
			}
		case *mcp.ListToolsResult:
			desc := Description(s.Sandbox())
			for i, t := range r.Tools {
				if t.Name == ToolName && t.Description != desc {
					cp := *t
					cp.Description = desc
					r.Tools[i] = &cp
				}
			}
		}
		return res, nil
	}
}

// modern reports whether a discover answer lets the client use the
// sessionless protocol (which starts with discover, not initialize).
func modern(versions []string) bool {
	return slices.ContainsFunc(versions, func(v string) bool { return v >= protocolMRTR })
}

// logging is the logging capability: announced when printed lines are
// streamed as log notifications.
func logging(on bool) *mcp.LoggingCapabilities {
	if !on {
		return nil
	}
	return &mcp.LoggingCapabilities{}
}

func refusal(err error) error {
	msg := err.Error()
	if !errors.Is(err, ErrTooManySessions) {
		msg = "parselbox: starting the sandbox: " + msg
	}
	return &jsonrpc.Error{Code: codeSessionRefused, Message: msg}
}

func (s *session) prompt() string {
	if sb := s.Sandbox(); sb != nil {
		return sb.GuideWithoutSignatures() // the signatures are in the tool's description
	}
	return ""
}

// sandbox returns the session's sandbox, starting it on first use.
func (s *session) sandbox(ctx context.Context, req mcp.Request) (*box, error) {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	b, ended := s.box, s.ended
	s.mu.Unlock()
	if ended {
		return nil, ErrClosed
	}
	if b != nil {
		return b, nil
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	began := time.Now()
	b, err := s.acquire(ctx, ss)
	if err != nil {
		return nil, err
	}
	if ss != nil && ss.ID() != "" {
		// Before the sandbox is published: whatever logs for the session
		// runs after this.
		s.log = s.log.With(logSession, ss.ID())
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		s.release(b)
		return nil, ErrClosed
	}
	s.box, s.ss = b, ss
	s.mu.Unlock()
	if b.ap != nil {
		b.ap.bind(s)
	}
	s.log.Debug("session has its sandbox", logPID, b.sb.PID(), logMS, time.Since(began).Milliseconds())
	if b.dir != "" {
		s.log.Info("session output directory", logDir, b.dir)
	}
	return b, nil
}

// Sandbox returns the session's sandbox, nil before it started.
func (s *session) Sandbox() *host.Sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.box == nil {
		return nil
	}
	return s.box.sb
}

// end stops the session's executions and hands its sandbox back. It runs
// once, when the MCP session is over.
func (s *session) end() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	b := s.box
	suspended := s.suspended
	s.suspended = map[string]*suspension{}
	s.mu.Unlock()
	s.cancel()
	for _, sp := range suspended {
		sp.ask.answer(denial("Denied: the MCP session ended before the call was approved"))
	}
	if b != nil {
		s.release(b)
	}
}

// execution is one run of execute_code. It runs in its own goroutine, so
// that it can wait, suspended in a tool call, for the client's approval
// across several MCP requests.
type execution struct {
	canElicit bool
	asks      chan *ask     // approvals the sandbox's tool calls wait for
	done      chan struct{} // closed with res, err set
	res       *host.Result
	err       error
	cancel    context.CancelFunc
}

// start runs code in the sandbox when the previous execution is over.
func (s *session) start(live context.Context, b *box, code string, canElicit bool) *execution {
	ctx, cancel := context.WithCancel(s.ctx)
	ctx = valuesFrom{Context: ctx, values: live}
	ex := &execution{canElicit: canElicit, asks: make(chan *ask), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(ex.done)
		defer cancel()
		s.execute(ctx, b, code, ex)
	}()
	return ex
}

// execute runs code in the sandbox when the previous execution is over,
// setting ex's result; it stops waiting for its turn when ctx is done.
func (s *session) execute(ctx context.Context, b *box, code string, ex *execution) {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		ex.err = ctx.Err()
		return
	}
	defer func() { <-s.turn }()
	s.setRunning(ex)
	defer s.setRunning(nil)
	began := time.Now()
	ex.res, ex.err = b.sb.Execute(s.auditContext(ctx), code)
	s.logExecuted(ex, began)
}

// auditContext marks the executions of ctx as the MCP session's in the
// audit trail.
func (s *session) auditContext(ctx context.Context) context.Context {
	s.mu.Lock()
	ss := s.ss
	s.mu.Unlock()
	if ss == nil || ss.ID() == "" {
		return ctx
	}
	return host.WithSession(ctx, ss.ID())
}

func (s *session) setRunning(ex *execution) {
	s.mu.Lock()
	s.running = ex
	s.mu.Unlock()
}

// executeCode is the handler of execute_code.
func (s *session) executeCode(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if state := req.Params.RequestState; state != "" {
		return s.resume(ctx, req, state)
	}
	code, err := parseCode(req.Params.Arguments)
	if err != nil {
		return toolResult(failure("%v", err)), nil
	}
	b, err := s.sandbox(ctx, req)
	if err != nil {
		return toolResult(failure("the sandbox could not start: %v", err)), nil
	}
	liveCtx, stopLive := s.liveContext(ctx, req)
	defer stopLive()
	if b.ap == nil {
		// Nothing can ask for approval: run in this request's goroutine,
		// without the hand-offs an execution that waits for answers needs.
		ex := s.run(liveCtx, b, code)
		stopLive() // what the code reported goes out before its result
		if ctx.Err() != nil && s.ctx.Err() == nil {
			return nil, ctx.Err() // the client gave up on the call
		}
		return s.result(ex), nil
	}
	s.abandonSuspended()
	ex := s.start(liveCtx, b, code, canElicit(req))
	return s.await(ctx, req, ex, stopLive)
}

// run runs code in the sandbox when the previous execution is over, in the
// caller's goroutine. It stops when ctx is done or the session ends.
func (s *session) run(ctx context.Context, b *box, code string) *execution {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	ex := &execution{cancel: cancel}
	s.execute(ctx, b, code, ex)
	return ex
}

// logExecuted logs the end of an execution at debug level.
func (s *session) logExecuted(ex *execution, began time.Time) {
	if !s.log.IsDebug() {
		return
	}
	args := []any{logMS, time.Since(began).Milliseconds()}
	switch {
	case ex.err != nil:
		args = append(args, logError, ex.err)
	case ex.res.Error != nil:
		args = append(args, logRaised, ex.res.Error.Type)
	}
	s.log.Debug("executed", args...)
}

// await waits for the execution to end, serving the approvals its tool
// calls ask for on the way. On the sessionless protocol (2026-07-28 and
// later) a server may not send the client a request of its own: an
// approval ends this request with an input request, and the execution
// waits, suspended, for the client to call again with the answer (resume).
// On earlier protocols the approval is an elicitation request sent to the
// client while this call is in progress.
func (s *session) await(ctx context.Context, req *mcp.CallToolRequest, ex *execution, stopLive func()) (*mcp.CallToolResult, error) {
	roundTrip := req.ProtocolVersion() >= protocolMRTR
	for {
		select {
		case <-ex.done:
			stopLive()
			return s.result(ex), nil
		case a := <-ex.asks:
			if roundTrip {
				s.log.Debug("asking for approval with an input request", logTool, a.call.Path)
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{approvalKey: a.params},
					RequestState:  s.suspend(ex, a),
				}, nil
			}
			s.log.Debug("asking for approval with an elicitation request", logTool, a.call.Path)
			res, err := s.elicit(ctx, req.Session, a)
			if err != nil {
				s.log.Warn("asking the client to approve a tool call failed", logTool, a.call.Path, logError, err)
				a.answer(denial(fmt.Sprintf("Denied: asking the user to approve %s failed: %v", a.call.Path, err)))
				continue
			}
			a.answer(decide(a.call.Path, res))
		case <-ctx.Done():
			// The client gave up on the call: stop the code.
			ex.cancel()
			return nil, ctx.Err()
		}
	}
}

// elicit asks the client, giving up when the call stops waiting.
func (s *session) elicit(ctx context.Context, ss *mcp.ServerSession, a *ask) (*mcp.ElicitResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(a.gone, cancel)()
	return ss.Elicit(ctx, a.params)
}

// result turns the end of an execution into the tool's result, and
// announces the files it wrote as resources.
func (s *session) result(ex *execution) *mcp.CallToolResult {
	if ex.err != nil {
		if errors.Is(ex.err, context.Canceled) && s.ctx.Err() != nil {
			return toolResult(failure("the MCP session ended"))
		}
		s.log.Error("the sandbox failed", logError, ex.err)
		return toolResult(failure("the sandbox could not run the code: %v", ex.err))
	}
	s.announce(ex.res.Files)
	resp := s.shape.response(ex.res)
	resp.App = s.app()
	return toolResult(resp)
}

// app is where the session's app is served, as its client is told: with
// the session's own token when it is served beyond loopback.
func (s *session) app() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.box == nil:
		return ""
	case s.box.app != "":
		return s.box.app
	}
	return s.box.sb.ServeURL()
}

// maxResources is how many files a session announces as resources at
// most: past it, the oldest are withdrawn (code that writes new files on
// every call would otherwise grow the session without bound).
const maxResources = 10000

// announce registers the files as resources; the go-sdk tells the client
// with notifications/resources/list_changed.
func (s *session) announce(paths []string) {
	paths = paths[max(0, len(paths)-maxResources):]
	for _, p := range paths {
		s.mu.Lock()
		known := s.files[p]
		s.files[p] = true
		var withdrawn []string
		if !known {
			s.announced = append(s.announced, p)
			for len(s.announced) > maxResources {
				delete(s.files, s.announced[0])
				withdrawn = append(withdrawn, fileURI(s.announced[0]))
				s.announced = s.announced[1:]
			}
		}
		s.mu.Unlock()
		if known {
			continue
		}
		if len(withdrawn) > 0 {
			s.server.RemoveResources(withdrawn...)
		}
		s.server.AddResource(&mcp.Resource{
			URI:      fileURI(p),
			Name:     p,
			MIMEType: mimeType(p),
		}, s.readResource)
	}
}

// fileURI is file:// + the sandbox path, escaped.
func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// readResource reads a file of the sandbox when the client asks for it.
func (s *session) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || !strings.HasPrefix(u.Path, "/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	sb := s.Sandbox()
	if sb == nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := sb.ReadFile(u.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", u.Path, err)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(u.Path)}
	if isText(c.MIMEType) && utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}
