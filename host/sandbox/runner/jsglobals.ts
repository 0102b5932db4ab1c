// jsglobals.ts: what Python reaches through `import js`: the web platform,
// never Deno. fetch takes network URLs only (http:, https: and data:), so
// that no file of the host is read through it; timers that Python sets are
// tracked, so that they can be cleared with the rest of what the guest left
// running (see watchdog.ts).

// deno-lint-ignore no-explicit-any
type Any = any;

const NAMES = [
  "Object", "Array", "Promise", "JSON", "Math", "Date", "Error", "TypeError", "RangeError",
  "Symbol", "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "Number", "String", "Boolean",
  "BigInt", "Reflect", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Uint8Array",
  "Int8Array", "Uint16Array", "Int16Array", "Uint32Array", "Int32Array", "Float32Array",
  "Float64Array", "BigInt64Array", "BigUint64Array", "Uint8ClampedArray", "TextEncoder",
  "TextDecoder", "URL", "URLSearchParams", "Request", "Response", "Headers",
  "FormData", "Blob", "File", "AbortController", "AbortSignal", "ReadableStream",
  "WritableStream", "TransformStream", "WebSocket", "EventTarget", "Event", "crypto",
  "performance", "queueMicrotask", "structuredClone", "atob", "btoa", "console", "Intl",
  "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI", "isNaN", "isFinite",
  "parseInt", "parseFloat", "NaN", "Infinity", "undefined",
];

/** The URL schemes fetch accepts. */
export const FETCH_SCHEMES = ["http:", "https:", "data:"];

const realFetch = globalThis.fetch;

/** fetch for the guest: one Request is built from the arguments (so that
 * an object cannot name one URL when checked and another when used), and
 * its scheme must be a network one. */
export function guestFetch(input: Any, init?: Any): Promise<Response> {
  let req: Request;
  try {
    req = new Request(input, init);
  } catch (e) {
    return Promise.reject(e);
  }
  const scheme = new URL(req.url).protocol;
  if (!FETCH_SCHEMES.includes(scheme)) {
    return Promise.reject(
      new TypeError(`fetch: the ${scheme} scheme is not allowed in the sandbox (only http:, https: and data: URLs)`),
    );
  }
  return realFetch(req).catch((e: Any) => {
    if (e?.name === "NotCapable" || e?.name === "PermissionDenied") {
      const m = /net access to "([^"]+)"/.exec(String(e?.message ?? ""));
      denied.add(m ? m[1] : new URL(req.url).host);
    }
    throw e;
  });
}

/** Addresses Deno refused a guest fetch (the host's network rules), since
 * the last takeDenied(): an execution's error names them when a library
 * hid the refusal behind its own message (micropip does). */
const denied = new Set<string>();

export function takeDenied(): string[] {
  const out = [...denied];
  denied.clear();
  return out;
}

type Timer = ReturnType<typeof setTimeout>;

/** Timers set by the guest. */
const timers = new Set<Timer>();

let timerError: (e: unknown) => void = () => {};

/** Sets what happens to an error that a guest timer's callback throws (an
 * interrupt that landed in it, typically); it is not thrown further. */
export function onTimerError(f: (e: unknown) => void): void {
  timerError = f;
}

function guestTimer(real: (f: Any, ms?: number, ...a: Any[]) => Timer, repeat: boolean) {
  return (f: Any, ms?: number, ...args: Any[]) => {
    if (typeof f !== "function") throw new TypeError("the callback must be a function");
    const id: Timer = real(function (this: unknown, ...a: Any[]) {
      if (!repeat) timers.delete(id);
      try {
        return f.apply(this, a);
      } catch (e) {
        timerError(e);
      }
    }, ms, ...args);
    timers.add(id);
    return id;
  };
}

/** Clears every timer the guest set. */
export function clearGuestTimers(): number {
  const n = timers.size;
  for (const id of timers) clearTimeout(id);
  timers.clear();
  return n;
}

export function jsglobals(): Record<string, unknown> {
  const g: Record<string, unknown> = {};
  for (const name of NAMES) if (name in globalThis) g[name] = (globalThis as Any)[name];
  g.fetch = guestFetch;
  g.setTimeout = guestTimer(setTimeout as Any, false);
  g.setInterval = guestTimer(setInterval as Any, true);
  g.clearTimeout = (id: Timer) => {
    timers.delete(id);
    clearTimeout(id);
  };
  g.clearInterval = (id: Timer) => {
    timers.delete(id);
    clearInterval(id);
  };
  return g;
}
