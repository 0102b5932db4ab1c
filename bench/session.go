package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host/mcpserver"
)

// sessionTargets are the lines of the table for a new MCP session over
// streamable HTTP: from the client's connect to the result of its first
// execute_code("1 + 1"), with the warm pool and without it (then the
// sandbox boots from the snapshot when the client initializes).
var sessionTargets = []target{
	{"session_first_exec_ms", "session_first_exec_nopool_ms", "≤ 50 ms", func(r results) bool {
		return r.v("session_first_exec_ms") <= 50
	}},
	{"session_first_exec_nopool_ms", "", "", nil},
	{"session_connect_ms", "", "", nil},
	{"session_exec_ms", "", "", nil},
}

// measureSessions adds, in ms, over rounds new sessions:
// session_first_exec_ms (pool of 1; one value per run, each the median of
// its rounds) and session_first_exec_nopool_ms (once), and of the pooled
// figure its two parts, session_connect_ms (the go-sdk client's connect: its
// discover probe, initialize, initialized) and session_exec_ms (the first
// execute_code).
func measureSessions(ctx context.Context, b *bench, rounds int) error {
	for run := range b.runs + 1 {
		pool := 1
		if run == b.runs {
			pool = 0
		}
		fmt.Printf("new MCP sessions, pool of %d, run %d ...\n", pool, run+1)
		first, connect, exec, err := sessionRounds(ctx, b, pool, rounds)
		if err != nil {
			return err
		}
		if pool > 0 {
			b.add("session_first_exec_ms", median(first))
			b.add("session_connect_ms", median(connect))
			b.add("session_exec_ms", median(exec))
		} else {
			b.add("session_first_exec_nopool_ms", median(first))
		}
	}
	return nil
}

// sessionRounds serves MCP over HTTP on loopback with a pool of the given
// size (0: none) and times rounds new sessions, one at a time, each
// started once the previous one is gone and the pool is full again.
func sessionRounds(ctx context.Context, b *bench, pool, rounds int) (first, connect, exec []float64, err error) {
	srv, err := mcpserver.New(b.mcpOptions(pool))
	if err != nil {
		return nil, nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.RunHTTP(ctx, ln) }()
	defer func() {
		cancel()
		<-served
	}()
	url := "http://" + ln.Addr().String() + mcpserver.Path
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	settle := func() error {
		deadline := time.Now().Add(time.Minute)
		for srv.SessionCount() > 0 || (pool > 0 && srv.Pooled() < pool) {
			if time.Now().After(deadline) {
				return fmt.Errorf("sessions did not settle: %d open, %d pooled", srv.SessionCount(), srv.Pooled())
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // let the freshly booted sandbox settle
		return nil
	}
	for i := range rounds + 1 {
		if err := settle(); err != nil {
			return nil, nil, nil, err
		}
		began := time.Now()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("connecting: %w", err)
		}
		connected := time.Now()
		_, err = callExec(ctx, cs, "1 + 1", `{"result":2}`)
		end := time.Now()
		cs.Close()
		if err != nil {
			return nil, nil, nil, err
		}
		if i == 0 {
			continue // warm-up: the first connection of the process
		}
		first = append(first, ms(end.Sub(began)))
		connect = append(connect, ms(connected.Sub(began)))
		exec = append(exec, ms(end.Sub(connected)))
	}
	return first, connect, exec, nil
}
