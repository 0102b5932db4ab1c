// runtime.ts: what a feature of the runner gets, and how it registers.
//
// A feature is a file in features/ that calls register() when imported:
// main.ts imports every file there, then installs the features once the
// interpreter is up. A feature serves protocol methods
// (rt.channel.handle), gives Python JS functions (rt.py.registerJsModule),
// reaches host directories through rt.fs (the HostFS, whose rules it
// cannot bypass), and hooks the execution's events (rt.on). The Python
// half of a feature is a module in python/_parselbox/, imported before the
// memory snapshot is taken. Adding a feature adds files; the protocol loop
// and the boot sequence do not change.

import type { Channel } from "./channel.ts";
import type { HostFS } from "./hostfs.ts";
import type { RuntimePaths } from "./lockdown.ts";
import type { Watchdog } from "./watchdog.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** The limits the host set (init.limits). */
export interface Limits {
  maxMessage: number; // bytes of one protocol line
  maxResult: number; // bytes of one execution's result
  quota: number; // bytes the writable roots may hold
  graceMs: number; // how long interrupted code has to stop
  idleLimitMs: number; // how long a callback may block between executions
}

/** Output captured for the current execution (stdout or stderr). */
export class Capture {
  private chunks: string[] = [];
  private size = 0;
  private truncated = false;
  private readonly decoder = new TextDecoder();
  constructor(readonly limit = 1 << 20) {} // characters kept per execution

  private sink: ((text: string) => void) | null = null;
  private partial = ""; // streamed: the text after the last newline
  private streamed = 0; // characters streamed this execution

  /** While fn is set, what is written also goes to fn, whole lines at a
   * time (at most 4096 characters each, up to the capture's limit in all);
   * null flushes the last partial line and stops. */
  streamTo(fn: ((text: string) => void) | null): void {
    if (fn === null && this.sink !== null && this.partial !== "") this.sink(this.partial);
    this.sink = fn;
    this.partial = "";
    this.streamed = 0;
  }

  write(buf: Uint8Array): number {
    if (this.size >= this.limit && this.sink === null) {
      this.truncated = true;
      return buf.length;
    }
    const s = this.decoder.decode(buf, { stream: true });
    if (this.size < this.limit) {
      this.chunks.push(s);
      this.size += s.length;
    } else this.truncated = true;
    if (this.sink !== null && this.streamed < this.limit) {
      this.partial += s;
      const nl = this.partial.lastIndexOf("\n");
      if (nl >= 0 || this.partial.length >= 4096) {
        const end = nl >= 0 ? nl + 1 : this.partial.length;
        const lines = this.partial.slice(0, end);
        this.partial = this.partial.slice(end);
        for (let i = 0; i < lines.length; i += 4096) {
          const part = lines.slice(i, i + 4096);
          this.streamed += part.length;
          this.sink(part);
        }
      }
    }
    return buf.length;
  }

  /** Adds a line of the runner's own (a notice for the guest). */
  note(line: string): void {
    this.chunks.push(line.endsWith("\n") ? line : line + "\n");
  }

  take(): string {
    let s = this.chunks.join("");
    if (this.truncated) s = s.slice(0, this.limit) + "\n[output truncated]\n";
    this.chunks = [];
    this.size = 0;
    this.truncated = false;
    return s;
  }
}

/** Events a feature may hook. */
export interface Hooks {
  /** The host or the deadline interrupts execution id (the main thread is
   * free: Python waits or awaits). Hooks run in the features' install
   * order; each gets how many waits the earlier ones ended and returns how
   * many it ended. */
  interrupt: ((id: number, reason: number, ended: number) => number)[];
  /** A callback that blocked the event loop between executions was
   * interrupted: cancel what the guest left running. Returns a count. */
  idleInterrupt: (() => number)[];
  /** The last steps of the boot, before the host is told it is ready. */
  booting: (() => void | Promise<void>)[];
  /** Setup a feature defers past boot (run on a timer once idle), run now
   * when the host asks (`warm`: a pooled sandbox, before a session takes
   * it, whose first executions would otherwise wait for it). `done` tells
   * whether it has run. */
  warm: { run: () => Promise<void>; done: () => boolean }[];
  /** An execution begins. */
  begin: (() => void)[];
  /** An execution ended: a feature may add members to its result. */
  result: ((result: Record<string, unknown>) => void)[];
}

export interface Runtime {
  py: Any; // the Pyodide API
  pbx: Any; // the _parselbox Python package (a PyProxy)
  channel: Channel;
  fs: HostFS;
  watchdog: Watchdog;
  limits: Limits;
  stdout: Capture;
  stderr: Capture;
  hooks: Hooks;
  /** The id of the execution running, or null. */
  current: number | null;
  /** The runtime's own files (revoked once booted). */
  paths: RuntimePaths;
  /** A full garbage collection of the JS heap. */
  collectGarbage: () => void;
  /** The host's npm packages: a directory holding node_modules (read-only). */
  npmDir?: string;
}

export interface Feature {
  name: string;
  /** Features install in increasing order, then by name. */
  order?: number;
  install(rt: Runtime): void | Promise<void>;
}

const features: Feature[] = [];

export function register(f: Feature): void {
  features.push(f);
}

export function registered(): Feature[] {
  return [...features].sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || a.name.localeCompare(b.name));
}
