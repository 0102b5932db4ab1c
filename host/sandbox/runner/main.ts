// main.ts: the sandbox process. One Pyodide interpreter, driven by the
// Parselbox host over newline-delimited JSON on stdin/stdout (channel.ts;
// the message set and the round trips are in ../doc.go).
//
// Boot: the host sends `init` as the first line. The runner starts the
// watchdog, loads Pyodide (from the memory snapshot, if any), mounts the
// host directories through HostFS, installs the features (features/*.ts),
// locks down what the guest can reach, and sends `ready`. With
// make_snapshot, it instead imports the Python package, writes the snapshot
// and exits.

import "./console.ts";
import "./noenv.ts";
import { Channel } from "./channel.ts";
import { toPython } from "./convert.ts";
import { errnoName, mountHostFS } from "./emfs.ts";
import { HostFS, Root } from "./hostfs.ts";
import { lockdown } from "./lockdown.ts";
import { loadPython } from "./python.ts";
import { Capture, Limits, registered, Runtime } from "./runtime.ts";
import { Watchdog } from "./watchdog.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

interface InitParams {
  channel_key: string; // starts every line written to stdout (channel.ts)
  indexURL: string; // Pyodide directory, with a trailing slash
  snapshot?: string;
  make_snapshot?: boolean;
  roots?: Root[]; // /workspace, /files, the mounts
  interrupt_pipe?: string; // where the host writes interrupt requests
  limits?: {
    max_message_bytes?: number;
    max_result_bytes?: number;
    workspace_quota_bytes?: number;
    grace_ms?: number;
    idle_limit_ms?: number;
  };
  env?: Record<string, string>;
  globals?: Record<string, unknown>;
  namespaces?: unknown[];
  paths?: { pyodide_files: string[]; cache_dir?: string }; // the runtime's own files
  // the host's packages, under /lib/packages; preload: imported before the snapshot
  packages?: {
    paths: string[];
    libs?: string[];
    runtime?: boolean;
    preload?: string[];
    micropip?: { index_urls: string[]; lock?: Record<string, unknown> }; // micropip's index: the host's
  };
  npm?: { dir: string }; // the host's npm packages (node_modules), read-only: features/js.ts
}

const EXIT_FATAL = 70;

// The channel and the watchdog live here, in the entry module, which
// exports nothing: a guest that imports a runner file (the module map
// gives it the loaded instance, whatever the read permissions) finds
// classes, never these.
const channel = new Channel();
const watchdog = new Watchdog();

// V8's gc() (--expose-gc). It stays on the global object (V8 makes it
// non-configurable), which the guest never reaches (jsglobals.ts).
// deno-lint-ignore no-explicit-any
const collectGarbage: () => void = (globalThis as any).gc ?? (() => {});
const bootStart = performance.now();

// A boot that fails ends the process: the host reports the "boot failed"
// line of stderr, once.
let booted = false;
function failBoot(e: unknown): never {
  console.error(`boot failed: ${describeBootError(e)}`);
  Deno.exit(1);
}

// describeBootError names the cause: an Error's stack, or the code of an
// Emscripten file system error (an object that prints as [object Object]).
function describeBootError(e: unknown): string {
  if (e instanceof Error) return String(e.stack ?? e.message);
  const errno = (e as Any)?.errno;
  if (typeof errno === "number") return `file system error ${errnoName(errno)} (${errno})`;
  return String(e);
}
globalThis.addEventListener("unhandledrejection", (e: PromiseRejectionEvent) => {
  e.preventDefault();
  if (!booted) failBoot(e.reason);
  channel.log("debug", `unhandled rejection: ${String(e.reason?.message ?? e.reason).slice(0, 300)}`);
});
// After boot, an error that escapes a callback or a promise must not end
// the process: the guest can cause both (a timer it set, a promise it
// rejected).
globalThis.addEventListener("error", (e: ErrorEvent) => {
  e.preventDefault();
  if (!booted) failBoot(e.error ?? e.message);
  channel.log("debug", `uncaught error: ${String(e.error?.message ?? e.message).slice(0, 300)}`);
});

// Deno starts a thread of its own for signals the first time anything
// listens for one (Node compatibility does, when just-bash is imported
// after boot). A thread that cannot start is fatal to Deno ("unable to
// create worker threads"), and a guest that escaped Deno's permissions can
// take every pid the cgroup allows (a thread bomb): the thread is started
// now, before any guest code runs. The process's other threads start at
// boot, or are tokio's blocking pool, which queues work for the threads it
// has when it cannot start more.
{
  const none = () => {};
  Deno.addSignalListener("SIGWINCH", none);
  Deno.removeSignalListener("SIGWINCH", none);
}

let stdinClosed = false;
channel.onEOF = () => {
  // The host closed stdin: it is gone or wants us gone. While booting,
  // finish first (building a snapshot needs no more input).
  stdinClosed = true;
  if (booted) Deno.exit(0);
};
channel.read();

const initMsg = await channel.next();
if (initMsg?.method !== "init") throw new Error(`expected init, got ${JSON.stringify(initMsg?.method)}`);
const init: InitParams = initMsg.params;
channel.setKey(init.channel_key);
init.channel_key = ""; // kept by the channel only
const lim = init.limits ?? {};
const limits: Limits = {
  maxMessage: lim.max_message_bytes || 64 << 20,
  maxResult: lim.max_result_bytes || 64 << 20,
  quota: lim.workspace_quota_bytes || 0,
  graceMs: lim.grace_ms || 5000,
  idleLimitMs: lim.idle_limit_ms || 60000,
};
channel.maxMessage = limits.maxMessage;

const hooks: Runtime["hooks"] = { interrupt: [], idleInterrupt: [], booting: [], warm: [], begin: [], result: [] };
let current: number | null = null;
if (!init.make_snapshot) {
  await watchdog.start(
    channel,
    { interruptPipe: init.interrupt_pipe, graceMs: limits.graceMs, idleLimitMs: limits.idleLimitMs },
    {
      interrupt(id, reason) {
        if (current !== id) return;
        // Python is not running bytecode now (this thread is free): clear the
        // byte so that it does not fire later, outside the user's code, and
        // end what the execution waits for instead.
        watchdog.signal[0] = 0;
        let ended = 0;
        for (const h of hooks.interrupt) ended += h(id, reason, ended);
      },
      idleInterrupt() {
        for (const h of hooks.idleInterrupt) h();
      },
    },
  );
}

const py = await loadPython({
  indexURL: init.indexURL,
  snapshot: init.snapshot,
  make: init.make_snapshot,
  onOutput: (s: string) => channel.log("debug", `pyodide: ${s}`),
  beforeSnapshot: init.packages?.preload?.length
    ? (py: Any) => {
      // The host's packages, imported into the snapshot (read-only, as later).
      mountHostFS(py, new HostFS(init.roots ?? [], 0));
      const mod = py.pyimport("_parselbox.packages");
      mod.preload(JSON.stringify(init.packages));
      mod.destroy();
    }
    : undefined,
});
// A failure from here on is not the snapshot's: the host keeps it.
if (init.snapshot && !init.make_snapshot) channel.notify("restored", {});

// The interpreter failing fatally leaves it unusable ("Pyodide already
// fatally failed"): tell the host, which restarts the sandbox, and exit.
py._api.on_fatal = (e: Any) => {
  const cause = String(e?.message ?? e).split("\n")[0].slice(0, 300);
  try {
    channel.notify("fatal", { message: cause });
  } finally {
    Deno.exit(EXIT_FATAL);
  }
};

const fs = new HostFS(init.roots ?? [], limits.quota);
mountHostFS(py, fs);
py.FS.chdir("/workspace");

const stdout = new Capture(), stderr = new Capture();
py.setStdout({ write: (b: Uint8Array) => stdout.write(b) });
py.setStderr({ write: (b: Uint8Array) => stderr.write(b) });
py.setInterruptBuffer(watchdog.signal);

const paths = {
  runnerDir: new URL(".", import.meta.url).pathname.replace(/\/$/, ""),
  pyodideDir: init.indexURL.replace(/\/$/, ""),
  snapshot: init.snapshot,
  pyodideFiles: init.paths?.pyodide_files ?? [],
  cacheDir: init.paths?.cache_dir,
  interruptPipe: init.interrupt_pipe,
};
const rt: Runtime = {
  py,
  paths,
  pbx: py.pyimport("_parselbox"),
  channel,
  fs,
  watchdog,
  limits,
  stdout,
  stderr,
  hooks,
  get current() {
    return current;
  },
  set current(id: number | null) {
    current = id;
  },
  collectGarbage,
  npmDir: init.npm?.dir,
};

// The features, each a file in features/.
const featureDir = new URL("./features/", import.meta.url);
for (const e of [...Deno.readDirSync(featureDir)].sort((a, b) => a.name.localeCompare(b.name))) {
  if (e.isFile && e.name.endsWith(".ts")) await import(new URL(e.name, featureDir).href);
}
for (const f of registered()) await f.install(rt);

// The Python side, with the host's configuration.
rt.pbx.configure(
  toPython(py, {
    env: init.env ?? {},
    globals: init.globals ?? {},
    namespaces: init.namespaces ?? [],
    packages: init.packages ?? { paths: [] },
  })[0],
);

lockdown(py, fs, paths, channel);
for (const h of hooks.booting) await h();

channel.notify("ready", {
  pyodide: py.version,
  python: rt.pbx.python_version(),
  snapshot: !!init.snapshot,
  boot_ms: Math.round(performance.now() - bootStart),
});
channel.serve();
watchdog.booted();
booted = true;
if (stdinClosed) Deno.exit(0);
