// Package router routes the sandbox's tool calls to bridges, and is the one
// place where what bridges send back is cleaned of their secrets.
//
// A call from Python, ns.tool(1, b=2) or ns.tool.task(...), arrives as the
// sandbox's "call" request (Router implements sandbox.Handler):
//
//	sandbox ──call {path, args, kwargs, task_id}──▶ Router.ServeSandbox
//	  → tool: the namespace's catalog (what its bridge described) resolves
//	    the Python path ("get_user" for "get-user")
//	  → bindArgs: positional arguments onto ToolInfo.Params (the rest onto a
//	    variadic last one), keyword arguments merged, into one compact JSON
//	    object written in one pass; Python bytes become base64 strings
//	  → the namespace's Policy: a tool it refuses is not in the catalog
//	    (discovery never shows it) and a call by path is a PermissionError
//	    naming the rule; the running Execution's budget (max_tool_calls)
//	  → hooks (PreToolCall may refuse: PermissionError)
//	  → the bridge's CallTool (an sdk.Bridge in-process, or the plugin
//	    manager's proxy of a plugin process); a task's log lines and progress
//	    go to its log file, which task.tail() reads
//	  → redaction, then hooks (PostToolCall)
//	sandbox ◀── the result as the bridge encoded it (json.RawMessage), or
//	            {type, message}: the Python exception of the error's code
//
// # Redaction
//
// A bridge whose secrets the host knows implements Secrets (the plugin
// manager's bridges do: the values of the variables passed to the plugin,
// an MCP server's env and headers, and whatever the plugin reports from
// Configure). Everything that bridge sends toward the sandbox passes its
// sdk.Redactor here, whoever asked (the sandbox, or another bridge calling
// back into the host): results, bytes inside them (decoded and redacted as
// bytes), error messages, log lines and progress (so task logs), and its
// description, schemas and tool docs (help, sbx.search, sbx.inspect). The
// secrets are found raw and in their common encodings (see sdk.Redactor).
// Bridges may redact too; this pass is the one the host relies on.
//
// The built-in namespace sbx (help, info, search, inspect, preview) is an
// sdk.Bridge like any other; its calls are discovery, not tool calls, and
// hooks do not see them.
package router
