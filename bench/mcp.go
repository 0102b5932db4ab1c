package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// mcpTargets are the lines of the table for one execute_code on an open
// MCP session, compared with a bare exec measured in the same loop.
var mcpTargets = []target{
	{"mcp_exec_p50_ms", "exec_p50_ms", "≤ exec + 1 ms", func(r results) bool {
		return r.v("mcp_exec_p50_ms") <= r.v("exec_p50_ms")+1
	}},
	{"mcp_stdio_exec_p50_ms", "exec_p50_ms", "≤ exec + 0.5 ms", func(r results) bool {
		return r.v("mcp_stdio_exec_p50_ms") <= r.v("exec_p50_ms")+0.5
	}},
	{"mcp_ping_p50_ms", "", "", nil},
	{"mcp_stdio_ping_p50_ms", "", "", nil},
	{"mcp_minus_exec_p50_ms", "", "≤ 1 ms (paired)", func(r results) bool { return r.v("mcp_minus_exec_p50_ms") <= 1 }},
	{"mcp_stdio_minus_exec_p50_ms", "", "≤ 0.5 ms (paired)", func(r results) bool { return r.v("mcp_stdio_minus_exec_p50_ms") <= 0.5 }},
	{"mcp_stdio_noop_p50_ms", "", "", nil},
	{"mcp_stdio_own_p50_ms", "", "", nil},
	// The same execute_code over stdio with a minimal client (rawStdio)
	// instead of the go-sdk's: what Parselbox adds for a client that is
	// not the go-sdk's, with its own floor, the no-op go-sdk server.
	{"mcp_stdio_raw_exec_p50_ms", "exec_p50_ms", "≤ exec + 0.5 ms", func(r results) bool {
		return r.v("mcp_stdio_raw_exec_p50_ms") <= r.v("exec_p50_ms")+0.5
	}},
	{"mcp_stdio_raw_minus_exec_p50_ms", "", "≤ 0.5 ms (paired)", func(r results) bool { return r.v("mcp_stdio_raw_minus_exec_p50_ms") <= 0.5 }},
	{"mcp_stdio_raw_noop_p50_ms", "", "", nil},
	{"mcp_stdio_raw_own_p50_ms", "", "", nil},
	// The CPU time of the server process (not its sandbox) per
	// execute_code with the minimal client: Parselbox's, and the no-op
	// go-sdk server's.
	{"mcp_stdio_server_cpu_ms", "mcp_stdio_noop_server_cpu_ms", "", nil},
}

// noopEnv makes the bench binary serve the no-op MCP server (serveNoop)
// instead of measuring.
const noopEnv = "PARSELBOX_BENCH_NOOP_MCP"

// serveNoop serves, over stdio as parselbox does (mcpserver.Stdio, one
// thread: GOMAXPROCS=1 as parselbox over stdio), a go-sdk server whose
// execute_code answers {"result":2} at once: what the go-sdk on both ends
// and the process boundary cost a tool call, without Parselbox. Measured
// beside execute_code over stdio (mcp_stdio_noop_p50_ms), it is the floor
// of mcp_stdio_minus_exec_p50_ms that no change to Parselbox's server can
// lower; mcp_stdio_own_p50_ms is the rest, per round: stdio - exec - noop.
func serveNoop() {
	s := mcp.NewServer(&mcp.Implementation{Name: "noop", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: mcpserver.ToolName, InputSchema: mcpserver.InputSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"result":2}`}}}, nil
		})
	t, restore := mcpserver.Stdio(os.Stdin, os.Stdout)
	defer restore()
	if err := s.Run(context.Background(), t); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		fmt.Fprintln(os.Stderr, "bench noop server:", err)
	}
}

// mcpClients are open MCP sessions of the two transports: streamable HTTP
// to a server in this process, and stdio to bin/parselbox, both with the
// kernel confinement off (see openMCP). Over stdio, each server is driven
// by the go-sdk's client and, in a process of its own, by a minimal one
// (rawStdio).
type mcpClients struct {
	http, stdio *mcp.ClientSession
	noop        *mcp.ClientSession // the go-sdk floor over stdio (serveNoop)
	rawStdio    *rawStdio          // bin/parselbox, with the minimal client
	rawNoop     *rawStdio          // serveNoop, with the minimal client
	close       func()
}

// openMCP opens one session over each transport. The stdio one needs
// bin/parselbox (make build); without it, stdio is nil.
func (b *bench) openMCP(ctx context.Context) (*mcpClients, error) {
	c := &mcpClients{}
	var closers []func()
	c.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	// No kernel confinement, as the bare sandbox that execute_code is
	// compared with (exec_p50_ms) has none: the difference is the front
	// end's. What the confinement costs is measured on its own
	// (exec_p50_confined_ms).
	opts := b.mcpOptions(1)
	opts.Config.Confinement = "off"
	srv, err := mcpserver.New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.RunHTTP(sctx, ln) }()
	closers = append(closers, func() { cancel(); <-served })
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	c.http, err = client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: "http://" + ln.Addr().String() + mcpserver.Path, MaxRetries: -1,
	}, nil)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("connecting over HTTP: %w", err)
	}
	closers = append(closers, func() { c.http.Close() })

	bin, err := filepath.Abs(filepath.Join("bin", "parselbox"))
	if err != nil {
		c.close()
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintln(os.Stderr, "bench: MCP over stdio not measured: bin/parselbox is not built (make build)")
		return c, nil
	}
	stdioCmd := func() *exec.Cmd {
		cmd := exec.Command(bin, "--runtime-dir", b.rt.Dir, "--cache-dir", b.cacheDir, "--confinement", "off")
		cmd.Env = append(os.Environ(), "PARSELBOX_LOG_LEVEL=error")
		return cmd
	}
	c.stdio, err = client.Connect(ctx, &mcp.CommandTransport{Command: stdioCmd()}, nil)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("connecting over stdio: %w", err)
	}
	closers = append(closers, func() { c.stdio.Close() })

	self, err := os.Executable()
	if err != nil {
		c.close()
		return nil, err
	}
	noopCmd := func() *exec.Cmd {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), noopEnv+"=1", "GOMAXPROCS=1")
		return cmd
	}
	c.noop, err = client.Connect(ctx, &mcp.CommandTransport{Command: noopCmd()}, nil)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("connecting to the no-op server over stdio: %w", err)
	}
	closers = append(closers, func() { c.noop.Close() })

	if c.rawStdio, err = startRawStdio(stdioCmd()); err != nil {
		c.close()
		return nil, fmt.Errorf("connecting over stdio with the minimal client: %w", err)
	}
	closers = append(closers, func() { c.rawStdio.close() })
	if c.rawNoop, err = startRawStdio(noopCmd()); err != nil {
		c.close()
		return nil, fmt.Errorf("connecting to the no-op server with the minimal client: %w", err)
	}
	closers = append(closers, func() { c.rawNoop.close() })
	return c, nil
}

// warm runs n executions of 1+1 on each sandbox behind an MCP session,
// one of each in turn, before the runs: the sandbox of exec_p50_ms has
// b.warmup executions before its counted ones (V8 optimizes Pyodide's
// code for about the first 1000), and so must the MCP servers' sandboxes,
// which live through the runs, or the difference is partly V8's. With
// only the warm-up run's executions before them, measured side by side
// over stdio (a server warmed with 1000 executions against a fresh one,
// the same 300 executions of a warm-up run on both, then 300 rounds per
// run, 9 times, load 2-18 on 2 cores), the fresh one's p50 was higher by
// 0.11 ms on average in the first run, 0.06 in the second, 0.02 in the
// third.
func (c *mcpClients) warm(ctx context.Context, n int) error {
	for range n {
		if _, err := callExec(ctx, c.http, "1+1", `{"result":2}`); err != nil {
			return fmt.Errorf("warming up over HTTP: %w", err)
		}
		if c.stdio == nil {
			continue
		}
		if _, err := callExec(ctx, c.stdio, "1+1", `{"result":2}`); err != nil {
			return fmt.Errorf("warming up over stdio: %w", err)
		}
		if _, err := callRawExec(c.rawStdio, "1+1", `{"result":2}`); err != nil {
			return fmt.Errorf("warming up over stdio, minimal client: %w", err)
		}
	}
	return nil
}

// callExec runs code with execute_code on cs and checks that the text of
// the result is want: a call that fails fast must not pass for a fast one.
func callExec(ctx context.Context, cs *mcp.ClientSession, code, want string) (time.Duration, error) {
	t0 := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: map[string]any{"code": code}})
	d := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if len(res.Content) == 0 {
		return 0, errors.New("execute_code returned no content")
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if res.IsError || text == nil || text.Text != want {
		return 0, fmt.Errorf("execute_code(%q) = %+v, want %s", code, res.Content[0], want)
	}
	return d, nil
}

// ping times one MCP ping on cs: the transport's round trip (the client,
// the go-sdk on both ends and, over stdio, the process boundary), which
// execute_code pays on top of the execution.
func ping(ctx context.Context, cs *mcp.ClientSession) (time.Duration, error) {
	t0 := time.Now()
	err := cs.Ping(ctx, nil)
	return time.Since(t0), err
}

// mcpOptions are the options of the MCP servers measured: the default
// settings, with a pool of the given size.
func (b *bench) mcpOptions(pool int) mcpserver.Options {
	s := mcpserver.DefaultSettings()
	s.PoolSize = pool
	return mcpserver.Options{
		Config:   host.Config{RuntimeDir: b.rt.Dir, CacheDir: b.cacheDir},
		Settings: &s,
		Version:  "bench",
	}
}
