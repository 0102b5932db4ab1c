// watchdog.ts: limits on the Python code, kept by a worker thread
// (watchdog_worker.ts) because a CPU-bound Python loop never yields this
// thread to the event loop.
//
//   - An execution's deadline: the worker raises KeyboardInterrupt at it
//     (Pyodide's interrupt byte); if the code does not stop within the grace
//     period, the worker reports a runaway and the host kills the process.
//   - Interrupts requested by the host arrive on their own pipe (fd 3), read
//     by the worker, so that they reach code that keeps this thread busy.
//   - Between executions, callbacks that Python left scheduled (asyncio
//     tasks and handles, timers) may run, held to the same limits: one that
//     blocks the event loop longer than the idle limit is interrupted, and
//     one that does not stop within the grace period is reported as a
//     runaway; the host then restarts the sandbox and tells the next
//     execution, which runs on the fresh one.
//
// State is shared through SharedArrayBuffers; the main thread heartbeats so
// that the worker can tell a busy event loop from an idle one.

import type { Channel } from "./channel.ts";

// Slots of the control array (Int32).
export const STATE = 0; // BOOTING, IDLE, EXEC or CONDEMNED
export const TICK = 1; // the main thread's heartbeat counter
export const REASON = 2; // why the interrupt byte was set (see below)
// LOCK = 3 is the stdout lock (channel.ts)
export const IDLE_EPOCH = 4; // counts the interrupts of blocked callbacks
export const IDLE = 0, EXEC = 1, CONDEMNED = 2, BOOTING = 3;
// Reasons.
export const TIMEOUT = 1, REQUESTED = 2, IDLE_LIMIT = 3;
// Slots of the big array (BigInt64): the running execution's request id,
// the id an interrupt was requested for before it started, and its
// deadline (ms since the epoch, 0: none).
export const RUN_ID = 0, PENDING_ID = 1, DEADLINE = 2;

export interface WatchdogEvents {
  /** The deadline passed, or the host asked: end the waits of `id`. */
  interrupt(id: number, reason: number): void;
  /** A callback blocked the event loop between executions past the idle
   * limit and was interrupted (this runs once the loop is free again). */
  idleInterrupt(): void;
}

export class Watchdog {
  readonly ctl = new Int32Array(new SharedArrayBuffer(4 * 8));
  readonly big = new BigInt64Array(new SharedArrayBuffer(8 * 4));
  /** Pyodide's interrupt buffer: byte 0 set to 2 (SIGINT) raises
   * KeyboardInterrupt at the next bytecode check. */
  readonly signal = new Uint8Array(new SharedArrayBuffer(4));
  private worker: Worker | null = null;

  /** Starts the worker; resolves when it listens on the interrupt pipe. */
  start(
    channel: Channel,
    opts: { interruptPipe?: string; graceMs: number; idleLimitMs: number },
    events: WatchdogEvents,
  ): Promise<void> {
    Atomics.store(this.ctl, STATE, BOOTING); // nothing to police until booted
    const prefix = channel.shareLock(this.ctl);
    const w = new Worker(new URL("./watchdog_worker.ts", import.meta.url), { type: "module" });
    this.worker = w;
    // The heartbeat: an event loop that runs callbacks keeps it ticking.
    setInterval(() => Atomics.add(this.ctl, TICK, 1), 100);
    return new Promise((resolve, reject) => {
      w.onmessage = (e: MessageEvent) => {
        const m = e.data;
        if (m.ready) resolve();
        else if (m.interrupt !== undefined) events.interrupt(m.interrupt, m.reason);
        else if (m.idle) events.idleInterrupt();
        else if (m.error) reject(new Error(m.error));
      };
      w.onerror = (e) => {
        e.preventDefault();
        channel.log("error", `watchdog failed: ${e.message}`);
        reject(new Error(e.message));
      };
      w.postMessage({ ctl: this.ctl, big: this.big, signal: this.signal, prefix, ...opts });
    });
  }

  /** Marks the end of the boot: from now on the limits apply. */
  booted(): void {
    Atomics.add(this.ctl, TICK, 1);
    Atomics.compareExchange(this.ctl, STATE, BOOTING, IDLE);
  }

  /** Marks the start of execution `id`; false if the worker condemned the
   * process first (it is about to be killed: run nothing). */
  begin(id: number, timeoutSec: number): boolean {
    this.signal[0] = 0;
    Atomics.store(this.ctl, REASON, 0);
    Atomics.store(this.big, RUN_ID, BigInt(id));
    Atomics.store(this.big, DEADLINE, timeoutSec > 0 ? BigInt(Math.round(Date.now() + timeoutSec * 1000)) : 0n);
    if (Atomics.compareExchange(this.ctl, STATE, IDLE, EXEC) !== IDLE) return false;
    // An interrupt for this execution that arrived before it started.
    if (Atomics.load(this.big, PENDING_ID) === BigInt(id)) this.raise(REQUESTED);
    return true;
  }

  /** Marks the end of the running execution. */
  end(): void {
    Atomics.store(this.big, DEADLINE, 0n);
    Atomics.compareExchange(this.ctl, STATE, EXEC, IDLE);
    Atomics.add(this.ctl, TICK, 1);
  }

  /** Sets the interrupt byte (the worker does the same from its thread). */
  raise(reason: number): void {
    Atomics.store(this.ctl, REASON, reason);
    Atomics.store(this.signal, 0, 2);
  }

  /** Counts the interrupts of callbacks that blocked between executions. */
  idleEpoch(): number {
    return Atomics.load(this.ctl, IDLE_EPOCH);
  }

  /** The event loop runs again (the heartbeat, sooner). */
  beat(): void {
    Atomics.add(this.ctl, TICK, 1);
  }

  /** Why the interrupt byte was last set (0: it was not). */
  reason(): number {
    return Atomics.load(this.ctl, REASON);
  }
}

