// Command parselbox-bridge-mcpproxy is the bridge that makes an MCP server
// a namespace of the Python sandbox: each of the server's tools is a
// method, with the server's description and input and output schemas.
//
// The host starts one mcpproxy per MCP server of its configuration (an
// mcp.json named by `--mcp FILE` or `mcp = "FILE"`, or `mcp_server "NAME"
// {}` blocks), with the server's entry as the bridge's configuration:
//
//	{"name": "everything", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"DEBUG": "1"}}
//	{"name": "remote", "type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
//
// type is "stdio" (the default with a command), "http" (MCP's streamable
// HTTP, the default with a url) or "sse" (MCP's older HTTP+SSE transport).
// In Python:
//
//	everything.echo(message="hi")        # 'Echo: hi'
//	everything.get_sum(2, 3)             # positional: the schema's property order
//	t = everything.trigger_long_running_operation.task(duration=5, steps=5)
//	t.tail(2)                            # '[3/5] (60%)\n[4/5] (80%)'
//
// # Tools
//
// A tool keeps its name, except that ".", spaces and control characters
// become "_" (a dot would nest a namespace); the sandbox then writes any
// character that cannot be in an identifier as "_" (get-sum is get_sum). Of
// two tools that end up with the same Python name, the first is kept. The
// input schema is passed on as the server wrote it, so that positional
// arguments follow the order of its "properties" (the MCP client decodes
// schemas into maps, which lose that order: the proxy reads the raw
// tools/list result alongside it). Required arguments are checked before
// the call (ValueError); the server checks the rest.
//
// When the server sends tools/list_changed, the proxy lists the tools
// again and adds and removes its own; the host describes the bridge again
// when a call misses a tool or its catalog is older than 2 s.
//
// # Results
//
//   - isError: RuntimeError with the text of the result's text blocks;
//   - structuredContent: that value as a Python value, except that
//     {"result": x} is x (objects come back with their keys sorted);
//   - no content: None;
//   - one text block: the text as a str; but text that is a JSON object or
//     array is that dict or list (many servers return JSON as text), while
//     text that looks like a number or a boolean stays a str;
//   - anything else (several blocks, images, audio, resources): a list of
//     the blocks as MCP writes them, e.g. {"type": "text", "text": ...},
//     {"type": "image", "mimeType": "image/png", "data": b"..."},
//     {"type": "resource", "resource": {"uri": ..., "text": ...}} or
//     {"type": "resource_link", "uri": ..., "name": ...}, with image and
//     audio data and resource blobs as bytes.
//
// Protocol errors: invalid params (-32602) is ValueError, an unknown method
// AttributeError, others RuntimeError. A cancelled call (task.cancel(), a
// timeout) is cancelled on the server too (notifications/cancelled).
//
// # Progress and logs
//
// A task call (ns.tool.task()) sends a progress token; the server's
// progress notifications become lines of the task's log,
// "[p/total] (pct%) message" ("progress: p message" without a total). The
// server's log notifications at level info and above become "[level]
// message" ("[level] logger: message"), where message is the data when it
// is a string, its "message" or "msg" field, or the data as JSON. MCP's log
// notifications belong to the session, not to a call: each goes to the log
// of every task running on that server at the time. Notifications that
// the server sent before a task's result are in the log when the task is
// done (the client hands the result over before it handles the
// notifications queued ahead of it; the proxy waits for them, up to 1 s).
//
// # Environment, lifetime, failures
//
// The proxy's process gets none of the host's environment, and a stdio
// server gets exactly: PATH (sdk.DefaultPath, with the directory of an
// absolute command first; or the entry's own PATH), the entry's env, and
// PARSELBOX_MCP_PROBE=1. A command without a slash is looked up in that
// PATH. A stdio server runs in the proxy's process group with Pdeathsig,
// so it dies with the bridge; it is stopped by closing its stdin, then
// SIGTERM, then SIGKILL.
//
// A server that cannot be reached when the bridge starts does not fail the
// host: the namespace has no tools, its description (help(ns)) says why,
// the reason is logged, and the host's discovery tries again in the
// background at most every 30 s. A server that dies fails the call in
// flight with ConnectionError naming the server, how it ended and the last
// lines of its stderr; the next call starts it again (an HTTP server: a new
// session). While it cannot be started, its tools stay and their calls
// fail with ConnectionError saying why.
//
// # Credentials
//
// help(ns) and error messages show the server's entry only as its
// transport and, for stdio, the command's base name ("stdio: npx": no
// args, no env), for http and sse the URL's scheme and host only
// ("http: https://example.com": some services put the credential in the
// path, as https://mcp.zapier.com/api/mcp/s/KEY/mcp). The URLs in the proxy's messages
// about a failed connection (net/http quotes the URL of a failed request,
// query and all) are shortened the same way; those in what the server
// says are not. The entry's
// credentials are redacted (replaced by [REDACTED]) from every result,
// error message, task log line and progress message, from the help text
// (the server's instructions, its tools' descriptions, and why it is down,
// which may quote its stderr) and from the server's stderr that the bridge
// logs. They are: the values of headers whose names suggest a credential
// (sdk.SecretName: the name contains auth, token, key, secret, session,
// cookie, password, passwd, credential or signature), and their part
// after a scheme such as "Bearer " (of a cookie header, each cookie's
// value); the values of env variables with such
// names; and the URL's password, the Basic credential that Go sends for
// its user:password, and its query values with such names. Values shorter
// than 4 characters are not redacted. The bridge reports them to the host
// from Configure; the host removes them too (with every value of the
// entry's env and headers, whatever their names), from everything the
// server's namespace sends to the sandbox, in their common encodings.
//
// Args are not treated as secrets: they are not shown, but a server that
// says them back (in a result, or on stderr in an error message) is not
// redacted, since args are mostly ordinary values. Give a stdio server its
// credentials in env, under a name such as API_KEY or GITHUB_TOKEN, not
// as "--api-key=..." in args:
//
//	{"name": "gh", "command": "github-mcp-server", "args": ["stdio"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "..."}}
//
// # Loopback
//
// An mcp.json often both launches Parselbox and lists servers; when
// Parselbox reads that file it would find itself among them. Two guards
// stop that: every stdio server gets PARSELBOX_MCP_PROBE=1, and a
// parselbox process started with it exits at once with status 0, which the
// proxy takes as "this is Parselbox" (any server that exits 0 before the
// handshake is skipped, never restarted); and a server whose
// serverInfo.name is "Parselbox" (an HTTP Parselbox, say) is disconnected.
// Either way the namespace stays, without tools, and its description and a
// log line say why.
package main
