package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/procgroup"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// everythingJS is server-everything's entry point, pinned in
// tests/fixtures/mcp/package.json.
const everythingJS = "@modelcontextprotocol/server-everything/dist/index.js"

// TestEverything runs the reference MCP server from the npm registry over
// each of its transports.
func TestEverything(t *testing.T) {
	t.Parallel()
	node, index := fixture(t, everythingJS)
	for _, transport := range []string{"stdio", "streamableHttp", "sse"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			var cfg map[string]any
			switch transport {
			case "stdio":
				cfg = map[string]any{"name": "everything", "command": node, "args": []string{index, "stdio"}}
			case "streamableHttp":
				cfg = map[string]any{"name": "everything", "type": "http", "url": startEverything(t, node, index, transport) + "/mcp"}
			case "sse":
				cfg = map[string]any{"name": "everything", "type": "sse", "url": startEverything(t, node, index, transport) + "/sse"}
			}
			c, _ := startProxy(t, cfg)

			names := toolNames(t, c)
			for _, want := range []string{"echo", "get-sum", "get-structured-content", "get-tiny-image", "trigger-long-running-operation"} {
				if !slices.Contains(names, want) {
					t.Fatalf("tool %q missing from %v", want, names)
				}
			}
			diff(t, "get-sum's parameters", []string{"a", "b"}, findTool(t, c, "get-sum").Params)
			diff(t, "echo's description", "Echoes back the input string", findTool(t, c, "echo").Description)

			diff(t, "echo", "Echo: hi", callValue(t, c, "echo", `{"message": "hi"}`))
			diff(t, "get-sum", "The sum of 2 and 3 is 5.", callValue(t, c, "get-sum", `{"a": 2, "b": 3}`))
			diff(t, "get-structured-content", map[string]any{"temperature": 36.0, "conditions": "Light rain / drizzle", "humidity": 82.0},
				callValue(t, c, "get-structured-content", `{"location": "Chicago"}`))
			image := callValue(t, c, "get-tiny-image", `{}`).([]any)
			if len(image) != 3 || image[1].(map[string]any)["type"] != "image" || image[1].(map[string]any)["data"].(map[string]any)["__b64__"] == "" {
				t.Errorf("get-tiny-image: %v", image)
			}
			if e := callError(t, c, "echo", `{}`); e.Code != sdk.CodeInvalidArgument {
				t.Errorf("echo without its argument: %+v", e)
			}

			var rec sdktest.Recorder
			res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "trigger-long-running-operation",
				Arguments: json.RawMessage(`{"duration": 0.3, "steps": 3}`), TaskID: "t", Events: &rec})
			if err != nil || res.IsError {
				t.Fatalf("long running operation: %v %+v", err, res)
			}
			diff(t, "progress", []sdktest.Progress{{Progress: 1, Total: 3}, {Progress: 2, Total: 3}, {Progress: 3, Total: 3}}, rec.ProgressReports())

			if transport == "stdio" {
				env := callValue(t, c, "get-env", `{}`).(map[string]any) // JSON text: a dict
				if env[ProbeEnv] != "1" || env["HOME"] != nil || !strings.HasPrefix(fmt.Sprint(env["PATH"]), node[:strings.LastIndex(node, "/")]+":") {
					t.Errorf("server environment: %v", env)
				}
			}
		})
	}
}

// startEverything runs server-everything's HTTP transport on a free port
// of the loopback interface and returns its base URL.
func startEverything(t *testing.T, node, index, transport string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(node, index, transport)
	cmd.Env = []string{"PORT=" + port, "PATH=" + os.Getenv("PATH")}
	procgroup.Prepare(cmd)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return "http://" + addr
		}
		select {
		case <-exited:
			t.Fatalf("server-everything %s exited: %s", transport, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s", transport, addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
