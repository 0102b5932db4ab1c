package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

// liveCode reports progress and prints while it runs.
const liveCode = `import time
print("starting")
for i in range(1, 4):
    sbx.progress(i, 3, f"step {i}")
    time.sleep(0.12)
"done"`

// The go-sdk client that sends a progress token with execute_code gets
// notifications/progress from sbx.progress before the result, and, with
// stream_output, what the code prints as log notifications; a call
// without a token gets no progress.
func TestLiveProgressGoClient(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"", "2025-11-25"} {
		name := protocol
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, Options{Settings: with(func(s *Settings) { s.StreamOutput = true })})
			var (
				mu  sync.Mutex
				got []string
			)
			add := func(s string) {
				mu.Lock()
				got = append(got, s)
				mu.Unlock()
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					p := req.Params
					add(fmt.Sprintf("progress %v %g/%g %s", p.ProgressToken, p.Progress, p.Total, p.Message))
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					add(fmt.Sprintf("log %s: %v", req.Params.Logger, req.Params.Data))
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
			before := slices.Clone(got) // what arrived before the result
			got = nil
			mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if r := decode(t, res); r.Result != "done" {
				t.Fatalf("result %+v", r)
			}
			want := []string{"progress tok-1 1/3 step 1", "progress tok-1 2/3 step 2", "progress tok-1 3/3 step 3"}
			var progress, logs []string
			for _, g := range before {
				if strings.HasPrefix(g, "progress") {
					progress = append(progress, g)
				} else {
					logs = append(logs, g)
				}
			}
			if !slices.Equal(progress, want) {
				t.Errorf("progress before the result:\n%q\nwant\n%q", progress, want)
			}
			if protocol != "" && !slices.Equal(logs, []string{"log stdout: starting\n"}) {
				t.Errorf("log notifications before the result: %q", logs)
			}

			// No token: no progress.
			r := run(t, cs, liveCode)
			if r.Result != "done" {
				t.Fatalf("result %+v", r)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, g := range got {
				if strings.HasPrefix(g, "progress") {
					t.Errorf("progress without a token: %q", g)
				}
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
