package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parselbox/parselbox/internal/protocol"
	"github.com/parselbox/parselbox/internal/workers"
	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// server is the bridge side: it serves a protocol.BridgeServer as the
// Bridge gRPC service. Every call into impl is guarded: a panic becomes an
// error for that RPC, not a dead plugin.
type server struct {
	bridgev1.UnimplementedBridgeServer

	impl   protocol.BridgeServer
	broker *plugin.GRPCBroker // nil when the host offers no broker
	logger hclog.Logger

	mu       sync.Mutex
	hostConn *grpc.ClientConn // connection to the host's Host service
}

func newServer(impl protocol.BridgeServer, broker *plugin.GRPCBroker, logger hclog.Logger) *server {
	return &server{impl: impl, broker: broker, logger: logger}
}

// Describe implements bridgev1.BridgeServer.
func (s *server) Describe(ctx context.Context, _ *bridgev1.DescribeRequest) (*bridgev1.DescribeResponse, error) {
	var d *protocol.Description
	err := s.guard("Describe", func() (err error) {
		d, err = s.impl.Describe(ctx)
		return err
	})
	if err != nil {
		return nil, errorStatus(err)
	}
	return describeToPB(d), nil
}

// Configure implements bridgev1.BridgeServer: it dials the host's callback
// service when the host offers one, configures impl, and returns the
// secrets that impl reported.
func (s *server) Configure(ctx context.Context, req *bridgev1.ConfigureRequest) (*bridgev1.ConfigureResponse, error) {
	var host protocol.HostClient
	if id := req.GetHostBrokerId(); id != 0 && s.broker != nil {
		conn, err := s.broker.DialWithOptions(id,
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageSize), grpc.MaxCallSendMsgSize(MaxMessageSize)))
		if err != nil {
			// A ToolError, not codes.Unavailable: the bridge itself is up.
			return nil, errorStatus(protocol.Errorf(protocol.CodeUnavailable, "cannot reach the host's callback service: %v", err))
		}
		s.setHostConn(conn)
		host = &hostClient{rpc: bridgev1.NewHostClient(conn)}
	}
	creq := &protocol.ConfigureRequest{Config: object(req.GetConfig()), Host: host}
	err := s.guard("Configure", func() error { return s.impl.Configure(ctx, creq) })
	if err != nil {
		return nil, errorStatus(err)
	}
	secrets := creq.Secrets()
	for i, v := range secrets {
		secrets[i] = validUTF8(v)
	}
	return &bridgev1.ConfigureResponse{Secrets: secrets}, nil
}

func (s *server) setHostConn(conn *grpc.ClientConn) {
	s.mu.Lock()
	old := s.hostConn
	s.hostConn = conn
	s.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
}

// Shutdown implements bridgev1.BridgeServer.
func (s *server) Shutdown(ctx context.Context, _ *bridgev1.ShutdownRequest) (*bridgev1.ShutdownResponse, error) {
	err := s.guard("Shutdown", func() error {
		if sh, ok := s.impl.(protocol.Shutdowner); ok {
			return sh.Shutdown(ctx)
		}
		return nil
	})
	s.setHostConn(nil)
	if err != nil {
		return nil, errorStatus(err)
	}
	return &bridgev1.ShutdownResponse{}, nil
}

// Call implements bridgev1.BridgeServer; see the Call RPC in bridge.proto
// for the protocol. The call's context is the stream's with the caller's
// deadline (callContext), cancelled by a cancel from the host.
func (s *server) Call(stream bridgev1.Bridge_CallServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "the first message of a call must be a start")
	}
	ctx, cancel := callContext(stream.Context(), start.GetTimeoutMs())
	defer cancel()

	sent, inbox := make(chan json.RawMessage), make(chan json.RawMessage)
	go queue(ctx, sent, inbox)
	go func() {
		for {
			msg, err := stream.Recv()
			if err != nil {
				return // io.EOF: the host sends no more; otherwise the stream is over
			}
			switch m := msg.GetMsg().(type) {
			case *bridgev1.CallRequest_Send:
				select {
				case sent <- json.RawMessage(m.Send.GetMessage()):
				case <-ctx.Done():
				}
			case *bridgev1.CallRequest_Cancel:
				cancel()
			}
		}
	}()

	events := &streamEvents{stream: stream}
	res, err := s.call(ctx, start, events, inbox)
	if err != nil {
		events.close()
		return errorStatus(err)
	}
	return events.finish(resultToPB(res))
}

// Run implements bridgev1.BridgeServer: a call without messages or events.
func (s *server) Run(ctx context.Context, start *bridgev1.CallStart) (*bridgev1.CallResult, error) {
	res, err := s.call(ctx, start, nil, nil)
	if err != nil {
		return nil, errorStatus(err)
	}
	return resultToPB(res), nil
}

// call makes the call that start describes, reporting to events and
// delivering the messages of inbox (either may be nil).
func (s *server) call(ctx context.Context, start *bridgev1.CallStart, events protocol.EventSink, inbox <-chan json.RawMessage) (res *protocol.CallToolResult, err error) {
	req := &protocol.CallToolRequest{
		Name:      start.GetName(),
		Arguments: json.RawMessage(start.GetArguments()),
		TaskID:    start.GetTaskId(),
		Events:    events,
		Inbox:     inbox,
	}
	err = s.guard("CallTool "+req.Name, func() (err error) {
		res, err = s.impl.CallTool(ctx, req)
		return err
	})
	return res, err
}

// Calls implements bridgev1.BridgeServer; see the Calls RPC in
// bridge.proto for the protocol. Each call runs in its own goroutine (a
// worker of a workers.Pool) and context (callContext); the outcomes share
// the stream, one sender at a time. When the stream ends, the calls still
// running are cancelled, and Calls returns once they have (a stream's
// messages cannot be sent after its handler has returned).
func (s *server) Calls(stream bridgev1.Bridge_CallsServer) error {
	// The receiving loop never waits for a send (which waits for the host
	// to read): sends have their own lock.
	var (
		mu      sync.Mutex // guards running
		running = map[uint64]context.CancelFunc{}
		sendMu  sync.Mutex
		pool    = workers.New()
	)
	defer func() {
		mu.Lock()
		for _, cancel := range running {
			cancel()
		}
		mu.Unlock()
		pool.Stop()
	}()
	for {
		msg, err := stream.Recv()
		if err != nil {
			return nil // io.EOF: the host is done; otherwise the stream is over
		}
		id := msg.GetId()
		switch m := msg.GetMsg().(type) {
		case *bridgev1.CallsRequest_Cancel:
			mu.Lock()
			if cancel, ok := running[id]; ok {
				cancel()
			}
			mu.Unlock()
		case *bridgev1.CallsRequest_Start:
			ctx, cancel := callContext(stream.Context(), m.Start.GetTimeoutMs())
			mu.Lock()
			if _, dup := running[id]; dup {
				mu.Unlock()
				cancel()
				return status.Errorf(codes.InvalidArgument, "call id %d is already running", id)
			}
			running[id] = cancel
			mu.Unlock()
			pool.Run(func() {
				res, err := s.call(ctx, m.Start, nil, nil)
				out := outcomeToPB(id, res, err)
				if n := proto.Size(out); n > MaxMessageSize {
					// Sending it would end the stream and every call on it.
					out = outcomeToPB(id, nil, protocol.Errorf(protocol.CodeInternal,
						"the result of tool %q is %d bytes, more than the %d bytes a message to the host may have", m.Start.GetName(), n, MaxMessageSize))
				}
				mu.Lock()
				delete(running, id)
				mu.Unlock()
				cancel()
				sendMu.Lock()
				defer sendMu.Unlock()
				_ = stream.Send(out) // a broken stream ends Recv above
			})
		}
	}
}

// callContext is the context of a call on the Calls stream or a Call
// stream: the stream's, with the caller's deadline (timeoutMs from now; 0:
// none) when it has one (neither stream has a gRPC deadline).
func callContext(stream context.Context, timeoutMs uint64) (context.Context, context.CancelFunc) {
	if timeoutMs == 0 || timeoutMs > uint64(math.MaxInt64/time.Millisecond) {
		// No deadline, or one too far off for a time.Duration (never in
		// practice).
		return context.WithCancel(stream)
	}
	return context.WithTimeout(stream, time.Duration(timeoutMs)*time.Millisecond)
}

// guard runs f, turning a panic into an error.
func (s *server) guard(op string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("panic in bridge", "op", op, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = protocol.Errorf(protocol.CodeInternal, "%s panicked: %v", op, r)
		}
	}()
	return f()
}

// streamEvents sends a call's log lines and progress on its stream. Sends
// are serialised (a gRPC stream allows one sender at a time), and events
// reported after the result are dropped.
type streamEvents struct {
	mu     sync.Mutex
	stream bridgev1.Bridge_CallServer
	done   bool
}

func (e *streamEvents) Log(line string) {
	e.send(&bridgev1.CallResponse{Msg: &bridgev1.CallResponse_Log{Log: &bridgev1.CallLog{Line: validUTF8(line)}}})
}

func (e *streamEvents) Progress(progress, total float64, message string) {
	e.send(&bridgev1.CallResponse{Msg: &bridgev1.CallResponse_Progress{Progress: &bridgev1.CallProgress{
		Progress: progress, Total: total, Message: validUTF8(message),
	}}})
}

func (e *streamEvents) send(msg *bridgev1.CallResponse) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		_ = e.stream.Send(msg) // a broken stream cancels the call's context
	}
}

// finish sends the result, the last message of the stream.
func (e *streamEvents) finish(res *bridgev1.CallResult) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done = true
	return e.stream.Send(&bridgev1.CallResponse{Msg: &bridgev1.CallResponse_Result{Result: res}})
}

func (e *streamEvents) close() {
	e.mu.Lock()
	e.done = true
	e.mu.Unlock()
}

// maxQueuedBytes bounds the messages sent into a call that its tool has
// not read yet (one message of any size is taken when none waits): they
// are the host's guest's, and the bridge runs outside the sandbox's limits.
const maxQueuedBytes = 16 << 20

// queue passes the messages sent into a call from in to out, in order,
// keeping those that the tool has not read yet, so that the stream's
// receiver (which must stay free to see a cancel) does not wait for the
// tool; past maxQueuedBytes it does: gRPC's flow control then holds the
// host's sends, and a cancel reaches the tool when the host gives up the
// stream (Client.feed).
func queue(ctx context.Context, in <-chan json.RawMessage, out chan<- json.RawMessage) {
	var queued []json.RawMessage
	var size int
	for {
		var send chan<- json.RawMessage // nil, which never sends, while none is queued
		var next json.RawMessage
		if len(queued) > 0 {
			send, next = out, queued[0]
		}
		receive := in
		if size >= maxQueuedBytes {
			receive = nil
		}
		select {
		case msg := <-receive:
			queued = append(queued, msg)
			size += len(msg)
		case send <- next:
			queued[0] = nil
			queued = queued[1:]
			size -= len(next)
		case <-ctx.Done():
			return
		}
	}
}

var _ bridgev1.BridgeServer = (*server)(nil)
