// channel.ts: the protocol with the host, newline-delimited JSON on
// stdin/stdout (see ../doc.go for the message set).
//
// Every line written is JSON.stringify of a structure built here from
// parsed values: nothing that Python produced is ever written as text, so
// no value can end a line early or forge a message. Every line read is
// parsed with JSON.parse and dispatched on its fields, never matched as
// text. The main thread reads stdin itself; interrupts, which must work
// while Python keeps this thread busy, come on a separate pipe that the
// watchdog reads (watchdog.ts).
//
// Guest JS (js(), require()d modules) runs in this isolate and can write
// to file descriptor 1 too (node:fs.writeSync(1, ...), a Worker of its
// own): the host trusts a line only if it starts with the channel key, a
// random 128-bit value the host sent in init, which only the Channel
// instance holds (in a private field; main.ts creates the instance, no
// module exports one, so import() of a runner file by the guest finds no
// way to it). Whatever else reaches stdout is guest text to the host. The
// key never passes through anything the guest can replace: what writes a
// line (JSON.stringify, TextEncoder's encode, the typed-array functions,
// Atomics, the stdout write) is taken here, when this module is evaluated,
// before any guest code runs, and used as captured. Before a message is
// encoded, the runner checks that JSON.stringify will call no guest code on
// its own objects (tampered); if the guest made it so, the runner tells the
// host with a fixed fatal line and exits: the host restarts the sandbox.

// The process's stdin and stdout, taken before any guest code runs: the
// guest's Deno.stdin and Deno.stdout are not these (features/js.ts).
const stdin = Deno.stdin, stdout = Deno.stdout;

// What writing and reading a line uses, captured (see above).
// deno-lint-ignore no-explicit-any
const uncurry = Function.prototype.bind.bind(Function.prototype.call) as (f: any) => (self: any, ...a: any[]) => any;
const stringify = JSON.stringify;
const parse = JSON.parse;
const Bytes = Uint8Array;
const Buf = ArrayBuffer;
const TypedArray = Object.getPrototypeOf(Uint8Array.prototype);
const byteLength = uncurry(Object.getOwnPropertyDescriptor(TypedArray, "length")!.get!) as (b: Uint8Array) => number;
const setBytes = uncurry(TypedArray.set) as (dst: Uint8Array, src: Uint8Array, at: number) => void;
const textEncoder = new TextEncoder();
const encodeText = textEncoder.encode.bind(textEncoder);
const textDecoder = new TextDecoder();
const decodeText = textDecoder.decode.bind(textDecoder);
const writeOut = stdout.writeSync.bind(stdout);
const { compareExchange, wait: atomicWait, store: atomicStore, notify: atomicNotify } = Atomics;
const hexDigits = /^[0-9a-f]+$/;
const regexpTest = uncurry(RegExp.prototype.test) as (re: RegExp, s: string) => boolean;

const getOwnProperty = Object.getOwnPropertyDescriptor;
const getPrototype = Object.getPrototypeOf;
const ObjectPrototype = Object.prototype, ArrayPrototype = Array.prototype;
const exit: typeof Deno.exit = Deno.exit; // typed: a call to it ends the flow (never)

/** Why JSON.stringify of the runner's messages (plain objects and arrays)
 * could call guest code, or "": a toJSON on Object.prototype or
 * Array.prototype, or another prototype under Array.prototype. A guest
 * that put one there could rewrite every message the runner sends. (Cheaper
 * than locking toJSON on them: an accessor there takes V8's JSON.stringify
 * off its fast path, 6 times slower on a result of many small objects.) */
function tampered(): string {
  if (getOwnProperty(ObjectPrototype, "toJSON")) return "Object.prototype.toJSON";
  if (getOwnProperty(ArrayPrototype, "toJSON")) return "Array.prototype.toJSON";
  if (getPrototype(ArrayPrototype) !== ObjectPrototype) return "the prototype of Array.prototype";
  return "";
}

/** The key's length in characters (hex of 128 bits). */
export const KEY_LENGTH = 32;

// deno-lint-ignore no-explicit-any
type Any = any;

/** An error reply: the Python exception the other side should see. */
export interface ErrorBody {
  type: string;
  message: string;
  traceback?: string;
}

/** A request handler's failure with a Python exception type. */
export class RemoteError extends Error {
  constructor(readonly type: string, message: string) {
    super(message);
  }
}

/** A line that would exceed max_message_size. */
export class MessageTooLarge extends Error {
  constructor(readonly size: number, readonly limit: number) {
    super(`a message of ${size} bytes is over the max_message_size limit of ${limit} bytes`);
  }
}

/** How a request from the sandbox ended: the host's result, its error, or
 * an interrupt of the execution that waited for it. */
export type Outcome =
  | { ok: true; result: unknown }
  | { ok: false; error: ErrorBody }
  | { ok: false; interrupted: true };

type RequestHandler = (params: Any, id: number) => unknown;
type NotificationHandler = (params: Any) => void;

interface Pending {
  resolve: (o: Outcome) => void;
  // An interrupt resolves the requests that Python waits for synchronously
  // (calls that look synchronous), never the awaits of background tasks.
  sync: boolean;
}

// Slots of the shared control array used here (the rest: watchdog.ts).
export const LOCK = 3; // stdout: 0 free, 1 main thread, 2 watchdog

export class Channel {
  /** The largest line either way, in bytes (max_message_size). */
  maxMessage = 64 << 20;
  private nextID = 1;
  private pending = new Map<number, Pending>();
  private requests = new Map<string, RequestHandler>();
  private notifications = new Map<string, NotificationHandler>();
  private queue: Any[] | null = []; // lines that arrived before serving began
  private waiter: ((m: Any) => void) | null = null;
  private ctl: Int32Array | null = null;
  #prefix: Uint8Array | null = null; // "\n" and the key
  /** Called when the host closes stdin. */
  onEOF: () => void = () => Deno.exit(0);

  /** Shares the stdout lock with the watchdog, which writes from its
   * thread, and gives it the line prefix (once: at boot, before any guest
   * code runs). */
  shareLock(ctl: Int32Array): Uint8Array {
    if (this.ctl) throw new Error("the stdout lock is shared already");
    if (!this.#prefix) throw new Error("the channel has no key yet");
    this.ctl = ctl;
    return new Bytes(this.#prefix);
  }

  /** Serves a request method: the handler's value (or promise) is the
   * result; a RemoteError or any other exception is the error reply. */
  handle(method: string, fn: RequestHandler): void {
    if (this.requests.has(method)) throw new Error(`method ${method} registered twice`);
    this.requests.set(method, fn);
  }

  /** Serves a notification method. */
  on(method: string, fn: NotificationHandler): void {
    this.notifications.set(method, fn);
  }

  /** Takes the channel key (init's channel_key), once: from now on every
   * line written starts with it. */
  setKey(key: unknown): void {
    if (this.#prefix) throw new Error("the channel key is set already");
    if (typeof key !== "string" || key.length !== KEY_LENGTH || !regexpTest(hexDigits, key)) {
      throw new Error("init: channel_key must be 32 hexadecimal digits");
    }
    // A newline first: it ends whatever text the guest left unfinished on
    // stdout, so that this line starts on a line of its own.
    this.#prefix = encodeText("\n" + key);
  }

  /** Encodes one message as a line (without the key), or throws
   * MessageTooLarge. */
  encode(msg: object): Uint8Array {
    const what = tampered();
    if (what) this.die(`guest code replaced ${what}, which the sandbox's messages rely on`);
    const bytes = encodeText(stringify(msg) + "\n");
    const n = byteLength(bytes);
    if (n > this.maxMessage) throw new MessageTooLarge(n, this.maxMessage);
    return bytes;
  }

  /** Tells the host the sandbox failed fatally, in a line built from
   * strings only, and exits. */
  die(message: string): never {
    try {
      this.write(encodeText(`{"method":"fatal","params":{"message":${stringify(message)}}}\n`));
    } finally {
      exit(70);
    }
  }

  /** Writes an encoded line, whole, after the key, holding the stdout
   * lock. Nothing here calls what the guest could have replaced. */
  write(bytes: Uint8Array): void {
    const prefix = this.#prefix;
    if (!prefix) throw new Error("the channel has no key yet");
    const head = byteLength(prefix), n = head + byteLength(bytes);
    const buf = new Buf(n);
    const line = new Bytes(buf);
    setBytes(line, prefix, 0);
    setBytes(line, bytes, head);
    const ctl = this.ctl;
    if (ctl) {
      while (compareExchange(ctl, LOCK, 0, 1) !== 0) atomicWait(ctl, LOCK, 2, 5);
    }
    try {
      let off = 0;
      while (off < n) off += writeOut(off === 0 ? line : new Bytes(buf, off));
    } finally {
      if (ctl) {
        atomicStore(ctl, LOCK, 0);
        atomicNotify(ctl, LOCK);
      }
    }
  }

  send(msg: object): void {
    this.write(this.encode(msg));
  }

  notify(method: string, params: object): void {
    this.send({ method, params });
  }

  /** A diagnostic of the runner itself, logged by the host at its level. */
  log(level: "debug" | "info" | "warn" | "error", message: string): void {
    try {
      this.notify("log", { level, message: String(message).slice(0, 4096) });
    } catch (_) { /* stdout gone: nothing to tell */ }
  }

  reply(id: number, result: unknown): void {
    this.send({ id, result: result === undefined ? null : result });
  }

  replyError(id: number, err: ErrorBody): void {
    const error: ErrorBody = { type: String(err.type), message: String(err.message) };
    if (err.traceback) error.traceback = String(err.traceback);
    this.send({ id, error });
  }

  /** Sends a request to the host; the promise resolves with its outcome
   * (it never rejects for the host's errors). */
  request(method: string, params: unknown, sync: boolean): Promise<Outcome> {
    const id = this.nextID++;
    const line = this.encode({ id, method, params }); // throws before anything is pending
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, sync });
      this.write(line);
    });
  }

  /** Ends every synchronous wait with an interrupt, and tells the host it
   * may stop serving them. Returns how many there were. */
  interruptWaits(): number {
    const ids: number[] = [];
    for (const [id, p] of this.pending) {
      if (!p.sync) continue;
      this.pending.delete(id);
      ids.push(id);
      p.resolve({ ok: false, interrupted: true });
    }
    if (ids.length > 0) this.notify("cancel", { ids });
    return ids.length;
  }

  /** The next message before serving begins (the boot reads init so). */
  next(): Promise<Any> {
    const q = this.queue!;
    if (q.length > 0) return Promise.resolve(q.shift());
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** Begins dispatching, first the messages that waited. */
  serve(): void {
    const q = this.queue ?? [];
    this.queue = null;
    for (const m of q) this.dispatch(m);
  }

  private accept(msg: Any): void {
    if (this.queue === null) return this.dispatch(msg);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(msg);
    } else this.queue.push(msg);
  }

  private dispatch(msg: Any): void {
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      this.log("warn", "ignoring a message that is not an object");
      return;
    }
    const hasID = Object.hasOwn(msg, "id");
    if (hasID && !Number.isSafeInteger(msg.id)) {
      this.log("warn", "ignoring a message with a bad id");
      return;
    }
    if (!Object.hasOwn(msg, "method")) return this.settle(msg);
    if (typeof msg.method !== "string") {
      this.log("warn", "ignoring a message with a bad method");
      return;
    }
    if (!hasID) {
      const h = this.notifications.get(msg.method);
      if (h) this.guard(() => h(msg.params ?? {}), undefined);
      else this.log("debug", `ignoring the notification ${stringify(msg.method)}`);
      return;
    }
    const h = this.requests.get(msg.method);
    if (!h) {
      this.replyError(msg.id, { type: "LookupError", message: `unknown method: ${msg.method}` });
      return;
    }
    this.guard(() => h(msg.params ?? {}, msg.id), msg.id);
  }

  // guard runs a handler and turns what it returns or throws into the reply.
  private guard(f: () => unknown, id: number | undefined): void {
    const fail = (e: unknown) => {
      if (id === undefined) return this.log("warn", `handler failed: ${String(e)}`);
      if (e instanceof RemoteError) this.replyError(id, { type: e.type, message: e.message });
      else this.replyError(id, { type: "SandboxError", message: String((e as Error)?.message ?? e) });
    };
    let r: unknown;
    try {
      r = f();
    } catch (e) {
      return fail(e);
    }
    if (id === undefined || r === NO_REPLY) return;
    if (r instanceof Promise) {
      r.then((v) => v !== NO_REPLY && this.reply(id, v), fail);
    } else this.reply(id, r);
  }

  // settle delivers a response to the request it answers.
  private settle(msg: Any): void {
    const p = this.pending.get(msg.id);
    if (!p) return; // interrupted meanwhile, or not ours
    this.pending.delete(msg.id);
    if (Object.hasOwn(msg, "error")) {
      const e = msg.error ?? {};
      p.resolve({
        ok: false,
        error: { type: String(e.type ?? "RuntimeError"), message: String(e.message ?? "") },
      });
    } else p.resolve({ ok: true, result: msg.result ?? null });
  }

  /** Reads stdin until EOF, one message per line. */
  async read(): Promise<void> {
    let parts: Uint8Array[] = [];
    let size = 0;
    let skipping = false; // within a line over the limit
    const line = (chunk: Uint8Array) => {
      let bytes = chunk;
      if (parts.length > 0) {
        bytes = new Uint8Array(size + chunk.length);
        let off = 0;
        for (const p of parts) {
          bytes.set(p, off);
          off += p.length;
        }
        bytes.set(chunk, off);
        parts = [];
        size = 0;
      }
      if (bytes.length === 0) return;
      let msg: Any;
      try {
        msg = parse(decodeText(bytes));
      } catch (_) {
        this.log("warn", "ignoring a line that is not JSON");
        return;
      }
      this.accept(msg);
    };
    for await (const chunk of stdin.readable) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl < 0) {
          if (!skipping && chunk.length > start) {
            size += chunk.length - start;
            if (size > this.maxMessage) {
              this.log("error", `dropping a message over the max_message_size limit (${this.maxMessage} bytes)`);
              parts = [];
              size = 0;
              skipping = true;
            } else parts.push(chunk.slice(start));
          }
          break;
        }
        if (skipping) skipping = false;
        else if (size + nl - start > this.maxMessage) {
          this.log("error", `dropping a message over the max_message_size limit (${this.maxMessage} bytes)`);
          parts = [];
          size = 0;
        } else line(chunk.subarray(start, nl));
        start = nl + 1;
      }
    }
    this.onEOF();
  }
}

/** Returned by a request handler that replies by itself (see exec). */
export const NO_REPLY = Symbol("no reply");

