// io_worker.ts: the sandbox's stdin reader and watchdog, on its own thread.
//
// The main thread runs Python, and a CPU-bound Python loop never yields to the
// event loop. This worker keeps reading the host's messages regardless: it
// forwards every line to the main thread, and acts on the two that must work
// while Python spins:
//   - {"method":"interrupt"} sets Pyodide's interrupt byte at once;
//   - the execution deadline armed by the main thread sets it when it passes.
// Setting the byte to 2 (SIGINT) makes Python raise KeyboardInterrupt at its
// next bytecode check. The main thread deals with waits that never reach a
// bytecode check (host calls, sleeps) when the forwarded message arrives.

/// <reference lib="deno.worker" />

let interruptBuffer: Uint8Array | null = null;
let deadline: number | undefined;
let armedSeq = 0;

// Byte 1 records why: 1 for the deadline, 2 for the host's request.
const TIMEOUT = 1, REQUESTED = 2;

function interrupt(reason: number): void {
  if (!interruptBuffer) return;
  Atomics.store(interruptBuffer, 1, reason);
  Atomics.store(interruptBuffer, 0, 2);
}

self.onmessage = (e: MessageEvent) => {
  const m = e.data;
  if (m.buffer) {
    interruptBuffer = m.buffer;
  } else if (m.arm !== undefined) {
    clearTimeout(deadline);
    armedSeq = m.seq;
    deadline = setTimeout(() => {
      interrupt(TIMEOUT);
      self.postMessage({ timeout: armedSeq });
    }, m.arm);
  } else if (m.disarm !== undefined) {
    if (m.disarm === armedSeq) clearTimeout(deadline);
  }
};

const decoder = new TextDecoder();
let pending = "";
for await (const chunk of Deno.stdin.readable) {
  pending += decoder.decode(chunk, { stream: true });
  let nl;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.length === 0) continue;
    // A cheap test first: only a short line can be the interrupt notification.
    if (line.length < 64 && line.includes('"interrupt"')) interrupt(REQUESTED);
    self.postMessage(line);
  }
}
self.postMessage({ eof: true });
