package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parselbox/parselbox/internal/protocol"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// DefaultCancelGrace is ClientOptions.CancelGrace when it is zero.
const DefaultCancelGrace = 5 * time.Second

// ClientOptions configure a Client.
type ClientOptions struct {
	// CancelGrace is how long CallTool waits, once its context is cancelled,
	// for the bridge to answer the cancel with its result; then it abandons
	// the call and returns a CodeCancelled result itself. Zero means
	// DefaultCancelGrace.
	CancelGrace time.Duration
}

// Client is the host side of one bridge plugin: it implements
// protocol.BridgeServer and protocol.Shutdowner over the plugin's gRPC
// connection. It is safe for concurrent use. Plain calls share one Calls
// stream, opened at the first; a call with messages or events is its own
// Call stream.
//
// Errors: a failure that the bridge reports is a *protocol.ToolError (a
// *protocol.ConfigError from Configure); a broken connection wraps
// ErrUnavailable; a cancelled context is returned as is.
type Client struct {
	rpc    bridgev1.BridgeClient
	broker *plugin.GRPCBroker
	done   context.Context // done when the plugin's process has exited
	grace  time.Duration
	noRun  atomic.Bool // the bridge does not implement Run

	noCalls atomic.Bool // the bridge does not implement Calls
	callsMu sync.Mutex
	calls   *callStream // the open Calls stream; nil until the first call, or after it ended
}

// NewClient returns a Client over conn. done is done when the plugin's
// process has gone (go-plugin passes such a context to
// GRPCPlugin.GRPCClient); broker serves the host's callbacks, and may be nil
// when there are none.
func NewClient(done context.Context, conn grpc.ClientConnInterface, broker *plugin.GRPCBroker, opts ClientOptions) *Client {
	if done == nil {
		done = context.Background()
	}
	grace := opts.CancelGrace
	if grace <= 0 {
		grace = DefaultCancelGrace
	}
	return &Client{rpc: bridgev1.NewBridgeClient(conn), broker: broker, done: done, grace: grace}
}

// Describe implements protocol.BridgeServer.
func (c *Client) Describe(ctx context.Context) (*protocol.Description, error) {
	resp, err := c.rpc.Describe(ctx, &bridgev1.DescribeRequest{})
	if err != nil {
		return nil, c.rpcError(ctx, "describing the bridge", err)
	}
	return describeFromPB(resp), nil
}

// Configure implements protocol.BridgeServer. When req.Host is set, the
// client serves it to the bridge on a broker connection (the bridge sees it
// as its ConfigureRequest.Host). The secrets the bridge reports are added
// to req (req.Secrets).
func (c *Client) Configure(ctx context.Context, req *protocol.ConfigureRequest) error {
	var id uint32
	if req.Host != nil && c.broker != nil {
		id = c.broker.NextId()
		host := &hostServer{host: req.Host}
		go c.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(MaxMessageSize), grpc.MaxSendMsgSize(MaxMessageSize))
			s := grpc.NewServer(opts...)
			bridgev1.RegisterHostServer(s, host)
			return s
		})
	}
	resp, err := c.rpc.Configure(ctx, &bridgev1.ConfigureRequest{Config: object(req.Config), HostBrokerId: id})
	if err != nil {
		return c.rpcError(ctx, "configuring the bridge", err)
	}
	req.AddSecrets(resp.GetSecrets()...)
	return nil
}

// Shutdown implements protocol.Shutdowner. A bridge that does not implement the
// Shutdown RPC has nothing to clean up.
func (c *Client) Shutdown(ctx context.Context) error {
	_, err := c.rpc.Shutdown(ctx, &bridgev1.ShutdownRequest{})
	if err != nil && status.Code(err) != codes.Unimplemented {
		return c.rpcError(ctx, "shutting the bridge down", err)
	}
	return nil
}

// CallTool implements protocol.BridgeServer. A call that sends no messages
// and whose events nobody reads (req.Inbox and req.Events nil) goes on the
// Calls stream (a Run RPC for a bridge without it); cancelling ctx cancels
// it on both sides and returns at once. Any other call is a Call
// stream: it streams the call's log lines and progress into req.Events and
// the messages of req.Inbox into the call; when ctx is cancelled it sends a
// cancel and waits up to CancelGrace for the bridge's result (normally
// CodeCancelled); after that it abandons the call and returns a
// CodeCancelled result itself. On either stream, ctx's deadline travels with
// the call (CallStart.timeout_ms): the tool's context in the bridge has it
// too.
func (c *Client) CallTool(ctx context.Context, req *protocol.CallToolRequest) (*protocol.CallToolResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := &bridgev1.CallStart{Name: req.Name, Arguments: object(req.Arguments), TaskId: req.TaskID}
	if req.Events == nil && req.Inbox == nil && !c.noCalls.Load() {
		res, err := c.multiplexed(ctx, start)
		if !errors.Is(err, errNoCalls) {
			return res, err
		}
	}
	if req.Events == nil && req.Inbox == nil && !c.noRun.Load() {
		res, err := c.rpc.Run(ctx, start)
		if status.Code(err) == codes.Unimplemented {
			c.noRun.Store(true) // a bridge built before Run: stream
		} else if err != nil {
			return nil, c.rpcError(ctx, "calling tool "+req.Name, err)
		} else {
			return resultFromPB(res), nil
		}
	}
	// The stream outlives ctx by up to the grace period, so that the bridge
	// can answer a cancel; it keeps ctx's values.
	streamCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	stream, err := c.rpc.Call(streamCtx)
	if err != nil {
		return nil, c.rpcError(ctx, "calling tool "+req.Name, err)
	}
	// The stream has no gRPC deadline: ctx's travels with the call.
	start.TimeoutMs = timeoutMs(ctx)
	err = stream.Send(&bridgev1.CallRequest{Msg: &bridgev1.CallRequest_Start{Start: start}})
	if err != nil {
		// The real error comes from Recv.
		_, err = stream.Recv()
		return nil, c.rpcError(ctx, "calling tool "+req.Name, err)
	}

	var abandoned atomic.Bool
	if ctx.Done() != nil || req.Inbox != nil {
		finished := make(chan struct{})
		defer close(finished)
		go c.feed(ctx, stream, req.Inbox, finished, func() {
			abandoned.Store(true)
			stop()
		})
	}

	for {
		msg, err := stream.Recv()
		if err != nil {
			if abandoned.Load() {
				return protocol.ErrorResult(protocol.Errorf(protocol.CodeCancelled,
					"call of tool %q cancelled; the bridge did not answer the cancel within %s", req.Name, c.grace)), nil
			}
			return nil, c.rpcError(ctx, "calling tool "+req.Name, err)
		}
		switch m := msg.GetMsg().(type) {
		case *bridgev1.CallResponse_Log:
			req.Log(m.Log.GetLine())
		case *bridgev1.CallResponse_Progress:
			req.Progress(m.Progress.GetProgress(), m.Progress.GetTotal(), m.Progress.GetMessage())
		case *bridgev1.CallResponse_Result:
			return resultFromPB(m.Result), nil
		}
	}
}

// multiplexed makes a plain call on the Calls stream, opening the stream
// if there is none. It returns errNoCalls, without making the call, when
// the bridge does not implement Calls or the call is too big for the
// stream. ctx's deadline travels with the call (timeoutMs); a cancel of
// ctx is sent as a cancel of the call.
func (c *Client) multiplexed(ctx context.Context, start *bridgev1.CallStart) (*protocol.CallToolResult, error) {
	if proto.Size(start) > MaxMessageSize-callsOverhead {
		// Too big for the bridge to read: Run fails this call alone,
		// where the stream would end with it, failing every call on it.
		return nil, errNoCalls
	}
	start.TimeoutMs = timeoutMs(ctx)
	op := "calling tool " + start.GetName()
	cs, err := c.callStream()
	if err != nil {
		return nil, c.rpcError(ctx, op, err)
	}
	id, outcome, err := cs.start(start)
	if err == nil {
		select {
		case out := <-outcome:
			if out != nil {
				return outcomeFromPB(out)
			}
			err = cs.reason()
		case <-ctx.Done():
			go cs.cancel(id) // the caller need not wait for the send
			return nil, fmt.Errorf("%s: %w", op, ctx.Err())
		}
	}
	// The stream has ended (or had before the call started).
	if status.Code(err) == codes.Unimplemented {
		c.noCalls.Store(true) // a bridge built before Calls
		return nil, errNoCalls
	}
	return nil, c.rpcError(ctx, op, err)
}

// timeoutMs is CallStart.timeout_ms for a call made with ctx: the time
// left before ctx's deadline, in ms and at least 1 (0 would mean none), or
// 0 when ctx has no deadline. The bridge turns it back into the deadline of
// the tool's context (callContext).
func timeoutMs(ctx context.Context) uint64 {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return uint64(max(time.Until(d).Milliseconds(), 1))
}

// errNoCalls reports a call not made on the Calls stream: the bridge does
// not implement Calls, or the call's arguments are too big for it.
var errNoCalls = errors.New("not a call for the Calls stream")

// callsOverhead bounds what a CallsRequest or CallsResponse adds to the
// CallStart or outcome it carries (an id and the tags).
const callsOverhead = 64

// callStream returns the open Calls stream, opening one if there is none.
func (c *Client) callStream() (*callStream, error) {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.calls != nil {
		return c.calls, nil
	}
	cs, err := openCallStream(c.done, c.rpc, func(cs *callStream) {
		c.callsMu.Lock()
		if c.calls == cs {
			c.calls = nil // the next call opens a new one
		}
		c.callsMu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	c.calls = cs
	return cs, nil
}

// feed is the only sender on a call's stream after its start: it forwards
// the inbox's messages in order and, when ctx is cancelled, a cancel; if the
// bridge has not finished the call CancelGrace after ctx was cancelled, it
// calls abandon. The grace period runs whatever the sends do: a send waits
// while the bridge keeps more messages than it takes (flow control), and
// only abandoning the stream ends that wait.
func (c *Client) feed(ctx context.Context, stream bridgev1.Bridge_CallClient, inbox <-chan json.RawMessage, finished <-chan struct{}, abandon func()) {
	defer context.AfterFunc(ctx, func() {
		timer := time.NewTimer(c.grace)
		defer timer.Stop()
		select {
		case <-finished:
		case <-timer.C:
			abandon()
		}
	})() // not kept past the call when ctx outlives it
	cancelled := ctx.Done()
	for {
		select {
		case <-finished:
			return
		case msg, ok := <-inbox:
			if !ok {
				inbox = nil
				continue
			}
			if stream.Send(&bridgev1.CallRequest{Msg: &bridgev1.CallRequest_Send{Send: &bridgev1.CallSend{Message: msg}}}) != nil {
				return // the stream is over; Recv reports why
			}
		case <-cancelled:
			cancelled = nil
			inbox = nil
			if stream.Send(&bridgev1.CallRequest{Msg: &bridgev1.CallRequest_Cancel{Cancel: &bridgev1.CallCancel{}}}) != nil {
				return
			}
		}
	}
}

// rpcError classifies the error of an RPC: a failure the bridge reported
// (typedError: a *protocol.ToolError, *protocol.ConfigError or
// *protocol.DeclineError), a cancelled ctx (ctx.Err()), a lost connection
// (wrapping ErrUnavailable), or something else, wrapped with op.
func (c *Client) rpcError(ctx context.Context, op string, err error) error {
	if typed, ok := typedError(err); ok {
		return typed
	}
	st, _ := status.FromError(err)
	switch {
	case st.Code() == codes.Unavailable || c.done.Err() != nil:
		return fmt.Errorf("%s: %w (%s)", op, ErrUnavailable, st.Message())
	case ctx.Err() != nil && (st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, ctx.Err())
	}
	return fmt.Errorf("%s: %w", op, err)
}

var (
	_ protocol.BridgeServer = (*Client)(nil)
	_ protocol.Shutdowner   = (*Client)(nil)
)
