package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/sdk"
)

const version = "v0.1.0"

// ParselboxName is the serverInfo.name of Parselbox's own MCP server: a
// server that says it is Parselbox is skipped (the second loopback guard).
const ParselboxName = "Parselbox"

// Timings (variables, so that tests can shorten them).
var (
	// connectTimeout bounds starting a server and its initialize handshake.
	connectTimeout = 30 * time.Second
	// retryInterval spaces out attempts to reach a server that could not be
	// reached: Describe (the host's discovery) tries again in the background
	// when the last attempt is older than this.
	retryInterval = 30 * time.Second
	// settleTimeout bounds the wait, after a task's result, for the
	// progress and log notifications the server sent before it.
	settleTimeout = time.Second
)

// A proxy is the bridge of one MCP server: it offers the server's tools as
// its own, and keeps them current.
type proxy struct {
	*sdk.Bridge
	log hclog.Logger

	connMu  sync.Mutex // serializes connecting
	tryMu   sync.Mutex // held by a background retry
	toolsMu sync.Mutex // serializes setTools; guards tools

	mu      sync.Mutex
	cfg     *serverConfig
	sess    *session          // the current session; nil before the first success
	tools   map[string]*entry // by the bridge's tool name (toolsMu)
	down    string            // why there is no session, when there is none
	skipped bool              // the server is Parselbox itself: never connect
	lastTry time.Time
	closed  bool
}

// entry is one of the server's tools, as the bridge offers it.
type entry struct {
	mcpName  string   // the tool's name on the server
	required []string // the required arguments
	schemas  string   // the schemas and description, to notice a change
}

func newProxy(logger hclog.Logger) *proxy {
	p := &proxy{tools: map[string]*entry{}}
	p.Bridge = sdk.NewBridge(&sdk.Info{Name: "mcpproxy", Version: version}, &sdk.Options{
		Configure: p.configure,
		Shutdown:  p.shutdown,
		Logger:    logger,
		// The host removes the entry's credentials from everything the
		// server sends (they are reported from Configure); the bridge does
		// too, as a second layer, whatever the server echoes.
		Middleware: []sdk.Middleware{sdk.RedactMiddleware(p.redactor)},
	})
	p.log = p.Bridge.Logger()
	return p
}

// configure reads the server entry and connects to the server. Only a bad
// entry is an error: a server that cannot be reached leaves the bridge
// without tools (its description says why), so that one broken server does
// not stop the host.
func (p *proxy) configure(ctx context.Context, req *sdk.ConfigureRequest) error {
	cfg, err := parseConfig(req)
	if err != nil {
		return err
	}
	p.mu.Lock()
	old := p.sess
	p.cfg, p.sess, p.skipped, p.down = cfg, nil, false, ""
	p.mu.Unlock()
	if old != nil {
		old.close()
	}
	p.connMu.Lock()
	defer p.connMu.Unlock()
	var lb *loopbackError
	if _, err := p.connect(ctx); errors.As(err, &lb) {
		// The loopback guard: the server is Parselbox itself. The host
		// leaves the namespace out altogether.
		return sdk.Decline(fmt.Sprintf("MCP server %q is Parselbox itself: %s", cfg.Name, lb.why))
	}
	return nil
}

func (p *proxy) shutdown(context.Context) error {
	p.mu.Lock()
	s := p.sess
	p.sess, p.closed = nil, true
	p.mu.Unlock()
	if s != nil {
		s.close()
	}
	return nil
}

// Describe implements sdk.BridgeServer: the bridge's tools, and a
// description of the server (or of why it has no tools). When the server
// could not be reached, it also tries again in the background, at most
// every retryInterval; the tools appear at a later Describe.
func (p *proxy) Describe(ctx context.Context) (*sdk.Description, error) {
	p.mu.Lock()
	retry := p.cfg != nil && p.sess == nil && !p.skipped && !p.closed && time.Since(p.lastTry) >= retryInterval
	p.mu.Unlock()
	if retry && p.tryMu.TryLock() {
		go func() {
			defer p.tryMu.Unlock()
			p.connMu.Lock()
			defer p.connMu.Unlock()
			p.mu.Lock()
			again := p.sess == nil && !p.closed
			p.mu.Unlock()
			if again {
				_, _ = p.connect(context.Background())
			}
		}()
	}
	d, err := p.Bridge.Describe(ctx)
	if err != nil {
		return nil, err
	}
	r := p.redactor()
	d.Description = r.Redact(p.description(len(d.Tools)))
	for i := range d.Tools {
		t := &d.Tools[i]
		t.Description = r.Redact(t.Description)
		t.InputSchema, t.OutputSchema = r.RedactJSON(t.InputSchema), r.RedactJSON(t.OutputSchema)
	}
	return d, nil
}

// redactor is the current configuration's; nil (which redacts nothing)
// before Configure.
func (p *proxy) redactor() *sdk.Redactor {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg == nil {
		return nil
	}
	return p.cfg.redact
}

// description is help(ns)'s text, before redaction: it shows the server's
// entry only as serverConfig.String does, but the reason why the server is
// down (its stderr, say) and its instructions may quote a credential.
func (p *proxy) description(tools int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg == nil {
		return "An MCP server (not configured)."
	}
	head := fmt.Sprintf("MCP server %q (%s)", p.cfg.Name, p.cfg)
	switch {
	case p.skipped:
		return head + " is skipped: " + p.down
	case p.sess == nil && tools == 0:
		return head + " is not available, so it has no tools: " + p.down
	case p.sess == nil:
		return head + " is not available (a call tries to start it again): " + p.down
	}
	b := strings.Builder{}
	b.WriteString(head)
	if si := p.sess.info.ServerInfo; si != nil {
		fmt.Fprintf(&b, ", %s %s", cmp.Or(si.Title, si.Name), si.Version)
	}
	noun := "tools"
	if tools == 1 {
		noun = "tool"
	}
	fmt.Fprintf(&b, ": %d %s; call them with keyword or positional arguments.", tools, noun)
	if ins := strings.TrimSpace(p.sess.info.Instructions); ins != "" {
		// Redacted before it is cut: a cut through a credential would
		// leave its start, which no redactor recognizes.
		b.WriteString("\n\n" + truncate(p.cfg.redact.Redact(ins), maxInstructions))
	}
	return b.String()
}

// maxInstructions bounds the server's instructions shown in the description.
const maxInstructions = 1500

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexAny(s[:n], " \n")
	if cut < n/2 {
		cut = n
	}
	return strings.TrimSpace(s[:cut]) + " …"
}

// fail records why the server cannot be used (URLs in it as safeURL shows
// them). The bridge keeps the tools of the last session, if there was one:
// their calls try to start the server again, and fail saying why.
func (p *proxy) fail(err error) {
	p.mu.Lock()
	p.sess, p.down = nil, safeURLs(err.Error())
	p.lastTry = time.Now()
	reason := p.cfg.redact.Redact(p.down)
	p.mu.Unlock()
	p.log.Warn("MCP server not available", "error", reason)
}

// skip records that the server is Parselbox itself.
func (p *proxy) skip(why string) {
	p.mu.Lock()
	p.sess, p.skipped, p.down = nil, true, why
	p.mu.Unlock()
	p.setTools(nil, nil)
	p.log.Info("MCP server skipped; its namespace has no tools", "reason", why)
}

// current returns the live session, connecting first if there is none
// (the first call after the server died restarts it).
func (p *proxy) current(ctx context.Context) (*session, error) {
	if s := p.live(); s != nil {
		return s, nil
	}
	p.connMu.Lock()
	defer p.connMu.Unlock()
	if s := p.live(); s != nil {
		return s, nil
	}
	p.mu.Lock()
	skipped, closed, name, down := p.skipped, p.closed, p.cfg.Name, p.down
	p.mu.Unlock()
	switch {
	case closed:
		return nil, sdk.Errorf(sdk.CodeUnavailable, "MCP server %q: the bridge is shutting down", name)
	case skipped:
		return nil, sdk.Errorf(sdk.CodeUnavailable, "MCP server %q is skipped: %s", name, down)
	}
	s, err := p.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, sdk.Errorf(sdk.CodeUnavailable, "MCP server %q is not available: %s", name, safeURLs(err.Error()))
	}
	return s, nil
}

// live returns the current session if it is alive.
func (p *proxy) live() *session {
	p.mu.Lock()
	s := p.sess
	p.mu.Unlock()
	if s != nil && s.alive() {
		return s
	}
	return nil
}

// connect starts a session, lists the server's tools and makes them the
// bridge's. The caller holds connMu. A failure is recorded (fail or skip)
// and returned.
func (p *proxy) connect(ctx context.Context) (*session, error) {
	p.mu.Lock()
	cfg, old := p.cfg, p.sess
	p.lastTry = time.Now()
	p.mu.Unlock()
	if old != nil {
		go old.close()
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	s, err := dial(ctx, cfg, p)
	if err != nil {
		var lb *loopbackError
		if errors.As(err, &lb) {
			p.skip(lb.why)
		} else {
			p.fail(err)
		}
		return nil, err
	}
	tools, err := s.listTools(ctx)
	if err != nil {
		s.close()
		err = fmt.Errorf("listing tools: %w", err)
		p.fail(err)
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.close()
		return nil, fmt.Errorf("the bridge is shutting down")
	}
	p.sess, p.down = s, ""
	p.mu.Unlock()
	p.setTools(s, tools)
	p.log.Info("MCP server connected", "server", s.serverName(), "protocol", s.info.ProtocolVersion, "tools", len(tools))
	go p.watch(s)
	return s, nil
}

// watch logs the end of a session that ends by itself; the next call
// starts a new one.
func (p *proxy) watch(s *session) {
	<-s.done
	p.mu.Lock()
	current, closed := p.sess == s, p.closed
	p.mu.Unlock()
	if current && !closed && !s.closing.Load() {
		p.log.Warn("MCP server connection ended; it is started again on the next call", "how", s.how())
	}
}

// refresh lists the tools again after the server said they changed
// (tools/list_changed). Notifications that arrive while a refresh runs
// lead to one more refresh.
func (p *proxy) refresh(s *session) {
	if !s.refreshPending.CompareAndSwap(false, true) {
		return
	}
	go func() {
		<-s.ready // a server may change its tools during the handshake
		s.refreshMu.Lock()
		defer s.refreshMu.Unlock()
		s.refreshPending.Store(false)
		if s.cs == nil || !s.alive() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		tools, err := s.listTools(ctx)
		if err != nil {
			p.log.Warn("listing tools after tools/list_changed", "error", err)
			return
		}
		p.mu.Lock()
		current := p.sess == s
		p.mu.Unlock()
		if current {
			p.setTools(s, tools)
			p.log.Debug("tools changed", "tools", len(tools))
		}
	}()
}
