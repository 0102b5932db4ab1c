package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

// liveQueue is how many notifications may wait to be sent; more are
// dropped (the code never waits for the client).
const liveQueue = 256

// live sends what a running execution reports while it runs: progress
// (sbx.progress, the bridges' lines) as notifications/progress when the
// client's call carried a progress token, and printed lines as log
// notifications (logger "stdout" or "stderr") when the stream_output
// setting is on. The sandbox's goroutines only queue; one goroutine sends,
// in order, and stop waits until everything queued is sent: the
// notifications go out before the result.
type live struct {
	ch   chan func()
	done chan struct{}
	mu   sync.Mutex
	shut bool
}

// liveContext returns ctx with the execution's reports wired to the
// client, and the function to call when the execution has ended (before
// the result is sent).
func (s *session) liveContext(ctx context.Context, req *mcp.CallToolRequest) (context.Context, func()) {
	token := req.Params.GetProgressToken()
	stream := s.opts.Settings.StreamOutput
	ss := req.Session
	if ss == nil || token == nil && !stream {
		return ctx, func() {}
	}
	l := &live{ch: make(chan func(), liveQueue), done: make(chan struct{})}
	sendCtx := context.WithoutCancel(ctx) // the request's log level, if it set one
	go func() {
		defer close(l.done)
		for send := range l.ch {
			send()
		}
	}()
	if token != nil {
		ctx = host.WithProgress(ctx, func(p host.Progress) {
			l.queue(func() {
				err := ss.NotifyProgress(sendCtx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message,
				})
				if err != nil {
					s.log.Debug("sending progress", logError, err)
				}
			})
		})
	}
	if stream {
		ctx = host.WithOutput(ctx, func(stream, text string) {
			l.queue(func() {
				err := ss.Log(sendCtx, &mcp.LoggingMessageParams{Level: "info", Logger: stream, Data: text})
				if err != nil {
					s.log.Debug("sending output", logError, err)
				}
			})
		})
	}
	return ctx, l.stop
}

// queue adds a send, or drops it when the queue is full or stopped.
func (l *live) queue(send func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		return
	}
	select {
	case l.ch <- send:
	default:
	}
}

// stop sends what is queued, then nothing more.
func (l *live) stop() {
	l.mu.Lock()
	if !l.shut {
		l.shut = true
		close(l.ch)
	}
	l.mu.Unlock()
	<-l.done
}

// valuesFrom is Context (its deadline, its cancellation) with the values
// of values, which it does not have itself: an execution that outlives its
// request reports as the request asked.
type valuesFrom struct {
	context.Context
	values context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.values.Value(key)
}
