// watchdog.ts: limits on the Python code, kept by a worker thread
// (watchdog_worker.ts) because a CPU-bound Python loop never yields this
// thread to the event loop.
//
//   - An execution's deadline: the worker interrupts it; if the code does
//     not stop within the grace period, the worker reports a runaway and
//     the host kills the process.
//   - Interrupts requested by the host arrive on their own pipe (fd 3), read
//     by the worker, so that they reach code that keeps this thread busy.
//   - An interrupt is first a message to this thread, whose hooks end what
//     the code waits in (main.ts, features/exec.ts); only if this thread
//     does not take the message within BYTE_DELAY_MS (Python keeps it busy
//     running bytecode) does the worker set Pyodide's interrupt byte. The
//     byte raises KeyboardInterrupt at whatever bytecode runs next, which
//     need not be the code's: Pyodide's event loop (a callback's prologue,
//     a future's scheduling of its callbacks) is Python too, and a
//     KeyboardInterrupt there loses the callback and the execution hangs.
//     Code that keeps the thread busy is where the byte lands well.
//   - Between executions, callbacks that Python left scheduled (asyncio
//     tasks and handles, timers) may run, held to the same limits: one that
//     blocks the event loop longer than the idle limit is interrupted, and
//     one that does not stop within the grace period is reported as a
//     runaway; the host then restarts the sandbox and tells the next
//     execution, which runs on the fresh one.
//
// State is shared through SharedArrayBuffers. Between executions neither
// thread runs a timer of its own: the worker wakes every idle check period
// (a tenth of the idle limit, at most 5 s) and asks the main thread for a
// sign of life (a ping message, answered with a tick); an unanswered ping is
// a blocked event loop. An idle sandbox thus costs two wakeups every few
// seconds instead of thirty a second.
//
// An execution does not wake the worker when it begins, unless its deadline
// comes before the worker's next check (WAKE_AT, which the worker
// publishes): a message to the worker and a heartbeat timer for every
// execution cost `1+1` 0.2-0.3 ms on a loaded machine (the woken thread
// takes the CPU), and most executions end long before any check. Once the
// worker sees an execution running, it checks every 50 ms and asks for the
// heartbeat (a beat message): the main thread then ticks (TICK, every
// 100 ms) while its event loop turns, so that the worker can tell a busy
// event loop from a turning one. A loop that does not turn takes neither
// the beat message nor a timer's tick, as before.

import type { Channel } from "./channel.ts";

// Slots of the control array (Int32).
export const STATE = 0; // BOOTING, IDLE, EXEC, CONDEMNED or RAISING
export const TICK = 1; // the main thread's heartbeat counter
export const REASON = 2; // why the interrupt byte was set (see below)
// LOCK = 3 is the stdout lock (channel.ts)
export const IDLE_EPOCH = 4; // counts the interrupts of blocked callbacks
export const ACK = 5; // this thread took the last interrupt message (1)
export const IDLE = 0, EXEC = 1, CONDEMNED = 2, BOOTING = 3;
// RAISING: idle, while the worker sets the byte for a blocked callback
// (watchdog_worker.ts raiseIdle); an execution does not begin meanwhile.
export const RAISING = 4;
// Reasons.
export const TIMEOUT = 1, REQUESTED = 2, IDLE_LIMIT = 3;
// Slots of the big array (BigInt64): the running execution's request id,
// the id an interrupt was requested for before it started, and its
// deadline (ms since the epoch, 0: none); when the worker checks next (ms
// since the epoch; past while it checks).
export const RUN_ID = 0, PENDING_ID = 1, DEADLINE = 2, WAKE_AT = 3;

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
  private heartbeat: ReturnType<typeof setInterval> | undefined; // the interval, while an execution runs

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
    return new Promise((resolve, reject) => {
      w.onmessage = (e: MessageEvent) => {
        const m = e.data;
        if (m.ping) Atomics.add(this.ctl, TICK, 1); // the event loop is free
        else if (m.beat !== undefined) this.startHeartbeat(m.beat);
        else if (m.ready) resolve();
        else if (m.interrupt !== undefined) {
          Atomics.store(this.ctl, ACK, 1); // no interrupt byte needed
          events.interrupt(m.interrupt, m.reason);
        } else if (m.idle) events.idleInterrupt();
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
    const deadline = timeoutSec > 0 ? BigInt(Math.round(Date.now() + timeoutSec * 1000)) : 0n;
    Atomics.store(this.big, DEADLINE, deadline);
    let was;
    while ((was = Atomics.compareExchange(this.ctl, STATE, IDLE, EXEC)) === RAISING) {
      Atomics.wait(this.ctl, STATE, RAISING, 1); // two stores away
    }
    if (was !== IDLE) return false;
    // The worker set the byte for a callback that blocked the loop, after
    // the byte was cleared above and before the state was EXEC: that
    // callback has ended (this thread runs), and the byte is not this
    // execution's. Once the state is EXEC, the worker sets no such byte.
    if (Atomics.load(this.ctl, REASON) === IDLE_LIMIT) {
      Atomics.store(this.signal, 0, 0);
      Atomics.store(this.ctl, REASON, 0);
    }
    // The worker looks at its next check, unless the deadline comes first.
    // (STATE is stored before WAKE_AT is read, and the worker stores
    // WAKE_AT before it reads STATE: one of the two sees the other.)
    if (deadline !== 0n && deadline < Atomics.load(this.big, WAKE_AT)) {
      this.worker?.postMessage({ exec: true }); // the worker watches closely now
    }
    return true;
  }

  /** The heartbeat of execution `id`, which the worker saw running: an
   * event loop that runs callbacks keeps it ticking. */
  private startHeartbeat(id: number): void {
    Atomics.add(this.ctl, TICK, 1); // the event loop is free
    if (Atomics.load(this.ctl, STATE) !== EXEC || Atomics.load(this.big, RUN_ID) !== BigInt(id)) return;
    this.heartbeat ??= setInterval(() => Atomics.add(this.ctl, TICK, 1), 100);
  }

  /** Whether an interrupt for execution `id` arrived before it began (it
   * starts interrupted: features/exec.ts). Call after begin. */
  pendingFor(id: number): boolean {
    if (Atomics.load(this.big, PENDING_ID) !== BigInt(id)) return false;
    Atomics.store(this.ctl, REASON, REQUESTED);
    return true;
  }

  /** Marks the end of the running execution: an interrupt byte set for it
   * and not seen is cleared (it would land in whatever runs next). */
  end(): void {
    Atomics.store(this.big, DEADLINE, 0n);
    Atomics.compareExchange(this.ctl, STATE, EXEC, IDLE);
    this.signal[0] = 0;
    Atomics.add(this.ctl, TICK, 1);
    if (this.heartbeat !== undefined) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
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

