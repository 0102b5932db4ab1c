package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// countingServer counts the Run RPCs and Calls streams it serves; with
// noCalls it is a bridge built before Calls, and with breakFirst its first
// Calls stream ends with an error at its first call, unanswered.
type countingServer struct {
	*server
	runs, streams atomic.Int32
	noCalls       bool
	breakFirst    bool
}

func (s *countingServer) Run(ctx context.Context, start *bridgev1.CallStart) (*bridgev1.CallResult, error) {
	s.runs.Add(1)
	return s.server.Run(ctx, start)
}

func (s *countingServer) Calls(stream bridgev1.Bridge_CallsServer) error {
	if s.noCalls {
		return status.Error(codes.Unimplemented, "method Calls not implemented")
	}
	if s.streams.Add(1) == 1 && s.breakFirst {
		if _, err := stream.Recv(); err != nil {
			return err
		}
		return status.Error(codes.Internal, "the stream broke")
	}
	return s.server.Calls(stream)
}

type countingPlugin struct {
	Plugin
	srv *countingServer
}

func (p *countingPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	p.srv.server = newServer(p.Impl, broker, hclog.NewNullLogger())
	bridgev1.RegisterBridgeServer(s, p.srv)
	return nil
}

// connectCounting serves impl through srv in-process and returns the host's
// client and go-plugin's server (to break the connection).
func connectCounting(t *testing.T, impl protocol.BridgeServer, srv *countingServer) (*Client, *plugin.GRPCServer) {
	t.Helper()
	conn, gs := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{PluginName: &countingPlugin{Plugin{Impl: impl}, srv}})
	t.Cleanup(func() { _ = conn.Close() })
	raw, err := conn.Dispense(PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(*Client), gs
}

// funcBridge is a protocol.BridgeServer whose tool is call.
type funcBridge func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error)

func (funcBridge) Describe(context.Context) (*protocol.Description, error) {
	return &protocol.Description{}, nil
}
func (funcBridge) Configure(context.Context, *protocol.ConfigureRequest) error { return nil }
func (f funcBridge) CallTool(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return f(ctx, req)
}

// echo returns its arguments.
var echo = funcBridge(func(_ context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	return &protocol.CallToolResult{Content: req.Arguments}, nil
})

// TestCallsMultiplexed: concurrent plain calls share one Calls stream, run
// at the same time in the bridge, finish in another order than they
// started, and each gets its own outcome (results and errors).
func TestCallsMultiplexed(t *testing.T) {
	t.Parallel()
	const n = 8
	var (
		mu      sync.Mutex
		inside  int
		allIn   = make(chan struct{})
		release = make([]chan struct{}, n)
	)
	for i := range release {
		release[i] = make(chan struct{})
	}
	b := funcBridge(func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		var in struct{ I int }
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		mu.Lock()
		inside++
		if inside == n {
			close(allIn)
		}
		mu.Unlock()
		select {
		case <-release[in.I]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if in.I%2 == 1 {
			return nil, protocol.Errorf(protocol.CodePermission, "odd %d", in.I)
		}
		return &protocol.CallToolResult{Content: req.Arguments}, nil
	})
	srv := &countingServer{}
	c, _ := connectCounting(t, b, srv)

	results := make([]*protocol.CallToolResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "t", Arguments: json.RawMessage(fmt.Sprintf(`{"I":%d}`, i))})
		})
	}
	<-allIn // all n calls are inside the bridge at once
	for i := n - 1; i >= 0; i-- {
		close(release[i]) // the last started finishes first
	}
	wg.Wait()
	for i := range n {
		var te *protocol.ToolError
		switch {
		case i%2 == 0 && (errs[i] != nil || string(results[i].Content) != fmt.Sprintf(`{"I":%d}`, i)):
			t.Errorf("call %d = %+v, %v", i, results[i], errs[i])
		case i%2 == 1 && (!errors.As(errs[i], &te) || te.Code != protocol.CodePermission || te.Message != fmt.Sprintf("odd %d", i)):
			t.Errorf("call %d = %+v, %v; want its ToolError", i, results[i], errs[i])
		}
	}
	if runs, streams := srv.runs.Load(), srv.streams.Load(); runs != 0 || streams != 1 {
		t.Errorf("%d calls made %d Run RPCs and %d Calls streams; want 0 and 1", n, runs, streams)
	}
}

// TestCallsCancel: cancelling a plain call returns at once with the
// context's error and cancels the tool's context in the bridge; the stream
// goes on serving calls.
func TestCallsCancel(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	stopped := make(chan error, 1)
	b := funcBridge(func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		if req.Name == "block" {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil, ctx.Err()
		}
		return &protocol.CallToolResult{Content: json.RawMessage(`"ok"`)}, nil
	})
	srv := &countingServer{}
	c, _ := connectCounting(t, b, srv)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, &protocol.CallToolRequest{Name: "block"})
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call = %v, want context.Canceled", err)
	}
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("the tool's context ended with %v, want context.Canceled", err)
	}
	res, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "next"})
	if err != nil || string(res.Content) != `"ok"` {
		t.Errorf("call after the cancel = %+v, %v", res, err)
	}
	if streams := srv.streams.Load(); streams != 1 {
		t.Errorf("Calls streams = %d, want 1", streams)
	}
}

// TestCallsDeadline: a plain call's deadline reaches the tool's context in
// the bridge; a call without one has none there either.
func TestCallsDeadline(t *testing.T) {
	t.Parallel()
	type seen struct {
		deadline time.Time
		ok       bool
	}
	got := make(chan seen, 1)
	b := funcBridge(func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		d, ok := ctx.Deadline()
		got <- seen{d, ok}
		return &protocol.CallToolResult{Content: json.RawMessage(`null`)}, nil
	})
	srv := &countingServer{}
	c, _ := connectCounting(t, b, srv)

	const timeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if _, err := c.CallTool(ctx, &protocol.CallToolRequest{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if left := time.Until(s.deadline); !s.ok || left <= 0 || left > timeout {
		t.Errorf("with a %s deadline, the tool's context has deadline %v (%v), %s from now; want one within %s", timeout, s.deadline, s.ok, left, timeout)
	}

	if _, err := c.CallTool(context.WithoutCancel(t.Context()), &protocol.CallToolRequest{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s.ok {
		t.Errorf("without a deadline, the tool's context has deadline %v", s.deadline)
	}
	if streams, runs := srv.streams.Load(), srv.runs.Load(); streams != 1 || runs != 0 {
		t.Errorf("Calls streams = %d, Run RPCs = %d; want 1 and 0", streams, runs)
	}
}

// TestCallsBrokenConnection: a plain call in flight when the bridge's
// server goes away fails with ErrUnavailable, as do the calls after it.
func TestCallsBrokenConnection(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	b := funcBridge(func(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	c, gs := connectCounting(t, b, &countingServer{})
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "block"})
		done <- err
	}()
	<-started
	gs.Stop()
	if err := <-done; !errors.Is(err, ErrUnavailable) {
		t.Fatalf("call over a broken connection = %v, want ErrUnavailable", err)
	}
	if _, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "block"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("call after the connection broke = %v, want ErrUnavailable", err)
	}
}

// TestCallsStreamReopens: when the Calls stream ends with an error, the
// call in flight fails with it and the next call opens a new stream.
func TestCallsStreamReopens(t *testing.T) {
	t.Parallel()
	srv := &countingServer{breakFirst: true}
	c, _ := connectCounting(t, echo, srv)
	_, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "x", Arguments: json.RawMessage(`{"a":1}`)})
	if err == nil || errors.Is(err, ErrUnavailable) || status.Code(errors.Unwrap(err)) != codes.Internal {
		t.Errorf("call on a breaking stream = %v, want its Internal status", err)
	}
	// The reader may not have retired the broken stream yet: a call that
	// finds it ended fails as the one in flight did.
	for i := 0; ; i++ {
		res, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "x", Arguments: json.RawMessage(`{"a":2}`)})
		if err == nil && string(res.Content) == `{"a":2}` {
			break
		}
		if i > 0 {
			t.Fatalf("call %d after the stream broke = %+v, %v", i, res, err)
		}
	}
	if streams, runs := srv.streams.Load(), srv.runs.Load(); streams != 2 || runs != 0 {
		t.Errorf("Calls streams = %d, Run RPCs = %d; want 2 and 0", streams, runs)
	}
}

// TestCallsFallBackToRun: a bridge built before Calls (but with Run) gets
// every plain call as a Run, concurrent first calls included.
func TestCallsFallBackToRun(t *testing.T) {
	t.Parallel()
	srv := &countingServer{noCalls: true}
	c, _ := connectCounting(t, echo, srv)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			res, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "x", Arguments: json.RawMessage(`{"a":1}`)})
			if err == nil && string(res.Content) != `{"a":1}` {
				err = fmt.Errorf("result %s", res.Content)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d = %v", i, err)
		}
	}
	if !c.noCalls.Load() || srv.runs.Load() != n {
		t.Errorf("noCalls = %v, Run RPCs = %d; want true, %d", c.noCalls.Load(), srv.runs.Load(), n)
	}
}

// TestCallsMessageSizes: a result bigger than gRPC's default limit (4 MB)
// comes back on the stream; a result or arguments too big for a message
// (MaxMessageSize) fail their own call and leave the stream to the others.
func TestCallsMessageSizes(t *testing.T) {
	t.Parallel()
	quoted := func(n int) json.RawMessage {
		b := make([]byte, n+2)
		for i := range b {
			b[i] = 'x'
		}
		b[0], b[n+1] = '"', '"'
		return b
	}
	b := funcBridge(func(_ context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
		switch req.Name {
		case "big":
			return &protocol.CallToolResult{Content: quoted(5 << 20)}, nil
		case "huge":
			return &protocol.CallToolResult{Content: quoted(MaxMessageSize)}, nil
		}
		return &protocol.CallToolResult{Content: json.RawMessage(`"small"`)}, nil
	})
	srv := &countingServer{}
	c, _ := connectCounting(t, b, srv)

	res, err := c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "big"})
	if err != nil || len(res.Content) != 5<<20+2 {
		t.Errorf("5 MB result: %d bytes, %v", len(res.Content), err)
	}
	_, err = c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "huge"})
	var te *protocol.ToolError
	if !errors.As(err, &te) || te.Code != protocol.CodeInternal || !strings.Contains(te.Message, `the result of tool "huge" is`) {
		t.Errorf("oversized result: %v, want a ToolError about its size", err)
	}
	_, err = c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "small", Arguments: quoted(MaxMessageSize)})
	if status.Code(errors.Unwrap(err)) != codes.ResourceExhausted {
		t.Errorf("oversized arguments: %v, want ResourceExhausted", err)
	}
	res, err = c.CallTool(t.Context(), &protocol.CallToolRequest{Name: "small"})
	if err != nil || string(res.Content) != `"small"` {
		t.Errorf("small call after them = %+v, %v", res, err)
	}
	// On the stream, the oversized arguments would have ended it.
	if streams := srv.streams.Load(); streams != 1 {
		t.Errorf("Calls streams = %d, want 1", streams)
	}
}

// TestCallContext: the deadline of a call on the Calls stream, from the
// caller's timeout; none for 0 or one too far off for a time.Duration.
func TestCallContext(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		timeoutMs    uint64
		wantDeadline bool
	}{
		"none":     {0, false},
		"1 ms":     {1, true},
		"5 s":      {5000, true},
		"overflow": {math.MaxUint64, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			before := time.Now()
			ctx, cancel := callContext(t.Context(), tt.timeoutMs)
			defer cancel()
			d, ok := ctx.Deadline()
			if ok != tt.wantDeadline {
				t.Fatalf("deadline %v, %v; want one: %v", d, ok, tt.wantDeadline)
			}
			if ok && (d.Before(before.Add(time.Duration(tt.timeoutMs)*time.Millisecond)) || d.After(time.Now().Add(time.Duration(tt.timeoutMs)*time.Millisecond))) {
				t.Errorf("deadline %s after the call, want %d ms", d.Sub(before), tt.timeoutMs)
			}
			cancel()
			if ctx.Err() == nil {
				t.Error("cancel did not end the context")
			}
		})
	}
}
