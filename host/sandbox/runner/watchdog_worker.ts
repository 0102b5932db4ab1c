// watchdog_worker.ts: the watchdog's thread (see watchdog.ts). It never
// runs Python and never waits on the main thread, so it sees deadlines,
// interrupt requests and a blocked event loop while Python spins.

/// <reference lib="deno.worker" />

const STATE = 0, TICK = 1, REASON = 2, LOCK = 3, IDLE_EPOCH = 4;
const IDLE = 0, EXEC = 1, CONDEMNED = 2, BOOTING = 3;
const TIMEOUT = 1, REQUESTED = 2, IDLE_LIMIT = 3;
const RUN_ID = 0, PENDING_ID = 1, DEADLINE = 2;

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
let watchedID = -1n;

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
    }
    const deadline = Number(Atomics.load(big, DEADLINE));
    if (interruptedAt === 0 && deadline > 0 && now >= deadline) {
      raise(TIMEOUT);
      interruptedAt = now;
      self.postMessage({ interrupt: Number(id), reason: TIMEOUT });
    } else if (interruptedAt !== 0 && now - interruptedAt > graceMs) {
      if (Atomics.compareExchange(ctl, STATE, EXEC, CONDEMNED) === EXEC) {
        report("runaway", { phase: "exec", id: Number(id) });
      }
    }
  } else if (state === IDLE) {
    const blocked = now - lastTickAt;
    if (interruptedAt === 0 && blocked > idleLimitMs) {
      Atomics.add(ctl, IDLE_EPOCH, 1);
      raise(IDLE_LIMIT);
      interruptedAt = now;
      self.postMessage({ idle: true });
    } else if (interruptedAt !== 0 && now - interruptedAt > graceMs) {
      if (Atomics.compareExchange(ctl, STATE, IDLE, CONDEMNED) === IDLE) {
        report("runaway", { phase: "idle", seconds: Math.round(blocked / 1000) });
      }
    }
  }
}

// onInterrupt acts on the host's request to interrupt execution `id`.
function onInterrupt(id: bigint): void {
  const state = Atomics.load(ctl, STATE);
  const running = Atomics.load(big, RUN_ID);
  if (state === EXEC && running === id) {
    raise(REQUESTED);
    if (interruptedAt === 0) interruptedAt = Date.now();
    self.postMessage({ interrupt: Number(id), reason: REQUESTED });
  } else if (id > running) {
    // Not started yet: it starts interrupted (watchdog.ts begin).
    Atomics.store(big, PENDING_ID, id);
  } // else: it has ended already
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
      if (m?.method === "interrupt" && Number.isSafeInteger(m?.params?.id)) onInterrupt(BigInt(m.params.id));
    }
  }
}

self.onmessage = (e: MessageEvent) => {
  const m = e.data;
  ctl = m.ctl;
  big = m.big;
  signal = m.signal;
  graceMs = m.graceMs;
  idleLimitMs = m.idleLimitMs;
  prefix = m.prefix;
  setInterval(check, 50);
  if (m.interruptPipe) {
    readInterrupts(m.interruptPipe).catch((err) => self.postMessage({ error: `interrupt pipe: ${err}` }));
  }
  self.postMessage({ ready: true });
};
