// Package sandbox supervises the sandbox process: one Deno process running
// Pyodide (CPython in WebAssembly), with the narrowest Deno permissions
// that work, restarted when it dies. It is the inner half of host.Sandbox,
// which adds the workspace, the bridges and the hooks.
//
//	sb, err := sandbox.Start(ctx, sandbox.Options{Runtime: rt, Workspace: dir, Handler: router})
//	if err != nil { ... }
//	defer sb.Close()
//	r, err := sb.Exec(ctx, "x = 1 + 1\nx", time.Minute) // r.Output is `2`
//
// # The round trip
//
// An execution, and a tool call made from it, cross these files (host →
// runner → Python → runner → host → router → bridge, and back):
//
//	host.Sandbox.Execute                            host/host.go
//	└ Supervisor.Exec                               supervisor.go
//	  └ process.call("exec") ─ one line on stdin ─▶ process.go
//	    runner: Channel.read, dispatch("exec")      runner/channel.ts
//	    └ exec feature: watchdog.begin, run(code)   runner/features/exec.ts, watchdog.ts
//	      └ Python: _parselbox.execute.run         runner/python/_parselbox/execute.py
//	        └ the code calls ns.tool(a=1)           runner/python/_parselbox/tools.py
//	          └ host_call: JSON of the parameters   runner/python/_parselbox/hostcall.py
//	            └ _pbx_js.request: parsed, a line   runner/features/tools.ts, channel.ts
//	◀─ {"id":n,"method":"call","params":...} on stdout
//	process.dispatch → Handler.ServeSandbox         process.go
//	└ router.Router: hooks, the bridge's CallTool   host/router/router.go, call.go
//	  └ bridge: in-process value or plugin (gRPC)   host/inproc, host/bridges
//	└ the result (json.RawMessage, as it is) ─ {"id":n,"result":...} on stdin ─▶
//	    runner: settles the request; the value is converted to Python once
//	    (runner/convert.ts) and run_sync returns it to the code
//	  └ run() returns (output, error) as values; the runner builds
//	    {output, stdout, stderr, error, files} (files from hostfs.ts)
//	◀─ {"id":n,"result":{...}} on stdout
//	process.dispatch → decodeResult (output aliases the line),
//	checkFiles (reported files exist under the granted roots)  protocol.go, supervisor.go
//
// # The protocol
//
// Newline-delimited JSON on the Deno process's stdin and stdout: requests
// {id, method, params}, responses {id, result} or {id, error: {type,
// message, traceback?}}, notifications {method, params}. Host → runner:
// init (the first line), exec {code, timeout}, api {request, timeout} (a
// request of the served app, run beside an execution: features/api.ts),
// info, warm (do now the setup deferred past boot: Supervisor.Warm),
// probe {n} (n + 1, run as an execution's code is: does the interpreter
// still run code? Supervisor.healthy), shutdown, and the responses to the runner's requests. Runner → host: ready, call, dir,
// help and task requests, and the notifications cancel (it gave up on some
// of its requests), log (its own diagnostics, at the level it chose),
// fatal (the interpreter failed fatally; it exits), runaway (code did not
// stop when interrupted; the host kills the process). Interrupts travel on
// a pipe of their own (the child's fd 3, read by the runner's watchdog
// thread), {method: "interrupt", params: {id}}, because Python may keep
// the runner's main thread busy.
//
// Every line the runner writes starts with the channel key: 128 random
// bits, in hex, that the host makes for each process and sends in init.
// Guest JS runs in the runner's process and can write to its stdout too
// (node:fs on file descriptor 1, a Worker of its own); it never learns the
// key (runner/channel.ts says how), and a line without the key is logged
// as guest text under "sandbox.guest", never read as a message.
//
// One encoding per hop, and nothing trusted that the guest could write:
// every line the runner writes is JSON.stringify of a structure it built
// from parsed values (Python's values are converted, never written as
// text); every line is parsed, never matched as text; the host decodes a
// line strictly (decodeMessage: only a message's members, once each, of
// their types) and once (raw parts alias the line); a tool's
// json.RawMessage result goes on the line as it is. One message is at most
// Options.MaxMessageBytes either way, one execution's result at most
// Options.MaxResultBytes: over a limit, the call or the execution fails
// with an error naming the option.
//
// What the guest writes to stderr (console.* from JS it reaches, Deno's
// own messages), and the lines of stdout without the channel key, are
// logged under "sandbox.guest" at one level, escaped and rate-limited; the runner's own diagnostics come as log notifications.
//
// # The runner
//
// runner/main.ts boots: the channel (channel.ts), the watchdog
// (watchdog.ts, a worker), Pyodide from the memory snapshot (python.ts),
// the host directories through HostFS (hostfs.ts, the one place that
// enforces confinement, masked modes and the quota; emfs.ts mounts it for
// Python), the features (features/*.ts, each a file that registers
// itself: protocol methods, JS modules for Python, hooks), and the
// lockdown (lockdown.ts: the runtime's files revoked, no host path in
// stacks or configuration, no NODEFS). The Python half is the package
// runner/python/_parselbox, one module per concern, imported before the
// snapshot is taken. A new feature (bash, js, WASI, display) adds a file in
// features/ and, if it has a Python side, a module in _parselbox. bash()
// is features/bash.ts, just-bash over bashfs.ts (the HostFS again);
// WebAssembly is wasm.ts (the loader, for every caller) and wasi.ts
// (preview1 over the HostFS), reached through features/wasm.ts.
//
// # Density
//
// Many sandboxes share a host's cores and memory. python.ts restores the
// snapshot without writing its zero pages (half of it), so they stay
// unallocated; Deno runs with --no-wasm-deopt (CPython's indirect calls
// otherwise made V8 deoptimize and recompile after every execution), and
// once a sandbox is ready its V8 helper threads (background compilation,
// concurrent GC) run at nice 19 (priority_linux.go), so that an execution
// does not wait behind the other sandboxes' background work. The README's
// "Running many hosts" has the measures.
//
// # Between executions
//
// What an execution leaves scheduled (asyncio tasks and callbacks, JS
// timers) may run between executions, held to the limits: a callback that
// blocks the sandbox longer than Options.IdleTimeout is interrupted, and
// everything the guest left running is then cancelled; one that does not
// stop within Options.Grace is killed with the process, and the next
// execution runs on the restarted sandbox and says so in Result.Note. An
// interrupted (timed out) execution cancels what the guest left running
// too, so that left-over work cannot swamp the next execution.
// Tool tasks (ns.tool.task()) run on the host and outlive executions.
package sandbox
