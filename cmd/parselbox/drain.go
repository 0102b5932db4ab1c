package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
)

// drainer turns the signals that stop parselbox into a drain for the
// command that can drain (the MCP server over HTTP): the first signal asks
// it to drain, the second cancels its context at once. For any other
// command, the first signal cancels the context.
type drainer struct {
	taken  atomic.Bool
	drain  chan struct{}
	notify func(msg string)
}

type drainKey struct{}

// withSignals returns a context for run that the signals end as drainer
// says, and a function that stops listening for them.
func withSignals(parent context.Context, notify func(string), sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	d := &drainer{drain: make(chan struct{}), notify: notify}
	ctx = context.WithValue(ctx, drainKey{}, d)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		if !d.taken.Load() {
			cancel()
			return
		}
		close(d.drain)
		select {
		case <-ch:
			notify("a second signal: stopping now, without waiting for the open sessions")
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// drainRequested returns a channel closed when ctx's first signal asks the
// caller to drain; from then on, that signal no longer cancels ctx (a
// second one does). Without signals (ctx not from withSignals) it is nil.
func drainRequested(ctx context.Context) <-chan struct{} {
	d, ok := ctx.Value(drainKey{}).(*drainer)
	if !ok {
		return nil
	}
	d.taken.Store(true)
	return d.drain
}
