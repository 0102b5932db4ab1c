// Package host is Parselbox as a Go library: a Python sandbox whose tools
// run on the host. Start one from a Config with New, run code with
// Sandbox.Execute, read and write its files with ReadFile and WriteFile, give
// an agent Prompt() as its guide, and Close it.
//
//	sb, err := host.New(ctx, host.Config{
//		Memory:  1024,
//		Context: map[string]any{"calc": calc{}}, // Go methods become tools
//	})
//	if err != nil {
//		return err // a *ConfigError for a configuration it cannot run
//	}
//	defer sb.Close()
//	r, err := sb.Execute(ctx, "calc.add(a=1, b=2)")
//	// r.Output is 3; r.Error is set when the code raised
//
// Config.Validate is the one check of a configuration (New calls it);
// package host/config loads one from HCL, YAML or JSON with every problem
// placed at its file and line. Package host/mcpserver serves the sandbox as
// an MCP server, and cmd/parselbox is the command around both.
//
// # One round trip
//
// execute_code("calc.add(a=1, b=2)") from an MCP client, to a bridge and
// back. Three processes (the host, Deno, a bridge plugin), and one encoding
// per hop:
//
//	MCP client
//	  │ JSON-RPC over stdio, or streamable HTTP (one application/json reply)
//	  ▼
//	host/mcpserver    session.executeCode: parse {"code"}, one execution at
//	  │               a time per session, approvals (--elicit)
//	  ▼
//	host              Sandbox.Execute: pre/post-execute hooks, the timeout
//	  │
//	  ▼
//	host/sandbox      the process supervisor: an `exec` request as one line
//	  │               of NDJSON on Deno's stdin
//	  ▼
//	Deno: runner.ts + Pyodide runs the Python; calc.add(...) suspends it
//	  │               (JSPI) and writes a `call` request on stdout
//	  ▼
//	host/sandbox      reads the line, hands the call to its handler
//	  │
//	  ▼
//	host/router       pre/post-tool-call hooks, the namespace, tasks; every
//	  │               byte on the way back is redacted of known secrets here
//	  ▼
//	a bridge          in-process (host/inproc: a Go value's methods), or a
//	                  plugin (host/bridges: go-plugin gRPC, proto/ and
//	                  internal/wire, to a binary built with sdk/)
//
// and back up the same way: the bridge's result (raw JSON, untouched where
// nobody looks inside) → the router → a reply line on Deno's stdin →
// Python gets 3 and the execution ends → the `exec` reply {output, stdout,
// stderr, error, files, view} → Result → host/mcpserver shapes it
// ({"result": 3}, previews and caps) → one text block → the client.
//
// The sandbox side of each step is described in host/sandbox, the tool side
// in host/router; the bridge protocol in proto/parselbox/bridge/v1.
package host
