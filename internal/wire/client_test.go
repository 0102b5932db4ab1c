package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/parselbox/parselbox/internal/protocol"
	"github.com/parselbox/parselbox/internal/wire"
)

// connect serves b in-process (both halves of wire.Plugin over go-plugin's
// in-process gRPC connection) and returns a client with opts, and the
// server (to break the connection).
func connect(t *testing.T, b protocol.BridgeServer, opts wire.ClientOptions) (*wire.Client, *plugin.GRPCServer) {
	t.Helper()
	conn, srv := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{
		wire.PluginName: &wire.Plugin{Impl: b, Options: opts},
	})
	t.Cleanup(func() { _ = conn.Close() })
	raw, err := conn.Dispense(wire.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*wire.Client), srv
}

// fake is a protocol.BridgeServer with func fields (nil: a no-op).
type fake struct {
	configure func(ctx context.Context, req *protocol.ConfigureRequest) error
	call      func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error)
}

func (f *fake) Describe(context.Context) (*protocol.Description, error) {
	return &protocol.Description{Name: "fake", Tools: []protocol.ToolInfo{{Name: "t", Params: []string{"xs"}, Variadic: true, ReadOnly: true}}}, nil
}

func (f *fake) Configure(ctx context.Context, req *protocol.ConfigureRequest) error {
	if f.configure == nil {
		return nil
	}
	return f.configure(ctx, req)
}

func (f *fake) CallTool(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return f.call(ctx, req)
}

// stubborn has a tool that ignores cancellation until release is closed.
func stubborn(release <-chan struct{}) *fake {
	return &fake{call: func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		req.Log("started")
		<-release
		return &protocol.CallToolResult{Content: []byte(`"done"`)}, nil
	}}
}

// recorder keeps the log lines of a call and says when one arrives.
type recorder struct {
	mu    sync.Mutex
	lines []string
	seen  chan struct{}
}

func newRecorder() *recorder { return &recorder{seen: make(chan struct{}, 100)} }

func (r *recorder) Log(line string) {
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	r.seen <- struct{}{}
}

func (r *recorder) Progress(float64, float64, string) {}

// waitFor waits for the first log line, or for done.
func (r *recorder) waitFor(done <-chan struct{}) bool {
	select {
	case <-r.seen:
		return true
	case <-done:
		return false
	}
}

// TestCancelGrace: a bridge that does not answer a cancel is abandoned
// after the grace period with a cancelled result.
func TestCancelGrace(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	c, _ := connect(t, stubborn(release), wire.ClientOptions{CancelGrace: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	rec := newRecorder()
	done := make(chan struct{})
	var res *protocol.CallToolResult
	var err error
	go func() {
		defer close(done)
		res, err = c.CallTool(ctx, &protocol.CallToolRequest{Name: "ignore", Events: rec})
	}()
	if !rec.waitFor(done) {
		t.Fatalf("call ended early: %+v, %v", res, err)
	}
	cancel()
	<-done
	if err != nil || !res.IsError || res.Error.Code != protocol.CodeCancelled ||
		!strings.Contains(res.Error.Message, "did not answer the cancel within 50ms") {
		t.Fatalf("abandoned call = %+v, %v", res, err)
	}
}

// TestCallDeadline: the deadline of a call on a Call stream (one with
// events or messages) reaches the tool's context in the bridge; a call
// without one has none there either.
func TestCallDeadline(t *testing.T) {
	t.Parallel()
	type seen struct {
		deadline time.Time
		ok       bool
	}
	got := make(chan seen, 1)
	b := &fake{call: func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		d, ok := ctx.Deadline()
		got <- seen{d, ok}
		return &protocol.CallToolResult{Content: json.RawMessage(`null`)}, nil
	}}
	c, _ := connect(t, b, wire.ClientOptions{})

	const timeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if _, err := c.CallTool(ctx, &protocol.CallToolRequest{Name: "t", Events: newRecorder()}); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if left := time.Until(s.deadline); !s.ok || left <= 0 || left > timeout {
		t.Errorf("with a %s deadline, the tool's context has deadline %v (%v), %s from now; want one within %s", timeout, s.deadline, s.ok, left, timeout)
	}

	if _, err := c.CallTool(context.WithoutCancel(t.Context()), &protocol.CallToolRequest{Name: "t", Inbox: make(chan json.RawMessage)}); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.ok {
		t.Errorf("without a deadline, the tool's context has deadline %v", s.deadline)
	}
}

// deadlineOnly has a deadline that it never acts on: its Done is nil, so
// the client sends no cancel, and only the bridge can end a call at the
// deadline.
type deadlineOnly struct {
	context.Context
	deadline time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.deadline, true }

// TestCallDeadlineEndsTheCall: at the caller's deadline, the bridge itself
// ends a slow call on a Call stream, with a timeout (not a cancel).
func TestCallDeadlineEndsTheCall(t *testing.T) {
	t.Parallel()
	b := &fake{call: func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("slow: %w", ctx.Err())
		case <-time.After(10 * time.Second): // a bound for a hang
			return nil, errors.New("slow: the deadline never came")
		}
	}}
	c, _ := connect(t, b, wire.ClientOptions{})
	deadline := time.Now().Add(100 * time.Millisecond)
	ctx := deadlineOnly{context.WithoutCancel(t.Context()), deadline}
	_, err := c.CallTool(ctx, &protocol.CallToolRequest{Name: "slow", Events: newRecorder()})
	var te *protocol.ToolError
	if !errors.As(err, &te) || te.Code != protocol.CodeTimeout || te.Message != "slow: context deadline exceeded" {
		t.Fatalf("slow call = %v, want the bridge's timeout", err)
	}
	// The deadline travels in whole ms, rounded down.
	if early := time.Until(deadline); early > time.Millisecond {
		t.Errorf("the call ended %s before its deadline", early)
	}
}

// TestBrokenConnection: a call in flight when the bridge's server goes away
// fails with ErrUnavailable.
func TestBrokenConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	c, srv := connect(t, stubborn(release), wire.ClientOptions{})
	rec := newRecorder()
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "ignore", Events: rec})
	}()
	if !rec.waitFor(done) {
		t.Fatalf("call ended early: %v", err)
	}
	srv.Stop()
	<-done
	if !errors.Is(err, wire.ErrUnavailable) {
		t.Fatalf("call over a broken connection = %v, want ErrUnavailable", err)
	}
	if _, err := c.Describe(t.Context()); !errors.Is(err, wire.ErrUnavailable) {
		t.Errorf("Describe over a broken connection = %v, want ErrUnavailable", err)
	}
}

// TestCancelledBeforeTheCall returns the context's error without calling.
func TestCancelledBeforeTheCall(t *testing.T) {
	t.Parallel()
	c, _ := connect(t, stubborn(nil), wire.ClientOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.CallTool(ctx, &protocol.CallToolRequest{Name: "ignore"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool with a cancelled context = %v", err)
	}
}

// TestTypedErrors: what a bridge returns typed crosses the wire as it is,
// and the secrets a bridge reports from Configure reach the host.
func TestTypedErrors(t *testing.T) {
	t.Parallel()
	b := &fake{
		configure: func(_ context.Context, req *protocol.ConfigureRequest) error {
			var cfg struct{ Bad bool }
			json.Unmarshal(req.Config, &cfg)
			if cfg.Bad {
				return fmt.Errorf("checking: %w", &protocol.ConfigError{Key: "servers[1].url", Message: "expected an absolute URL"})
			}
			req.AddSecrets("tok-3a7f9e0c21", "hdr-value-55d1")
			return nil
		},
		call: func(context.Context, *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
			return nil, protocol.Errorf(protocol.CodePermission, "not you")
		},
	}
	c, _ := connect(t, b, wire.ClientOptions{})

	err := c.Configure(t.Context(), &protocol.ConfigureRequest{Config: json.RawMessage(`{"Bad":true}`)})
	var ce *protocol.ConfigError
	if !errors.As(err, &ce) || ce.Key != "servers[1].url" || ce.Message != "expected an absolute URL" {
		t.Errorf("Configure = %v (%T), want the bridge's *ConfigError", err, err)
	}
	req := &protocol.ConfigureRequest{Config: json.RawMessage(`{}`)}
	if err := c.Configure(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if got := req.Secrets(); !slices.Equal(got, []string{"tok-3a7f9e0c21", "hdr-value-55d1"}) {
		t.Errorf("secrets reported = %q", got)
	}

	_, err = c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "t"})
	var te *protocol.ToolError
	if !errors.As(err, &te) || te.Code != protocol.CodePermission || te.Message != "not you" {
		t.Errorf("CallTool = %v, want the bridge's *ToolError", err)
	}

	d, err := c.Describe(t.Context())
	if err != nil || len(d.Tools) != 1 || !d.Tools[0].Variadic || !d.Tools[0].ReadOnly {
		t.Errorf("Describe = %+v, %v: Variadic or ReadOnly lost", d, err)
	}
}
