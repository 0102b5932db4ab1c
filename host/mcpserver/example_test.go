package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// Serve one MCP client over stdio; logs go to stderr, since stdout carries
// the protocol.
func ExampleServer_Run() {
	logger := hclog.New(&hclog.LoggerOptions{Output: os.Stderr})
	srv, err := mcpserver.New(mcpserver.Options{
		Config:  host.Config{OutputDir: "out"},
		Logger:  logger,
		Version: "1.0.0",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// Serve many clients over streamable HTTP, each with its own sandbox.
func ExampleServer_RunHTTP() {
	settings := mcpserver.DefaultSettings()
	settings.AuthToken = os.Getenv(mcpserver.AuthTokenEnv) // 16 characters or more
	settings.Elicit = true
	srv, err := mcpserver.New(mcpserver.Options{Settings: &settings})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:9000")
	if err != nil {
		log.Fatal(err)
	}
	// Serves http://127.0.0.1:9000/mcp until the context is done.
	if err := srv.RunHTTP(context.Background(), ln); err != nil {
		log.Fatal(err)
	}
}

// Give an agent framework execute_code over a sandbox it owns.
func ExampleNewTool() {
	ctx := context.Background()
	sb, err := host.New(ctx, host.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()
	system := sb.Prompt() // for the system prompt
	tool := mcpserver.NewTool(sb, nil)
	_ = system
	// The framework hands tool.Name, tool.Description and tool.InputSchema
	// to the model, and calls back with the model's arguments:
	resp, err := tool.Call(ctx, json.RawMessage(`{"code": "x = 6 * 7\nx"}`))
	if err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(resp)
	fmt.Println(string(out)) // {"result":42}
}
