package wire

import (
	"context"
	"errors"
	"io"
	"sync"

	bridgev1 "github.com/parselbox/parselbox/proto/parselbox/bridge/v1"
)

// callStream is the host's end of one Calls stream: it numbers the calls
// it starts and hands each outcome to the caller waiting for it. A reader
// goroutine receives the outcomes; when the stream ends it fails the calls
// still waiting with the reason (err).
type callStream struct {
	stream bridgev1.Bridge_CallsClient
	stop   context.CancelFunc // ends the stream

	sendMu sync.Mutex // one sender at a time

	mu      sync.Mutex // guards the fields below
	nextID  uint64
	waiting map[uint64]chan *bridgev1.CallsResponse // nil is sent when the stream ends
	err     error                                   // why the stream ended; nil while open
}

// errStreamEnded is the reason for a stream that the bridge ended without
// an error, which it does only when it can no longer read it.
var errStreamEnded = errors.New("the bridge ended the call stream")

// openCallStream opens a Calls stream that lives until done is done or
// the connection breaks. ended is called once when the stream has ended.
func openCallStream(done context.Context, rpc bridgev1.BridgeClient, ended func(*callStream)) (*callStream, error) {
	ctx, stop := context.WithCancel(done)
	stream, err := rpc.Calls(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	cs := &callStream{stream: stream, stop: stop, waiting: map[uint64]chan *bridgev1.CallsResponse{}}
	go cs.read(ended)
	return cs, nil
}

// read delivers outcomes until the stream ends, then fails the calls still
// waiting.
func (cs *callStream) read(ended func(*callStream)) {
	for {
		out, err := cs.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errStreamEnded
			}
			cs.end(err)
			ended(cs)
			return
		}
		cs.mu.Lock()
		ch, ok := cs.waiting[out.GetId()]
		delete(cs.waiting, out.GetId())
		cs.mu.Unlock()
		if ok {
			ch <- out // buffered, and only one outcome per id
		}
	}
}

// end records why the stream ended and fails the calls waiting.
func (cs *callStream) end(err error) {
	cs.stop()
	cs.mu.Lock()
	cs.err = err
	waiting := cs.waiting
	cs.waiting = nil
	cs.mu.Unlock()
	for _, ch := range waiting {
		ch <- nil
	}
}

// start sends the start of a call and returns its id and the channel on
// which its outcome arrives (nil when the stream has ended: then
// cs.reason() says why). It fails at once if the stream has already ended.
func (cs *callStream) start(start *bridgev1.CallStart) (uint64, <-chan *bridgev1.CallsResponse, error) {
	ch := make(chan *bridgev1.CallsResponse, 1)
	cs.mu.Lock()
	if cs.err != nil {
		cs.mu.Unlock()
		return 0, nil, cs.err
	}
	cs.nextID++
	id := cs.nextID
	cs.waiting[id] = ch
	cs.mu.Unlock()

	cs.sendMu.Lock()
	defer cs.sendMu.Unlock()
	// A failed send means a broken stream: Recv, in read, learns why and
	// fails the call.
	_ = cs.stream.Send(&bridgev1.CallsRequest{Id: id, Msg: &bridgev1.CallsRequest_Start{Start: start}})
	return id, ch, nil
}

// cancel forgets call id and asks the bridge to cancel it.
func (cs *callStream) cancel(id uint64) {
	cs.mu.Lock()
	_, ok := cs.waiting[id]
	delete(cs.waiting, id)
	cs.mu.Unlock()
	if !ok {
		return // answered already, or the stream has ended
	}
	cs.sendMu.Lock()
	defer cs.sendMu.Unlock()
	_ = cs.stream.Send(&bridgev1.CallsRequest{Id: id, Msg: &bridgev1.CallsRequest_Cancel{Cancel: &bridgev1.CallCancel{}}})
}

// reason is why the stream ended.
func (cs *callStream) reason() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.err
}
