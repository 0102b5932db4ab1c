// js.ts: JavaScript for Python: js(code, **kwargs) and require(name), as
// the JS module `_pbx_jsrt` (the Python half: python/_parselbox/javascript.py).
//
//   - js(): the code is the body of a fresh async function (a module of its
//     own, imported from a data: URL: the V8 flag that forbids eval and
//     Function also covers this runner, so code is compiled as a module).
//     Its parameters are resolvePath, sbx (sbx.progress), the aliases of
//     what require() loaded, then the keyword arguments. Compiled functions are kept by code, so a
//     repeated call compiles nothing.
//   - require(): local .js/.ts files are imported from their host path with a
//     fresh query each time (edits are picked up; Deno compiles TypeScript);
//     npm packages are read from the host's npm directory (init.npm.dir,
//     installed by the host before the sandbox started or on request), never
//     from the network.
//   - Values: results of js() cross as JSON text with bytes (typed arrays,
//     ArrayBuffer, DataView) as {"__b64__": ...}; a require()d module's
//     values are classified (classify) so that Python keeps class
//     instances, classes and functions as proxies.
//
// Guest JS runs in this process under its Deno permissions: the files
// granted (/workspace, /files, the mounts, read-only ones unwritable), the
// network rules, no environment, no processes, no FFI. resolvePath refuses
// a path whose symlinks lead out of its root.

import { Buffer } from "node:buffer";
import { createRequire } from "node:module";
import * as nodefs from "node:fs";
import nodeProcess from "node:process";
import type { Root } from "../hostfs.ts";
import { register, Runtime } from "../runtime.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const jsonStringify = JSON.stringify;
const MAX_COMPILED = 512;

/** The JSON text of a value, bytes as {"__b64__": base64}; undefined for
 * undefined (None in Python). */
export function toJSONText(v: unknown): string | undefined {
  return jsonStringify(v, function (_k: string, x: unknown) {
    if (x instanceof Uint8Array || ArrayBuffer.isView(x)) {
      const view = x as ArrayBufferView;
      return { __b64__: Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString("base64") };
    }
    if (x instanceof ArrayBuffer || x instanceof SharedArrayBuffer) {
      return { __b64__: Buffer.from(x as ArrayBuffer).toString("base64") };
    }
    return x;
  });
}

/** Whether f is a class, or a function whose prototype has methods (an ES5
 * constructor such as lodash's or expr-eval's Parser). */
function isClassLike(f: unknown): boolean {
  if (typeof f !== "function") return false;
  let src = "";
  try {
    src = Function.prototype.toString.call(f);
  } catch (_) { /* a proxy */ }
  if (/^class[\s{]/.test(src)) return true;
  const proto = (f as Any).prototype;
  if (!proto || typeof proto !== "object") return false;
  return Object.getOwnPropertyNames(proto).some((n) => n !== "constructor");
}

function isBinary(v: unknown): boolean {
  return ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof SharedArrayBuffer;
}

function toBytes(v: Any): Uint8Array {
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
  return new Uint8Array((v as ArrayBuffer).slice(0));
}

function isPlain(v: Any): boolean {
  if (Array.isArray(v)) return Object.getPrototypeOf(v) === Array.prototype;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

// Kinds of classified values, as Python reads them.
const VALUE = 0, JSONTEXT = 1, BYTES = 2, PROXY = 3, CLASS = 4, FUNCTION = 5;

/** How Python should see a JS value: [kind, value]. As an attribute
 * (attr=true) any object stays a proxy; as a call's result a plain object
 * or array becomes a dict or list. */
function classify(v: Any, attr: boolean): [number, Any] {
  if (v === null || v === undefined) return [VALUE, undefined];
  const t = typeof v;
  if (t === "string" || t === "number" || t === "boolean" || t === "bigint") return [VALUE, v];
  if (t === "symbol") return [VALUE, String(v)];
  if (t === "function") return [isClassLike(v) ? CLASS : FUNCTION, v];
  if (isBinary(v)) return [BYTES, toBytes(v)];
  if (!attr && isPlain(v)) {
    try {
      return [JSONTEXT, toJSONText(v)];
    } catch (_) {
      return [PROXY, v]; // cycles, BigInts: keep it as it is
    }
  }
  return [PROXY, v];
}

/** Calls fn; a class-like callee that returns undefined, or one that says
 * it needs `new`, is constructed instead. */
function callJS(fn: Any, thisArg: Any, args: Any[]): Any {
  const classLike = isClassLike(fn);
  let r: Any;
  try {
    r = Reflect.apply(fn, thisArg ?? undefined, args);
  } catch (e) {
    const msg = String((e as Error)?.message ?? "");
    if (e instanceof TypeError && (classLike || /without 'new'|requires 'new'/.test(msg))) {
      try {
        return Reflect.construct(fn, args);
      } catch (_) {
        throw e; // not a constructor after all: the call's own error
      }
    }
    throw e;
  }
  if (r === undefined && classLike) return Reflect.construct(fn, args);
  return r;
}

/** A short description of a JS value for repr(). */
function reprJS(v: Any): string {
  try {
    return Deno.inspect(v, { depth: 1, colors: false, breakLength: 120, iterableLimit: 20 }).slice(0, 2000);
  } catch (_) {
    return Object.prototype.toString.call(v);
  }
}

function ownKeys(v: Any): string[] {
  if (v === null || v === undefined) return [];
  const keys = new Set<string>(Object.keys(v));
  // Methods of class instances live on their prototypes.
  let p = Object.getPrototypeOf(v);
  for (let depth = 0; p && p !== Object.prototype && p !== Function.prototype && depth < 5; depth++) {
    for (const k of Object.getOwnPropertyNames(p)) if (k !== "constructor" && !k.startsWith("__")) keys.add(k);
    p = Object.getPrototypeOf(p);
  }
  return [...keys].sort();
}

// hideStdio gives guest JS (js(), require()d modules) a Deno.stdout (and a
// node process.stdout) that writes to stderr, as console.* does, and a
// Deno.stdin at its end: the process's own are the protocol channel, which
// channel.ts took at start. (Raw writes to file descriptor 1 remain possible
// for in-process JS, through node:fs or a Worker: the host reads such a line
// as guest text, since it does not start with the channel key; see
// channel.ts.)
function hideStdio(): void {
  const stderr = Deno.stderr;
  const out = Object.create(Object.getPrototypeOf(stderr));
  for (const k of ["write", "writeSync", "close", "isTerminal", "setRaw"]) {
    const f = (stderr as Any)[k];
    if (typeof f === "function") out[k] = f.bind(stderr);
  }
  Object.defineProperty(out, "writable", { get: () => stderr.writable });
  const inp = {
    read: () => Promise.resolve(null),
    readSync: () => null,
    close: () => {},
    isTerminal: () => false,
    setRaw: () => {},
    get readable() {
      return new ReadableStream({ start: (c) => c.close() });
    },
  };
  Object.defineProperty(Deno, "stdout", { value: out, writable: false, configurable: false });
  // node's process.stdout likewise (packages print with it).
  Object.defineProperty(nodeProcess, "stdout", { value: nodeProcess.stderr, writable: false, configurable: false });
  Object.defineProperty(Deno, "stdin", { value: inp, writable: false, configurable: false });
}

// trackWrites reports the files guest JS writes through Deno's own file
// functions in the execution's files, as Python's and bash's are (what it
// writes through anything else, node:fs included, changedSince finds).
function trackWrites(note: (host: string) => void): void {
  const pathOf = (p: unknown): string | null => {
    if (typeof p === "string") return p.startsWith("/") ? p : null;
    if (p instanceof URL && p.protocol === "file:") return decodeURIComponent(p.pathname);
    return null;
  };
  const wrap = (name: string, argIndex: number, writes: (args: Any[]) => boolean = () => true) => {
    const f = (Deno as Any)[name];
    if (typeof f !== "function") return;
    const wrapped = function (this: unknown, ...args: Any[]) {
      const r = f.apply(this, args);
      const path = pathOf(args[argIndex]);
      if (path && writes(args)) {
        if (r && typeof r.then === "function") {
          return r.then((v: Any) => {
            note(path);
            return v;
          });
        }
        note(path);
      }
      return r;
    };
    Object.defineProperty(Deno, name, { value: wrapped, writable: false, configurable: false });
  };
  const opensForWrite = (args: Any[]) => !!(args[1]?.write || args[1]?.append || args[1]?.create || args[1]?.truncate);
  for (const n of ["writeFile", "writeFileSync", "writeTextFile", "writeTextFileSync", "create", "createSync"]) wrap(n, 0);
  for (const n of ["open", "openSync"]) wrap(n, 0, opensForWrite);
  for (const n of ["copyFile", "copyFileSync", "rename", "renameSync"]) wrap(n, 1);
}

/** The most entries changedSince looks at in one execution. */
const MAX_SCAN = 50000;
/** File times come from the kernel's coarse clock, up to a tick behind
 * Date.now(): a file written just after `since` may be stamped a few
 * milliseconds before it. */
const CLOCK_SLACK_MS = 20;

/** The sandbox paths of the regular files in the writable roots whose
 * content or inode changed since `since` (ms since the epoch): what guest
 * JS wrote through any API (node:fs, file handles, streams, a Worker),
 * which HostFS does not see. Symlinks are not followed; .parselbox
 * directories are skipped, as HostFS.take does. (What changed them is not
 * known: a file the host wrote during the execution, or within the clock's
 * slack before it, is listed too.)
 *
 * seen holds what the previous call found (path -> the file's times, size
 * and inode) and is replaced: a file that an execution wrote within the
 * slack before the next one began is not listed again by the next one
 * unless it changed since. */
function changedSince(roots: Root[], since: number, seen: Map<string, string>, log: (m: string) => void): string[] {
  const out: string[] = [];
  const now = new Map<string, string>();
  let budget = MAX_SCAN;
  const walk = (dir: string, target: string) => {
    let entries: nodefs.Dirent[];
    try {
      entries = nodefs.readdirSync(dir, { withFileTypes: true });
    } catch (_) {
      return; // removed meanwhile, or unreadable
    }
    for (const e of entries) {
      if (--budget < 0) return;
      const host = dir + "/" + e.name, path = target + "/" + e.name;
      if (e.isDirectory()) {
        if (e.name !== ".parselbox") walk(host, path);
      } else if (e.isFile()) {
        try {
          const st = nodefs.lstatSync(host);
          if (Math.max(st.mtimeMs, st.ctimeMs) >= since - CLOCK_SLACK_MS) {
            const stamp = `${st.mtimeMs}/${st.ctimeMs}/${st.size}/${st.ino}`;
            now.set(path, stamp);
            if (seen.get(path) !== stamp) out.push(path);
          }
        } catch (_) { /* removed meanwhile */ }
      }
    }
  };
  for (const r of roots) if (!r.readOnly) walk(r.dir, r.target);
  if (budget < 0) log(`the files JS wrote: looked at the first ${MAX_SCAN} entries of the writable directories only`);
  seen.clear();
  for (const [k, v] of now) seen.set(k, v);
  return out;
}

register({
  name: "js",
  order: -2, // its interrupt hook runs before exec.ts cancels the task
  install(rt: Runtime) {
    hideStdio();
    trackWrites((host) => rt.fs.noteHostPath(host));

    // Files written by guest JS: once JS has run in this sandbox (its
    // timers, workers and streams may write later), each execution's result
    // lists the files of the writable roots changed since it began.
    let jsUsed = false;
    let began = 0;
    const seen = new Map<string, string>(); // changedSince's last findings
    const used = () => {
      jsUsed = true;
    };
    rt.hooks.begin.push(() => {
      began = Date.now();
    });
    rt.hooks.result.push((result) => {
      if (!jsUsed || began === 0) return;
      const files = result.files as string[];
      const known = new Set(files);
      for (const p of changedSince(rt.fs.roots, began, seen, (m) => rt.channel.log("warn", m))) {
        if (!known.has(p)) files.push(p);
      }
    });
    const compiled = new Map<string, Any>();
    const modules = new Map<string, Any>(); // alias -> module, in js() scope
    const waits = new Set<(v: Any) => void>();
    let version = 0;

    // An interrupt ends the js() calls Python waits for, with [2].
    rt.hooks.interrupt.push(() => {
      const n = waits.size;
      for (const w of waits) w([2]);
      waits.clear();
      return n;
    });

    /** The host path of a sandbox path (relative: to /workspace). */
    const resolvePath = (p: unknown): string => {
      let s = String(p ?? "");
      if (!s.startsWith("/")) s = "/workspace/" + s;
      const parts: string[] = [];
      for (const part of s.split("/")) {
        if (part === "" || part === ".") continue;
        if (part === "..") parts.pop();
        else parts.push(part);
      }
      const path = "/" + parts.join("/");
      const [root, rel] = rt.fs.locate(path);
      if (!root) {
        const mounts = rt.fs.roots.map((r) => r.target).join(", ");
        throw new Error(
          `"${s}" is in-memory (MEMFS). Read it in Python and pass to js() as a kwarg instead. ` +
            `Note: Deno streams require mounted paths.: ${mounts}`,
        );
      }
      const host = rel === "" ? root.dir : root.dir + "/" + rel;
      // A symlink on the way must not lead out of the root.
      let real = "";
      for (let cur = host; cur.length >= root.dir.length; cur = cur.slice(0, cur.lastIndexOf("/"))) {
        try {
          real = nodefs.realpathSync(cur) + host.slice(cur.length);
          break;
        } catch (_) { /* not there yet: check its parent */ }
      }
      if (real && real !== root.dir && !real.startsWith(root.dir + "/")) {
        throw new Error(`"${s}" leads out of ${root.target} through a symlink`);
      }
      return host;
    };

    const compile = async (code: string, names: string[]): Promise<Any> => {
      const key = names.join(",") + "\n" + code;
      let fn = compiled.get(key);
      if (fn) return fn;
      const src = `export default async function (${names.join(", ")}) {\n${code}\n}\n`;
      const mod = await import("data:text/javascript;base64," + Buffer.from(src).toString("base64"));
      fn = mod.default;
      if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
      compiled.set(key, fn);
      return fn;
    };

    // sbx in js(): sbx.progress(done, total, message), as in Python (a
    // call of the host's sbx.progress; its promise settles when the host
    // has it, awaiting it is optional).
    const sbx = Object.freeze({
      progress: async (done: unknown, total?: unknown, message?: unknown): Promise<void> => {
        const kwargs: Record<string, unknown> = { done };
        if (total !== undefined && total !== null) kwargs.total = total;
        if (message !== undefined && message !== null) kwargs.message = String(message).slice(0, 2000);
        const o = await rt.channel.request("call", { path: "sbx.progress", args: [], kwargs }, false);
        if (!o.ok) throw new Error("error" in o ? `${o.error.type}: ${o.error.message}` : "interrupted");
      },
    });

    // js(code, names, values): [0, json text or undefined] | [2] (interrupted).
    const run = (code: string, names: Any, values: Any): Promise<Any[]> => {
      used();
      const ns = ["resolvePath", "sbx", ...modules.keys()];
      const vs: Any[] = [resolvePath, sbx, ...modules.values()];
      const kw: string[] = Array.from(names ?? [], String);
      const kv: Any[] = Array.from(values ?? []);
      for (let i = 0; i < kw.length; i++) {
        const at = ns.indexOf(kw[i]);
        if (at >= 0) vs[at] = kv[i]; // kwargs win
        else {
          ns.push(kw[i]);
          vs.push(kv[i]);
        }
      }
      return new Promise((resolve, reject) => {
        waits.add(resolve);
        compile(String(code), ns)
          .then((fn) => fn(...vs))
          .then((v) => [0, toJSONText(v)], (e) => Promise.reject(e))
          .then((r) => {
            if (waits.delete(resolve)) resolve(r);
          }, (e) => {
            if (waits.delete(resolve)) reject(e);
          });
      });
    };

    // Awaits a promise that Python waits for: [0, value] | [2].
    const wait = (p: Any): Promise<Any[]> =>
      new Promise((resolve, reject) => {
        waits.add(resolve);
        Promise.resolve(p).then((v) => {
          if (waits.delete(resolve)) resolve([0, v]);
        }, (e) => {
          if (waits.delete(resolve)) reject(e);
        });
      });

    const npmDir = rt.npmDir;
    const npmRequire = npmDir ? createRequire(npmDir + "/package.json") : null;

    // npm(name): [0, module] | [1, "missing"] when it is not installed.
    const npm = async (name: string): Promise<Any[]> => {
      used();
      if (!npmRequire) return [1, "missing"];
      let path: string;
      try {
        path = npmRequire.resolve(name);
      } catch (e) {
        const code = (e as Any)?.code;
        // (Before the first install, the lookup climbs out of the npm directory.)
        if (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND" || e instanceof Deno.errors.NotCapable) {
          return [1, "missing"];
        }
        throw e;
      }
      let mod: Any;
      try {
        mod = npmRequire(name);
      } catch (e) {
        if ((e as Any)?.code !== "ERR_REQUIRE_ESM") throw e;
        mod = await import(new URL("file://" + path).href);
      }
      return [0, unwrapDefault(mod)];
    };

    // local(path): a .js/.ts module by its sandbox path, fresh each time.
    const local = async (path: string): Promise<Any> => {
      used();
      const host = resolvePath(path);
      const url = new URL("file://" + host);
      url.search = `parselbox=${++version}`;
      return unwrapDefault(await import(url.href));
    };

    const unwrapDefault = (mod: Any): Any => {
      const d = mod?.default;
      if (d !== undefined && d !== null && (typeof d === "object" || typeof d === "function")) return d;
      return mod;
    };

    rt.py.registerJsModule("_pbx_jsrt", {
      run,
      wait,
      npm,
      local,
      resolve_path: resolvePath,
      set_alias: (alias: string, mod: Any) => {
        modules.set(String(alias), mod);
      },
      classify: (v: Any, attr: boolean) => classify(v, !!attr),
      get: (obj: Any, name: Any) => classify(obj?.[name], true),
      has: (obj: Any, name: Any) => obj !== null && obj !== undefined && name in Object(obj),
      set: (obj: Any, name: Any, value: Any) => {
        obj[name] = value;
      },
      call: (fn: Any, thisArg: Any, args: Any) => {
        const r = callJS(fn, thisArg, Array.from(args ?? []));
        return [r !== null && typeof r?.then === "function" ? 1 : 0, r];
      },
      repr: reprJS,
      keys: ownKeys,
      is_class: isClassLike,
      json: (v: Any) => toJSONText(v),
    });
  },
});
