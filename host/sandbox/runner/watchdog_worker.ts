// watchdog_worker.ts: the watchdog's thread (see watchdog.ts). It never
// runs Python and never waits on the main thread, so it sees deadlines,
// interrupt requests and a blocked event loop while Python spins.

/// <reference lib="deno.worker" />

const STATE = 0, TICK = 1, REASON = 2, LOCK = 3, IDLE_EPOCH = 4, ACK = 5;
const IDLE = 0, EXEC = 1, CONDEMNED = 2, BOOTING = 3, RAISING = 4;
const TIMEOUT = 1, REQUESTED = 2, IDLE_LIMIT = 3;
const RUN_ID = 0, PENDING_ID = 1, DEADLINE = 2, WAKE_AT = 3;

let ctl: Int32Array;
let big: BigInt64Array;
let signal: Uint8Array;
let graceMs = 5000;
let idleLimitMs = 60000;
let prefix = new Uint8Array(0); // "\n" and the channel key (channel.ts)

const encoder = new TextEncoder();

function raise(reason: number): void {
  Atomics.store(ctl, REASON, reason);
  Atomics.store(signal, 0, 2);
}

// raiseIdle sets the byte for a callback that blocks the event loop
// between executions (and first counts the interrupt, if `count`), if the
// sandbox is still idle and the loop's heartbeat still `tick`: check read
// both before, and an execution may have begun since. The decision and the
// byte are one step for the main thread: STATE is RAISING from the test to
// the byte, and begin waits that out; an execution that begins after it
// finds the byte set with IDLE_LIMIT and clears it before its code runs
// (watchdog.ts begin). Without this, an execution begun between check's
// read of the state and the byte was interrupted with IDLE_LIMIT.
function raiseIdle(tick: number, count: boolean): boolean {
  if (Atomics.compareExchange(ctl, STATE, IDLE, RAISING) !== IDLE) return false;
  const blocked = Atomics.load(ctl, TICK) === tick;
  if (blocked) {
    if (count) Atomics.add(ctl, IDLE_EPOCH, 1); // before the byte: Python may catch it at once
    raise(IDLE_LIMIT);
  }
  Atomics.store(ctl, STATE, IDLE);
  Atomics.notify(ctl, STATE);
  return blocked;
}

// How long the main thread has to take an interrupt message before the
// interrupt byte is set (see watchdog.ts): it takes one within a
// millisecond or two unless Python keeps it busy. Past it, the byte is set
// only if the main thread's heartbeat (100 ms) stopped too: an event loop
// that turns (slowly, on a loaded machine) takes the message, and a byte
// would land in its Python. At most a quarter of the grace period, which
// the byte must land well within.
const BYTE_DELAY_MS = 250;
let byteDue = 0; // when to set the byte, if the message was not taken (0: no)
let byteID = -1n; // for which execution
let byteReason = 0;
let byteTick = 0; // the heartbeat when the message was sent

// interrupt interrupts execution id (running): a message to the main
// thread now, the byte later if the main thread does not take it.
function interrupt(id: bigint, reason: number): void {
  Atomics.store(ctl, REASON, reason);
  Atomics.store(ctl, ACK, 0);
  self.postMessage({ interrupt: Number(id), reason });
  if (byteDue !== 0 && byteID === id) return; // one is due already: not later
  byteDue = Date.now() + Math.min(BYTE_DELAY_MS, graceMs / 4);
  byteID = id;
  byteReason = reason;
  byteTick = Atomics.load(ctl, TICK);
}

// report writes one notification to the host, under the stdout lock that
// the main thread takes for every line it writes.
function report(method: string, params: object): void {
  const body = encoder.encode(JSON.stringify({ method, params }) + "\n");
  const bytes = new Uint8Array(prefix.length + body.length);
  bytes.set(prefix, 0);
  bytes.set(body, prefix.length);
  const deadline = Date.now() + 2000;
  while (Atomics.compareExchange(ctl, LOCK, 0, 2) !== 0) {
    // The main thread writes a line; it does not block for long unless
    // the host stopped reading, and then nothing matters.
    if (Date.now() > deadline) return;
    Atomics.wait(ctl, LOCK, 1, 10);
  }
  try {
    let off = 0;
    while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
  } finally {
    Atomics.store(ctl, LOCK, 0);
    Atomics.notify(ctl, LOCK);
  }
}

// What the periodic check remembers.
let lastState = BOOTING;
let lastTick = 0;
let lastTickAt = Date.now();
let interruptedAt = 0; // when this thread set the byte for the current phase
let raisedAt = 0; // when it last set the byte again (between executions, or after the message)
// How long a blocked loop has after Python took the byte before it is set
// again (see check).
const REARM_MS = 1000;
let watchedID = -1n;
let pingTick = 0; // the heartbeat when the last ping was sent
let pinged = false; // a ping was sent (and pingTick is its tick)

function check(): void {
  const now = Date.now();
  const state = Atomics.load(ctl, STATE);
  const tick = Atomics.load(ctl, TICK);
  if (state !== lastState || tick !== lastTick) {
    if (state !== lastState) interruptedAt = 0;
    lastState = state;
    lastTick = tick;
    lastTickAt = now;
    if (state === IDLE && interruptedAt !== 0) {
      // The loop moves again: whatever blocked it stopped. If no bytecode
      // saw the byte (a JS loop), it must not fire later in something else.
      if (Atomics.load(ctl, REASON) === IDLE_LIMIT) Atomics.store(signal, 0, 0);
      interruptedAt = 0;
    }
  }
  if (state === EXEC) {
    const id = Atomics.load(big, RUN_ID);
    if (id !== watchedID) {
      watchedID = id;
      interruptedAt = 0;
      self.postMessage({ beat: Number(id) }); // its heartbeat, from now on (watchdog.ts)
    }
    if (byteDue !== 0 && now >= byteDue) {
      byteDue = 0;
      if (byteID === id && Atomics.load(ctl, ACK) === 0 && tick !== byteTick) {
        // The event loop turns: it takes the message soon. Look again.
        byteTick = tick;
        byteDue = now + Math.min(BYTE_DELAY_MS, graceMs / 4);
      } else if (byteID === id && Atomics.load(ctl, ACK) === 0) {
        raise(byteReason);
        // If the execution ended meanwhile (watchdog.ts end clears the byte
        // after marking it), the byte must not land in what runs next.
        if (Atomics.load(ctl, STATE) !== EXEC || Atomics.load(big, RUN_ID) !== id) Atomics.store(signal, 0, 0);
      }
    }
    if (
      interruptedAt !== 0 && byteID === id && Atomics.load(ctl, ACK) === 1 &&
      now - lastTickAt >= Math.min(REARM_MS, graceMs / 2) && Atomics.load(signal, 0) === 0 &&
      now - raisedAt >= REARM_MS
    ) {
      // The main thread took the message, yet the execution runs on and the
      // heartbeat stands still: what the interrupt left runnable (a task, a
      // callback scheduled as its wait ended) keeps the thread busy, and
      // only the byte reaches it. Set again while the heartbeat stays still
      // (Python took the byte where it stopped nothing); the grace period
      // still runs from the interrupt.
      raise(byteReason);
      raisedAt = now;
      if (Atomics.load(ctl, STATE) !== EXEC || Atomics.load(big, RUN_ID) !== id) Atomics.store(signal, 0, 0);
    }
    const deadline = Number(Atomics.load(big, DEADLINE));
    if (interruptedAt === 0 && deadline > 0 && now >= deadline) {
      interrupt(id, TIMEOUT);
      interruptedAt = now;
    } else if (interruptedAt !== 0 && now - interruptedAt > graceMs) {
      if (Atomics.compareExchange(ctl, STATE, EXEC, CONDEMNED) === EXEC) {
        report("runaway", { phase: "exec", id: Number(id) });
      }
    }
  } else if (state === IDLE) {
    // No heartbeat between executions: a sign of life is asked for. Until
    // the main thread answers (the tick moves), it has not been free since
    // the ping was sent, so lastTickAt (when the tick last moved, seen from
    // here) never makes a loop look blocked longer than it was.
    if (!pinged || tick !== pingTick) {
      pinged = true;
      pingTick = tick;
      self.postMessage({ ping: true });
    }
    const blocked = now - lastTickAt;
    if (interruptedAt === 0 && blocked > idleLimitMs) {
      if (raiseIdle(tick, true)) {
        interruptedAt = now;
        raisedAt = now;
        self.postMessage({ idle: true });
      }
    } else if (interruptedAt !== 0 && now - interruptedAt > graceMs) {
      if (Atomics.compareExchange(ctl, STATE, IDLE, CONDEMNED) === IDLE) {
        report("runaway", { phase: "idle", seconds: Math.round(blocked / 1000) });
      }
    } else if (interruptedAt !== 0 && Atomics.load(signal, 0) === 0 && now - raisedAt >= REARM_MS) {
      // Python took the byte (reading it clears it), yet the loop is still
      // blocked: no KeyboardInterrupt reached the callback. Seen under load
      // (TestBetweenExecutions, about 1 in 30, with either snapshot
      // restore), and a byte set again then interrupts it at once. Set it
      // again until the loop moves; the grace period still runs from the
      // first.
      if (raiseIdle(tick, false)) raisedAt = now;
    }
  }
}

// How often check runs: every 50 ms while an execution runs or an
// interrupt is under way, every idleCheckMs between executions (a blocked
// callback is then found within the idle limit plus two of these).
const FAST_MS = 50;
let idleCheckMs = 5000;
let timer: ReturnType<typeof setTimeout> | undefined;
let timerAt = 0;

// schedule sets the timer of the next check, sooner if need be.
// The main thread reads when the next check is (WAKE_AT) after it marks an
// execution begun, and tells this thread if the execution's deadline comes
// first (watchdog.ts); this thread reads the state after it publishes that
// time, so that an execution that began meanwhile is watched closely.
function schedule(): void {
  const state = Atomics.load(ctl, STATE);
  if (state === CONDEMNED) return; // about to be killed: nothing to watch
  const fast = state === EXEC || interruptedAt !== 0;
  const delay = fast ? FAST_MS : idleCheckMs;
  const at = Date.now() + delay;
  if (timer !== undefined && timerAt <= at) return;
  clearTimeout(timer);
  timerAt = at;
  timer = setTimeout(() => {
    timer = undefined;
    check();
    schedule();
  }, delay);
  Atomics.store(big, WAKE_AT, BigInt(at));
  if (!fast && Atomics.load(ctl, STATE) === EXEC) schedule();
}

// onInterrupt acts on the host's request to interrupt execution `id`.
function onInterrupt(id: bigint): void {
  const state = Atomics.load(ctl, STATE);
  const running = Atomics.load(big, RUN_ID);
  if (state === EXEC && running === id) {
    interrupt(id, REQUESTED);
    if (interruptedAt === 0) interruptedAt = Date.now();
  } else if (id >= running) {
    // Not begun yet (or ended, if it is the last one: harmless, ids only
    // grow): it starts interrupted (watchdog.ts pendingFor). If it began
    // meanwhile, the main thread may have looked before this: interrupt it.
    Atomics.store(big, PENDING_ID, id);
    if (Atomics.load(ctl, STATE) === EXEC && Atomics.load(big, RUN_ID) === id) {
      interrupt(id, REQUESTED);
      if (interruptedAt === 0) interruptedAt = Date.now();
    }
  }
}

async function readInterrupts(path: string): Promise<void> {
  const f = await Deno.open(path, { read: true });
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of f.readable) {
    pending += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let m;
      try {
        m = JSON.parse(line);
      } catch (_) {
        continue;
      }
      if (m?.method === "interrupt" && Number.isSafeInteger(m?.params?.id)) {
        onInterrupt(BigInt(m.params.id));
        schedule();
      }
    }
  }
}

self.onmessage = (e: MessageEvent) => {
  const m = e.data;
  if (m.exec) { // an execution began: look now, and closely from now on
    check();
    schedule();
    return;
  }
  ctl = m.ctl;
  big = m.big;
  signal = m.signal;
  graceMs = m.graceMs;
  idleLimitMs = m.idleLimitMs;
  prefix = m.prefix;
  idleCheckMs = Math.min(Math.max(Math.round(idleLimitMs / 10), FAST_MS), 5000);
  schedule();
  if (m.interruptPipe) {
    readInterrupts(m.interruptPipe).catch((err) => self.postMessage({ error: `interrupt pipe: ${err}` }));
  }
  self.postMessage({ ready: true });
};
