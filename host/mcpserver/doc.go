// Package mcpserver is Parselbox's MCP front end: an MCP server named
// "Parselbox" with one tool, execute_code(code), whose code runs in a
// sandbox of the session's own (package host).
//
// The tool's result is one JSON object, sent once, as a single text block
// (execute_code declares no output schema, so no structured content):
// {"result": <value of the last expression>} with an optional "note" (output truncated to its sbx.preview(), or no
// output), "files" (the paths the code wrote), "app" (where the workspace
// is served, with host.Config.Serve) and "view" (a line saying a display()
// view was shown), or {"error": "<traceback>"} with isError set when the
// code raised. With UI on (not Settings.NoUI) execute_code carries
// _meta.ui.resourceUri, the MCP Apps renderer resource (apps.go, package
// host/ui), and a result's view travels to it in the result's _meta
// ("parselbox/view"), never in the text the model reads. The server's instructions are the sandbox's guide text
// (host.Sandbox.Prompt). The files the code writes become resources,
// file:///workspace/..., announced with notifications/resources/list_changed.
//
// With host.Config.DescribeTools "signatures" execute_code's description
// also lists the Python signatures of the sandbox's tools; a tools/list
// that comes before initialize or discover (the sessionless protocol)
// starts the sandbox to know them. A call with a progress token gets
// notifications/progress (live.go) with rising values before its result.
//
// Serve one client over stdio (the sandbox starts when the client
// initializes):
//
//	srv, err := mcpserver.New(mcpserver.Options{Config: cfg, Logger: logger, Version: version})
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	t, restore := mcpserver.Stdio(os.Stdin, os.Stdout) // stdin read through the poller
//	defer restore()
//	return srv.Run(ctx, t)
//
// Settings (the server block of a configuration file, the flags of
// `parselbox`) set the limits: zero turns one off, and a nil Options.Settings
// means DefaultSettings(). A result over Settings.MaxResultMB is an error
// that says so. Serve many clients over streamable HTTP (replies as
// application/json), each MCP session with its own sandbox, taken from a
// pool of sandboxes booted ahead:
//
//	ln, err := net.Listen("tcp", "127.0.0.1:9000")
//	...
//	return srv.RunHTTP(ctx, ln) // http://127.0.0.1:9000/mcp
//
// Over HTTP every request must come without an Origin header or from a
// loopback origin (403 otherwise), carry Settings.AuthToken (16 characters
// or more) as a bearer token when one is set (401, compared in constant
// time), and stay under MaxRequestBytes, chunked or not (413);
// RunHTTP refuses to listen beyond loopback without a token. Idle sessions
// close after Settings.IdleTimeout, and Settings.MaxSessions bounds how many
// are open.
//
// With Settings.Elicit, every tool call the sandbox makes waits for the
// user's approval, asked through MCP elicitation; a refusal is a
// PermissionError in Python. On protocol versions before 2026-07-28 the
// server sends the elicitation request while execute_code is in progress;
// from 2026-07-28 on, where a server may not send requests of its own,
// execute_code returns the approval as an input request and the Python
// execution waits, suspended inside the tool call, until the client calls
// again with the answer (multi round trip). A client that cannot elicit
// gets no approvals asked, and the log says so.
//
// For agent frameworks that run tools themselves, NewTool gives
// execute_code over an existing sandbox, and ServeMCP serves an existing
// sandbox over any go-sdk transport:
//
//	sb, err := host.New(ctx, cfg)
//	...
//	system := sb.Prompt()
//	tool := mcpserver.NewTool(sb, nil)
//	resp, err := tool.Call(ctx, json.RawMessage(`{"code": "1 + 1"}`))
//	// resp.Result is 2
package mcpserver
