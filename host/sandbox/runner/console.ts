// console.ts: stdout is the protocol, so every console.* call (Pyodide's,
// a library's, or js.console.* from Python) writes plain text to stderr.
// The host logs stderr as guest output: escaped, at one fixed level,
// rate-limited. The runner's own diagnostics never go here; they are `log`
// notifications on the protocol channel (see channel.ts), which the guest
// cannot forge.

const encoder = new TextEncoder();

function write(args: unknown[]): void {
  const text = args.map((a) => (typeof a === "string" ? a : Deno.inspect(a))).join(" ");
  const bytes = encoder.encode(text.endsWith("\n") ? text : text + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}

for (const name of ["log", "debug", "info", "warn", "error", "trace"] as const) {
  // deno-lint-ignore no-explicit-any
  (console as any)[name] = (...args: unknown[]) => write(args);
}
