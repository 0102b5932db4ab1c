package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// serverModeEnv makes the test binary an MCP server over stdio (see
// testServer) instead of running the tests.
const serverModeEnv = "MCPPROXY_TEST_SERVER"

// blockEnv names a file whose existence makes the test server fail at
// start.
const blockEnv = "MCPPROXY_TEST_BLOCK"

// The test binary doubles as the mcpproxy plugin (when a host, or
// sdktest.Start, starts it with go-plugin's magic cookie) and as an MCP
// server (when the proxy starts it with serverModeEnv set).
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		main()
		return
	}
	if mode := os.Getenv(serverModeEnv); mode != "" {
		if mode == "probe" && os.Getenv(ProbeEnv) != "" {
			os.Exit(0) // what parselbox does when it finds itself launched by the proxy
		}
		if f := os.Getenv(blockEnv); f != "" {
			if _, err := os.Stat(f); err == nil {
				fmt.Fprintln(os.Stderr, "blocked by", f, "env API_KEY="+os.Getenv("API_KEY"))
				os.Exit(1)
			}
		}
		if err := testServer(mode).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		return
	}
	shortenTimings()
	os.Exit(m.Run())
}

func shortenTimings() {
	terminateGrace = 500 * time.Millisecond
	retryInterval = 200 * time.Millisecond
}

// testServer is a go-sdk MCP server with a tool for each behaviour the
// proxy must pass on. mode "parselbox" names it Parselbox.
func testServer(mode string) *mcp.Server {
	name := "gotest"
	if mode == "parselbox" {
		name = ParselboxName
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "v1"}, &mcp.ServerOptions{
		Instructions: "A server for the proxy's tests.",
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	// sub's properties are not in alphabetical order: positional arguments
	// follow the schema's order (sub(10, 3) is 10 - 3).
	s.AddTool(&mcp.Tool{
		Name:         "sub",
		Description:  "Subtracts alpha from zeta.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"number"},"alpha":{"type":"number"}},"required":["zeta","alpha"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := args(req)
		d := a["zeta"].(float64) - a["alpha"].(float64)
		return &mcp.CallToolResult{StructuredContent: map[string]any{"result": d}, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(d)}}}, nil
	})
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "echo.text", Description: "Says the text back.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(args(req)["text"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "json", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(`{"k": [1, 2], "s": "x"}`), nil
	})
	s.AddTool(&mcp.Tool{Name: "number_text", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("42"), nil
	})
	s.AddTool(&mcp.Tool{Name: "nothing", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	s.AddTool(&mcp.Tool{Name: "blocks", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a picture:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1}}},
		}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke: disk full"}}}, nil
	})
	// notify reports progress and logs, then returns at once: the proxy
	// must deliver them all before the result.
	s.AddTool(&mcp.Tool{Name: "notify", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		for i := 1; i <= 3; i++ {
			if tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
			}
		}
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "plain message"})
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "db", Data: map[string]any{"message": "structured", "n": 1}})
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "debug", Data: "too low to be sent"})
		return text("done"), nil
	})
	s.AddTool(&mcp.Tool{Name: "grow", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddTool(&mcp.Tool{Name: "grown", Description: "Added at run time.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("new"), nil
		})
		s.RemoveTools("json")
		return text("grew"), nil
	})
	s.AddTool(&mcp.Tool{Name: "env", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, ok := os.LookupEnv(fmt.Sprint(args(req)["name"]))
			if !ok {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"result": nil}}, nil
			}
			return text(v), nil
		})
	// leak says back what a careless server might: its API_KEY, its
	// arguments and, over HTTP, the request's URL and credential headers;
	// in its result, a log and a progress notification and (over stdio) on
	// stderr, and with "fail" in an error.
	s.AddTool(&mcp.Tool{Name: "leak", InputSchema: json.RawMessage(`{"type":"object","properties":{"fail":{"type":"boolean"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			echo := "env API_KEY=" + os.Getenv("API_KEY") + " args=" + strings.Join(os.Args[1:], " ")
			if req.Extra != nil && req.Extra.Header != nil {
				h := req.Extra.Header
				echo = "url=" + h.Get(echoURLHeader) + " authorization=" + h.Get("Authorization") + " x-api-key=" + h.Get("X-Api-Key")
			} else {
				fmt.Fprintln(os.Stderr, echo)
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: echo})
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Message: echo})
			}
			if args(req)["fail"] == true {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused: " + echo}}}, nil
			}
			return text(echo), nil
		})
	s.AddTool(&mcp.Tool{Name: "pid", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"result": os.Getpid()}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "die", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "dying on purpose")
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return s
}

// goServer is the configuration of a stdio server that runs testServer.
func goServer(t *testing.T, mode string) map[string]any {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{
		"name":    "go-" + mode,
		"command": exe,
		"env":     map[string]string{serverModeEnv: mode, "GORACE": "atexit_sleep_ms=0"},
	}
}

// startProxy serves a proxy for the server cfg in-process, configured.
func startProxy(t *testing.T, cfg map[string]any) (*sdktest.Client, *proxy) {
	t.Helper()
	c, p, err := configureProxy(t, cfg)
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return c, p
}

// configureProxy is startProxy returning Configure's error (through the
// gRPC harness, as the host gets it).
func configureProxy(t *testing.T, cfg map[string]any) (*sdktest.Client, *proxy, error) {
	t.Helper()
	p := newProxy(sdktest.Logger(t))
	c := sdktest.NewHarness(t, p)
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.shutdown(context.Background()) })
	return c, p, c.Configure(t.Context(), &sdk.ConfigureRequest{Config: raw})
}

// callResult calls a tool and returns its value, or fails the test.
func callValue(t *testing.T, c sdk.BridgeServer, name, args string) any {
	t.Helper()
	res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%s) failed: %+v", name, args, res.Error)
	}
	var v any
	if err := json.Unmarshal(res.Content, &v); err != nil {
		t.Fatalf("%s(%s): result %s: %v", name, args, res.Content, err)
	}
	return v
}

// callError calls a tool that must fail, and returns how.
func callError(t *testing.T, c sdk.BridgeServer, name, args string) *sdk.ToolError {
	t.Helper()
	res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	if !res.IsError || res.Error == nil {
		t.Fatalf("%s(%s) = %s, want an error", name, args, res.Content)
	}
	return res.Error
}

// toolNames lists the tools a bridge describes.
func toolNames(t *testing.T, c sdk.BridgeServer) []string {
	t.Helper()
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range d.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// findTool returns the description of a tool.
func findTool(t *testing.T, c sdk.BridgeServer, name string) sdk.ToolInfo {
	t.Helper()
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range d.Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q in %v", name, toolNames(t, c))
	return sdk.ToolInfo{}
}

// waitFor polls cond until it holds or 2 minutes have passed (it ends with
// the event; the deadline is for a loaded machine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// fixture returns the path of a file under tests/fixtures/mcp/node_modules,
// and the node binary. Without them the test is skipped, or fails when
// PARSELBOX_REQUIRE_RUNTIME is set (make test sets it).
func fixture(t *testing.T, rel string) (node, path string) {
	t.Helper()
	root := testenv.ModuleRoot(t)
	dir := filepath.Join(root, "tests", "fixtures", "mcp")
	path = filepath.Join(dir, "node_modules", filepath.FromSlash(rel))
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv(testenv.RequireEnv) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(path); err != nil {
		missing("MCP test servers missing (run: cd tests/fixtures/mcp && npm ci --ignore-scripts --no-audit --no-fund): %v", err)
	}
	node, err := lookPathEnv("node")
	if err != nil {
		missing("node not found (the npm MCP servers need Node.js): %v", err)
	}
	return node, path
}

func lookPathEnv(name string) (string, error) {
	if p := sdk.LookPath(name, os.Getenv("PATH")); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s not in PATH", name)
}

func hasLine(lines []string, substr string) bool {
	for _, l := range lines {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}
