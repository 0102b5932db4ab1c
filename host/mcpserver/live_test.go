package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

// liveCode reports progress from Python, from a tool's log and progress
// lines (work.steps, between steps 1 and 2) and from JavaScript, and
// prints.
const liveCode = `import time
print("starting")
for i in range(1, 4):
    sbx.progress(i, 4, f"step {i}")
    time.sleep(0.12)
    if i == 1:
        work.steps(2)
js("await sbx.progress(4, 4, 'from js'); return 1")
"done"`

// liveReport is one notifications/progress as a client saw it.
type liveReport struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// checkLive checks the progress a client saw of liveCode: every report in
// order, the values rising strictly (as MCP wants), the steps of
// sbx.progress as they were given, the tool's lines between steps 1 and 2.
func checkLive(t *testing.T, got []liveReport) {
	t.Helper()
	want := []string{"step 1", "work.steps: line 1", "work.steps: [1/2] (50%) steps", "work.steps: line 2",
		"work.steps: [2/2] (100%) steps", "step 2", "step 3", "from js"}
	var msgs []string
	for _, r := range got {
		msgs = append(msgs, r.Message)
	}
	if !slices.Equal(msgs, want) {
		t.Fatalf("progress messages before the result:\n%q\nwant\n%q", msgs, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Progress <= got[i-1].Progress {
			t.Errorf("progress does not rise: %+v after %+v", got[i], got[i-1])
		}
	}
	for i, step := range map[int]float64{0: 1, 5: 2, 6: 3, 7: 4} {
		if got[i].Progress != step || got[i].Total != 4 {
			t.Errorf("report %d: %+v, want %g/4", i, got[i], step)
		}
	}
	for _, r := range got[1:5] {
		if r.Progress <= 1 || r.Progress >= 2 || r.Total != 4 {
			t.Errorf("a tool's line between steps 1 and 2 of 4: %+v", r)
		}
	}
}

// The go-sdk client that sends a progress token with execute_code gets
// notifications/progress before the result: from sbx.progress in Python
// and in JavaScript, and from a tool's log and progress lines, with
// rising values; and, with stream_output, what the code prints as log
// notifications. A call without a token gets no progress.
func TestLiveProgressGoClient(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", "2025-11-25"} {
		name := protocol
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{
				Settings: with(func(s *Settings) { s.StreamOutput = true }),
				Config:   host.Config{Context: map[string]any{"work": work{}}},
			})
			var (
				mu       sync.Mutex
				progress []liveReport
				logs     []string
				tokens   []any
			)
			c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					p := req.Params
					mu.Lock()
					progress = append(progress, liveReport{p.Progress, p.Total, p.Message})
					tokens = append(tokens, p.ProgressToken)
					mu.Unlock()
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					mu.Lock()
					logs = append(logs, fmt.Sprintf("log %s: %v", req.Params.Logger, req.Params.Data))
					mu.Unlock()
				},
			})
			cs := connectInMemory(t, srv, c, protocol)
			if protocol != "" {
				if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			params := &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": liveCode}}
			params.SetProgressToken("tok-1")
			res, err := cs.CallTool(t.Context(), params)
			mu.Lock()
			// What arrived before the result.
			gotProgress, gotLogs, gotTokens := slices.Clone(progress), slices.Clone(logs), slices.Clone(tokens)
			progress, logs, tokens = nil, nil, nil
			mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if r := decode(t, res); r.Result != "done" {
				t.Fatalf("result %+v", r)
			}
			checkLive(t, gotProgress)
			for _, tok := range gotTokens {
				if tok != "tok-1" {
					t.Errorf("progress token %v", tok)
				}
			}
			if protocol != "" && !slices.Equal(gotLogs, []string{"log stdout: starting\n"}) {
				t.Errorf("log notifications before the result: %q", gotLogs)
			}

			// No token: no progress.
			r := run(t, cs, liveCode)
			if r.Result != "done" {
				t.Fatalf("result %+v", r)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(progress) != 0 {
				t.Errorf("progress without a token: %+v", progress)
			}
		})
	}
}

// describe_tools = "signatures" puts the tools' Python signatures into
// execute_code's description and the guide; "none" leaves them out.
func TestDescribeToolsSignatures(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"signatures", "none"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{Config: host.Config{Context: map[string]any{"calc": calc{}}, DescribeTools: mode}})
			c, _ := newClient(nil)
			cs := connectInMemory(t, srv, c, "2025-11-25")
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			desc := tools.Tools[0].Description
			guide := cs.InitializeResult().Instructions
			sig := "    def add(a: int, b: int) -> int"
			if mode == "none" {
				if desc != ToolDescription || strings.Contains(guide, sig) {
					t.Errorf("describe_tools = none: description %q", desc)
				}
				return
			}
			if !strings.HasPrefix(desc, ToolDescription) || !strings.Contains(desc, "class calc:\n"+sig) {
				t.Errorf("description:\n%s", desc)
			}
			// The guide says where they are, and does not repeat them.
			if strings.Contains(guide, sig) || !strings.Contains(guide, "signatures are in the description of execute_code") {
				t.Errorf("guide:\n%s", guide)
			}
		})
	}
}

// A client of the sessionless protocol may list the tools before anything
// else (no initialize, no discover): with describe_tools = "signatures"
// the sandbox starts for it and execute_code's description carries the
// signatures all the same; with "none" nothing starts.
func TestDescribeToolsListedFirst(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"signatures", "none"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{Config: host.Config{Context: map[string]any{"calc": calc{}}, DescribeTools: mode}})
			st, ct := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx, st) }()
			conn, err := ct.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				conn.Close()
				cancel()
				<-done
			})
			call := func(id int, method, params string) json.RawMessage {
				t.Helper()
				msg, err := jsonrpc.DecodeMessage([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)))
				if err != nil {
					t.Fatal(err)
				}
				if err := conn.Write(t.Context(), msg); err != nil {
					t.Fatal(err)
				}
				for {
					m, err := conn.Read(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					if r, ok := m.(*jsonrpc.Response); ok {
						if r.Error != nil {
							t.Fatalf("%s: %v", method, r.Error)
						}
						return r.Result
					}
				}
			}
			const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			var list mcp.ListToolsResult
			if err := json.Unmarshal(call(1, "tools/list", "{"+meta+"}"), &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != 1 {
				t.Fatalf("tools: %+v", list.Tools)
			}
			desc := list.Tools[0].Description
			sig := "class calc:\n    def add(a: int, b: int) -> int"
			if mode == "none" {
				if desc != ToolDescription || srv.SessionCount() != 0 {
					t.Errorf("describe_tools = none: %d sandboxes started, description %q", srv.SessionCount(), desc)
				}
				return
			}
			if !strings.HasPrefix(desc, ToolDescription) || !strings.Contains(desc, sig) {
				t.Errorf("description of the first tools/list:\n%s", desc)
			}
			// The session goes on with the sandbox the list started.
			res := call(2, "tools/call", `{"name":"execute_code","arguments":{"code":"calc.add(a=2, b=3)"},`+meta+`}`)
			if !strings.Contains(string(res), `{\"result\":5}`) || srv.SessionCount() != 1 {
				t.Errorf("execute_code after the list: %s (%d sandboxes)", res, srv.SessionCount())
			}
		})
	}
}
