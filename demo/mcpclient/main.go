// Command mcpclient is the MCP part of `make demo`: it starts bin/parselbox
// as an MCP server over stdio, as an MCP client (Claude, Cursor, ...) would,
// and shows a short session.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: mcpclient PARSELBOX [ARGS...]")
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "demo-client", Version: "v0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(os.Args[1], os.Args[2:]...)}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	init := session.InitializeResult()
	fmt.Printf("server: %s; instructions begin: %q\n", init.ServerInfo.Name, firstLine(init.Instructions))
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Printf("tool: %s: %s\n", t.Name, t.Description)
	}
	for _, code := range []string{
		"total = sum(range(10))\nopen('report.txt', 'w').write(f'total={total}')",
		"total * 2",
		"1/0",
	} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nexecute_code(%q)\n  isError=%v  %s\n", code, res.IsError, text(res))
	}
	resources, err := session.ListResources(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range resources.Resources {
		got, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nresource %s (%s): %q\n", r.URI, r.MIMEType, got.Contents[0].Text)
	}
}

func text(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			s := t.Text
			if len(s) > 200 {
				s = s[:200] + "..."
			}
			return s
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
