// runner.ts: the sandbox process. One Pyodide interpreter, driven by the
// Parselbox host over newline-delimited JSON on stdin/stdout.
//
// stdout carries protocol messages only; every console.* call goes to stderr,
// which the host relays to its log. Messages:
//   request      {"id": n, "method": m, "params": p}
//   response     {"id": n, "result": r} | {"id": n, "error": {type, message, traceback?}}
//   notification {"method": m, "params": p}
// Both sides serve requests concurrently: while an exec is pending, the host
// answers the sandbox's calls.
//
// Boot: the host sends `init` (a notification) as the first line. The runner
// loads Pyodide (from the memory snapshot named in init, if any), applies the
// configuration and sends `ready`. With `make_snapshot`, it instead runs the
// bootstrap, writes the snapshot to the given path and exits.

import { createPyodideModule, loadPyodide } from "./deps.ts";

// Keep stdout for the protocol: whatever a library logs goes to stderr.
const writeErr = (level: string, args: unknown[]) => {
  const text = args.map((a) => (typeof a === "string" ? a : Deno.inspect(a))).join(" ");
  for (const line of text.split("\n")) {
    Deno.stderr.writeSync(encoder.encode(`[${level}] ${line}\n`));
  }
};
const encoder = new TextEncoder();
const decoder = new TextDecoder();
console.log = (...a: unknown[]) => writeErr("debug", a);
console.debug = (...a: unknown[]) => writeErr("debug", a);
console.info = (...a: unknown[]) => writeErr("info", a);
console.warn = (...a: unknown[]) => writeErr("warn", a);
console.error = (...a: unknown[]) => writeErr("error", a);

// deno-lint-ignore no-explicit-any
type Any = any;

interface Mount {
  target: string; // absolute path inside the sandbox, e.g. /mnt/data
  source: string; // host directory
  readonly: boolean;
}

interface InitParams {
  indexURL: string; // Pyodide directory, with a trailing slash
  bootstrap: string; // path of bootstrap.py
  snapshot?: string; // snapshot to load (or, with make_snapshot, to write)
  make_snapshot?: boolean;
  workspace?: string;
  files?: string;
  mounts?: Mount[];
  env?: Record<string, string>;
  globals?: Record<string, unknown>;
  namespaces?: unknown[];
}

function writeAll(bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
}

function send(msg: unknown): void {
  writeAll(encoder.encode(JSON.stringify(msg) + "\n"));
}

// sendRaw writes a message whose parts are already JSON text.
function sendRaw(json: string): void {
  writeAll(encoder.encode(json + "\n"));
}

// ---------------------------------------------------------------------------
// Requests to the host.

let nextID = 1;
// Pending host requests resolve to a JSON envelope for Python:
// {"ok":true,"result":...} or {"ok":false,"error":{...}}.
// A sync request is one that Python waits for in run_sync (a call that looks
// synchronous); an interrupt rejects those, never the awaits of background tasks.
const pendingHost = new Map<
  number,
  { resolve: (s: string) => void; reject: (e: Error) => void; sync: boolean }
>();
// Pending sleeps, rejected on interrupt like host requests.
const pendingSleeps = new Set<{ timer: number; reject: (e: Error) => void }>();

const INTERRUPTED = "PBX_INTERRUPTED";

function hostRequest(method: string, paramsJSON: string, sync = false): Promise<string> {
  const id = nextID++;
  return new Promise((resolve, reject) => {
    pendingHost.set(id, { resolve, reject, sync });
    sendRaw(`{"id":${id},"method":${JSON.stringify(method)},"params":${paramsJSON}}`);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const entry = {
      timer: setTimeout(() => {
        pendingSleeps.delete(entry);
        resolve();
      }, Math.max(0, ms)),
      reject,
    };
    pendingSleeps.add(entry);
  });
}

// rejectWaits fails every wait that Python is suspended in, so that an
// interrupt reaches code that is not executing bytecode. It returns how many.
function rejectWaits(): number {
  const err = new Error(INTERRUPTED);
  let n = pendingSleeps.size;
  const ids: number[] = [];
  for (const [id, p] of pendingHost) {
    if (!p.sync) continue;
    pendingHost.delete(id);
    p.reject(err);
    ids.push(id);
  }
  // The host may stop serving them.
  if (ids.length > 0) send({ method: "cancel", params: { ids } });
  n += ids.length;
  for (const s of pendingSleeps) {
    clearTimeout(s.timer);
    s.reject(err);
  }
  pendingSleeps.clear();
  return n;
}

// ---------------------------------------------------------------------------
// Boot.

const io = new Worker(new URL("./io_worker.ts", import.meta.url), { type: "module" });
const inbox: string[] = [];
let inboxWaiter: ((line: string) => void) | null = null;
let onLine: ((line: string) => void) | null = null;
let stdinClosed = false;
let booted = false;

io.onmessage = (e: MessageEvent) => {
  const d = e.data;
  if (typeof d === "string") {
    if (onLine) onLine(d);
    else if (inboxWaiter) {
      const w = inboxWaiter;
      inboxWaiter = null;
      w(d);
    } else inbox.push(d);
  } else if (d.timeout !== undefined) {
    if (current && current.seq === d.timeout) interruptRun();
  } else if (d.eof) {
    // The host closed our stdin: it is gone or wants us gone. While booting,
    // finish first (building a snapshot needs no more input).
    stdinClosed = true;
    if (booted) Deno.exit(0);
  }
};

function nextLine(): Promise<string> {
  const l = inbox.shift();
  if (l !== undefined) return Promise.resolve(l);
  return new Promise((resolve) => (inboxWaiter = resolve));
}

const bootStart = performance.now();
const initMsg = JSON.parse(await nextLine());
if (initMsg.method !== "init") throw new Error(`expected init, got ${initMsg.method}`);
const init: InitParams = initMsg.params;

let snapshotBytes: Uint8Array | undefined;
if (init.snapshot && !init.make_snapshot) snapshotBytes = Deno.readFileSync(init.snapshot);

// What Python may reach through `import js`: the web platform, never Deno.
const jsglobals: Record<string, unknown> = {};
for (
  const name of [
    "Object", "Array", "Promise", "JSON", "Math", "Date", "Error", "TypeError", "RangeError",
    "Symbol", "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "Number", "String", "Boolean",
    "BigInt", "Reflect", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Uint8Array",
    "Int8Array", "Uint16Array", "Int16Array", "Uint32Array", "Int32Array", "Float32Array",
    "Float64Array", "BigInt64Array", "BigUint64Array", "Uint8ClampedArray", "TextEncoder",
    "TextDecoder", "URL", "URLSearchParams", "fetch", "Request", "Response", "Headers",
    "FormData", "Blob", "File", "AbortController", "AbortSignal", "ReadableStream",
    "WritableStream", "TransformStream", "WebSocket", "EventTarget", "Event", "crypto",
    "performance", "setTimeout", "clearTimeout", "setInterval", "clearInterval",
    "queueMicrotask", "structuredClone", "atob", "btoa", "console", "Intl",
    "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI", "isNaN", "isFinite",
    "parseInt", "parseFloat", "NaN", "Infinity", "undefined",
  ]
) {
  if (name in globalThis) jsglobals[name] = (globalThis as Any)[name];
}

const py: Any = await loadPyodide({
  indexURL: init.indexURL,
  createPyodideModule,
  jsglobals,
  env: { HOME: "/workspace" },
  stdout: (s: string) => console.debug("pyodide:", s),
  stderr: (s: string) => console.warn("pyodide:", s),
  ...(init.make_snapshot ? { _makeSnapshot: true } : {}),
  ...(snapshotBytes ? { _loadSnapshot: snapshotBytes } : {}),
});
snapshotBytes = undefined;

if (init.make_snapshot || !init.snapshot) {
  // The bootstrap defines everything that does not hold a JS reference, so
  // that it can live in the snapshot.
  const src = Deno.readTextFileSync(init.bootstrap);
  py.runPython(
    "import sys, types\n" +
      "_m = types.ModuleType('_parselbox')\n" +
      "_m.__file__ = '<parselbox>'\n" +
      "sys.modules['_parselbox'] = _m\n" +
      "del _m, sys, types",
  );
  const mod = py.pyimport("_parselbox");
  py.runPython(src, { globals: mod.__dict__, filename: "<parselbox>" });
  py.runPython("import _parselbox; _parselbox._prepare_main()");
  mod.destroy();
}

if (init.make_snapshot) {
  const snap: Uint8Array = py.makeMemorySnapshot();
  Deno.writeFileSync(init.snapshot!, snap);
  console.info(`snapshot written: ${snap.length} bytes in ${Math.round(performance.now() - bootStart)} ms`);
  Deno.exit(0);
}

// ---------------------------------------------------------------------------
// Wiring that cannot live in the snapshot: JS functions, mounts, streams.

const FS = py.FS;

// Host file systems fail with Deno's errors, and one without an errno code is
// fatal to Pyodide. Map them: a permission refusal (a write to a read-only
// mount) is EACCES, i.e. PermissionError in Python; anything else EIO.
const EACCES = 2, EINVAL = 28, EIO = 29;
const NODEFS = FS.filesystems.NODEFS;
const convertNodeCode = NODEFS.convertNodeCode.bind(NODEFS);
NODEFS.tryFSOperation = (f: () => unknown) => {
  try {
    return f();
  } catch (e) {
    const err = e as Any;
    if (err instanceof FS.ErrnoError) throw err;
    if (err instanceof Deno.errors.NotCapable || err?.name === "NotCapable") {
      throw new FS.ErrnoError(EACCES);
    }
    if (!err?.code) throw new FS.ErrnoError(EIO);
    if (err.code === "UNKNOWN") throw new FS.ErrnoError(EINVAL);
    throw new FS.ErrnoError(convertNodeCode(err) ?? EIO);
  }
};

// Changed-file tracking, reset at the start of every execution.
const changed = new Set<string>();
const track = (p: string) => {
  if (typeof p === "string") changed.add(p);
};
FS.trackingDelegate.onWriteToFile = track;
FS.trackingDelegate.onMakeDirectory = track;
FS.trackingDelegate.onMovePath = (_from: string, to: string) => track(to);
FS.trackingDelegate.onOpenFile = (p: string, flags: number) => {
  if (flags & 0o100) track(p); // O_CREAT
};

function mkdirs(p: string): void {
  let cur = "";
  for (const part of p.split("/").filter(Boolean)) {
    cur += "/" + part;
    try {
      FS.mkdir(cur);
    } catch (_) { /* exists */ }
  }
}

// Read-only mounts are enforced by Deno's permissions (a write is EACCES).
function mount(target: string, source: string): void {
  mkdirs(target);
  py.mountNodeFS(target, source);
}
if (init.workspace) mount("/workspace", init.workspace);
if (init.files) mount("/files", init.files);
for (const m of init.mounts ?? []) mount(m.target, m.source);
mkdirs("/workspace");
FS.chdir("/workspace");

// Output of the current execution, captured raw.
const streamLimit = 1 << 20; // characters of stdout (and of stderr) kept per execution
class Capture {
  chunks: string[] = [];
  size = 0;
  truncated = false;
  write(buf: Uint8Array): number {
    if (this.size < streamLimit) {
      const s = decoder.decode(buf, { stream: true });
      this.chunks.push(s);
      this.size += s.length;
    } else this.truncated = true;
    return buf.length;
  }
  take(): string {
    let s = this.chunks.join("");
    if (this.truncated) s = s.slice(0, streamLimit) + "\n[output truncated]\n";
    this.chunks = [];
    this.size = 0;
    this.truncated = false;
    return s;
  }
}
const stdout = new Capture();
const stderr = new Capture();
py.setStdout({ write: (b: Uint8Array) => stdout.write(b) });
py.setStderr({ write: (b: Uint8Array) => stderr.write(b) });

// Interrupts: byte 0 is Pyodide's signal byte, byte 1 says why it was set.
const interruptBuffer = new Uint8Array(new SharedArrayBuffer(4));
py.setInterruptBuffer(interruptBuffer);
io.postMessage({ buffer: interruptBuffer });

py.registerJsModule("_pbx_js", { request: hostRequest, sleep });

const pbx = py.pyimport("_parselbox");
pbx._configure(
  JSON.stringify({
    env: init.env ?? {},
    globals: init.globals ?? {},
    namespaces: init.namespaces ?? [],
  }),
);
const runCode = pbx.run;
const pyInterrupt = pbx.interrupt;

// A fatal error leaves Pyodide unusable ("Pyodide already fatally failed"):
// answer the execution in flight, then exit so that the host restarts us.
let fatalCause: string | null = null;
const EXIT_FATAL = 70;
let signalFatal: (body: string) => void = () => {};
// Resolves (with an empty body) when Pyodide fails fatally: the execution in
// flight may never settle after that.
const fatalSignal = new Promise<string>((resolve) => (signalFatal = resolve));
py._api.on_fatal = (e: Any) => {
  fatalCause = String(e?.message ?? e).split("\n")[0].slice(0, 300);
  console.error("the Python runtime failed fatally:", fatalCause);
  if (!current) Deno.exit(EXIT_FATAL);
  signalFatal("");
};

globalThis.addEventListener("unhandledrejection", (e: PromiseRejectionEvent) => {
  e.preventDefault();
  const msg = String(e.reason?.message ?? e.reason);
  if (!msg.includes(INTERRUPTED) && !msg.includes("KeyboardInterrupt")) {
    console.warn("unhandled rejection:", msg);
  }
});

// ---------------------------------------------------------------------------
// Serving the host.

interface Run {
  seq: number;
}
let current: Run | null = null;
let runSeq = 0;
let execChain: Promise<unknown> = Promise.resolve();

// interruptRun stops the current execution wherever it is: the signal byte
// (set by the worker) catches running bytecode; rejecting waits catches a
// suspended host call or sleep; cancelling the asyncio task catches an await.
//
// It runs on the main thread, so Python is not executing bytecode right now:
// clear the signal byte (the worker may have set it) so that it does not fire
// again at a random point once Python resumes, outside the user's code.
function interruptRun(): void {
  if (!current) return;
  Atomics.store(interruptBuffer, 0, 0);
  if (rejectWaits() > 0) return; // the rejection raises KeyboardInterrupt where Python waits
  try {
    pyInterrupt();
  } catch (e) {
    console.warn("interrupt:", String(e));
  }
}

function userFiles(): string[] {
  const out: string[] = [];
  for (const p of changed) {
    if (!(p.startsWith("/workspace/") || p.startsWith("/files/") || p.startsWith("/mnt/"))) continue;
    if (p.includes("/.parselbox/")) continue;
    try {
      const st = FS.stat(p);
      if (FS.isFile(st.mode)) out.push(p);
    } catch (_) { /* deleted since */ }
  }
  return out;
}

async function exec(id: number, params: { code: string; timeout?: number }): Promise<void> {
  const run: Run = { seq: ++runSeq };
  current = run;
  changed.clear();
  interruptBuffer[0] = 0;
  interruptBuffer[1] = 0;
  const timeout = params.timeout ?? 0;
  if (timeout > 0) io.postMessage({ arm: timeout * 1000, seq: run.seq });
  let body: string;
  try {
    body = await Promise.race([runCode.callPromising(params.code), fatalSignal]);
  } catch (e) {
    // run() catches everything Python raises; this is a failure of the runtime.
    body = JSON.stringify({
      output: null,
      error: { type: "SandboxError", message: String((e as Error)?.message ?? e) },
    });
  } finally {
    io.postMessage({ disarm: run.seq });
    current = null;
  }
  const timedOut = interruptBuffer[1] === 1;
  interruptBuffer[0] = 0;
  if (timedOut && body.includes('"KeyboardInterrupt"') || timedOut && body.includes('"CancelledError"')) {
    const r = JSON.parse(body);
    if (r.error && (r.error.type === "KeyboardInterrupt" || r.error.type === "CancelledError")) {
      r.error.type = "KeyboardInterrupt";
      r.error.message = `Execution timed out after ${timeout}s; the interpreter state was kept.`;
      body = JSON.stringify(r);
    }
  }
  if (fatalCause !== null) {
    body = JSON.stringify({
      output: null,
      error: {
        type: "SandboxCrashed",
        message: `The Python runtime failed fatally (${fatalCause}); ` +
          "the sandbox was restarted and all state was lost.",
      },
    });
  }
  const files = fatalCause === null ? userFiles() : [];
  changed.clear();
  // body is {"output":...,"error":...}: splice in the streams and files.
  sendRaw(
    `{"id":${id},"result":${body.slice(0, -1)},"stdout":${JSON.stringify(stdout.take())},` +
      `"stderr":${JSON.stringify(stderr.take())},"files":${JSON.stringify(files)}}}`,
  );
  if (fatalCause !== null) Deno.exit(EXIT_FATAL);
}

function reply(id: number, result: unknown): void {
  send({ id, result });
}

function replyError(id: number, type: string, message: string): void {
  send({ id, error: { type, message } });
}

const methods: Record<string, (id: number, params: Any) => void | Promise<void>> = {
  exec: (id, params) => {
    // One execution at a time; the host serializes too, this is a backstop.
    execChain = execChain.then(() => exec(id, params));
  },
  interrupt: () => interruptRun(),
  info: (id) => {
    reply(id, {
      pyodide: py.version,
      python: pbx.python_version(),
      wasm_memory_bytes: py._module.HEAP8.length,
      uptime_ms: Math.round(performance.now()),
    });
  },
  shutdown: (id) => {
    reply(id, null);
    Deno.exit(0);
  },
};

onLine = (line: string) => {
  let msg: Any;
  try {
    msg = JSON.parse(line);
  } catch (_) {
    console.warn("ignoring a line that is not JSON");
    return;
  }
  if (msg.method === undefined) {
    // A response to one of our requests.
    const p = pendingHost.get(msg.id);
    if (!p) return;
    pendingHost.delete(msg.id);
    if (msg.error) p.resolve(JSON.stringify({ ok: false, error: msg.error }));
    else p.resolve(`{"ok":true,"result":${JSON.stringify(msg.result ?? null)}}`);
    return;
  }
  const handler = methods[msg.method];
  if (!handler) {
    if (msg.id !== undefined) replyError(msg.id, "LookupError", `unknown method: ${msg.method}`);
    return;
  }
  try {
    const r = handler(msg.id, msg.params ?? {});
    if (r instanceof Promise) {
      r.catch((e) => msg.id !== undefined && replyError(msg.id, "SandboxError", String(e)));
    }
  } catch (e) {
    if (msg.id !== undefined) replyError(msg.id, "SandboxError", String(e));
  }
};

send({
  method: "ready",
  params: {
    pyodide: py.version,
    python: pbx.python_version(),
    snapshot: !!init.snapshot,
    boot_ms: Math.round(performance.now() - bootStart),
  },
});
// Lines that arrived during boot.
for (const l of inbox.splice(0)) onLine(l);
booted = true;
if (stdinClosed) Deno.exit(0);
