// Package breakin holds no code: its tests are the break-in suite. Each
// test attacks a real sandbox (the pinned Deno + Pyodide runtime, real
// bridge plugins, a real MCP server on loopback) the way a hostile agent
// would, and asserts on the host side that the attack did not work: files
// of the host stay unread and unchanged, secrets stay out of every answer,
// the channel to the host cannot be forged, limits hold, and the host
// survives whatever the guest does.
//
// The attacks are grouped by what they aim at (files, env, network,
// processes, limits, channel, credentials, the HTTP server); each is a
// subtest with its own name, so that `go test -run 'TestFiles/symlink'`
// replays one. Sandboxes are shared within a group where one attack cannot
// spoil the next, and the groups run in parallel.
//
// The suite is not the only defence test: host/confine's break-in suite
// repeats the worst attacks with Deno's own permissions widened, to show
// that the kernel stops them too.
package breakin
