// wasm.ts: WebAssembly modules from the sandbox's files
// (PARSELBOX-BEHAVIOUR.md §18). loadWasm(fs, path) compiles the module at a
// sandbox path (cached per path, recompiled when its size or modification
// time changes) and tells what it is:
//
//   - a library (no imports): instantiated; its exports are the library;
//   - a WASI command (WASI imports, or none, and a _start export): run with
//     runWasi (wasi.ts), as many times as asked;
//   - anything else is refused with an error that says why: imports from
//     another namespace (instantiate it in js() with an import object), or
//     a WASI reactor (no _start).
//
// It is the one loader for every caller: Python's load_wasm
// (_parselbox/wasm.py, through features/wasm.ts), require("x.wasm") in js(),
// and bash(), where every directory's bin/NAME.wasm is the command NAME.

import * as nodefs from "node:fs";
import { normalize } from "./bashfs.ts";
import { FsError, HostFS, S_IFDIR, S_IFLNK, S_IFMT } from "./hostfs.ts";
import { runWasi, WASI_NAMESPACES, WasiOptions, WasiResult } from "./wasi.ts";

export type Loaded =
  | { kind: "library"; name: string; path: string; exports: WebAssembly.Exports }
  | { kind: "command"; name: string; path: string; module: WebAssembly.Module };

interface Cached {
  size: number;
  mtimeMs: number;
  module: WebAssembly.Module;
}

const cache = new Map<string, Cached>();

/** The file stem of a path: /workspace/bin/greet.wasm → greet. */
export function stem(path: string): string {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return base.endsWith(".wasm") ? base.slice(0, -5) : base;
}

// readModule reads a module's bytes through the HostFS (its rules apply:
// a link out of a root is refused) and compiles them, or takes them from
// the cache.
function compile(fs: HostFS, path: string): WebAssembly.Module {
  let [root, rel] = fs.locate(path);
  if (!root) throw new Error(`"${path}" is not in /workspace, /files or a mount: no such file`);
  let st: nodefs.Stats;
  try {
    st = fs.lstat(root, rel);
    if ((st.mode & S_IFMT) === S_IFLNK) {
      [root, rel] = fs.locate(fs.readlink(root, rel));
      if (!root) throw new FsError("EACCES");
      st = fs.lstat(root, rel);
    }
  } catch (e) {
    throw new Error(`"${path}": ${describe(e)}`);
  }
  if ((st.mode & S_IFMT) === S_IFDIR) throw new Error(`"${path}" is a directory`);
  const key = root.target + "/" + rel;
  const hit = cache.get(key);
  if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.module;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    const fd = fs.open(root, rel, nodefs.constants.O_RDONLY);
    try {
      bytes = new Uint8Array(fs.fstat(fd).size);
      let off = 0;
      while (off < bytes.length) {
        const n = fs.read(fd, bytes, off, bytes.length - off, off);
        if (n === 0) break;
        off += n;
      }
    } finally {
      fs.close(fd);
    }
  } catch (e) {
    throw new Error(`"${path}": ${describe(e)}`);
  }
  let module: WebAssembly.Module;
  try {
    module = new WebAssembly.Module(bytes);
  } catch (e) {
    throw new Error(`"${path}" is not a valid WebAssembly module: ${(e as Error)?.message ?? e}`);
  }
  cache.set(key, { size: st.size, mtimeMs: st.mtimeMs, module });
  return module;
}

function describe(e: unknown): string {
  const code = e instanceof FsError ? e.code : "";
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES") return "permission denied";
  return code || String((e as Error)?.message ?? e);
}

/** loadWasm loads the module at a sandbox path (relative paths are in
 * /workspace). It throws an Error whose message is for the user. */
export function loadWasm(fs: HostFS, path: string): Loaded {
  const p = normalize(path.startsWith("/") ? path : "/workspace/" + path);
  const module = compile(fs, p);
  const name = stem(p);
  const namespaces = [...new Set(WebAssembly.Module.imports(module).map((i) => i.module))];
  const foreign = namespaces.filter((n) => !WASI_NAMESPACES.includes(n));
  if (foreign.length > 0) {
    throw new Error(
      `"${path}" imports from [${foreign.join(", ")}] — only self-contained and WASI ` +
        `(wasi_snapshot_preview1) modules are supported. Instantiate it in js() with a custom import object instead.`,
    );
  }
  const hasStart = WebAssembly.Module.exports(module).some((e) => e.name === "_start" && e.kind === "function");
  if (namespaces.length > 0 && !hasStart) {
    throw new Error(`"${path}" is a WASI reactor module (WASI imports, no _start export): not supported yet; only WASI commands are`);
  }
  if (hasStart) return { kind: "command", name, path: p, module };
  return { kind: "library", name, path: p, exports: new WebAssembly.Instance(module, {}).exports };
}

export interface CommandOptions {
  args?: string[];
  stdin?: Uint8Array;
  env?: Record<string, string>;
  preopens?: Record<string, string>; // guest path → sandbox directory
  argv0?: string;
}

/** runCommand runs a WASI command: argv = [argv0 or name, ...args]; env =
 * HOME=/ and LANG=C.UTF-8 overlaid by env; fds 3 and 4 are "/" and "."
 * (/workspace), then the extra preopens. */
export function runCommand(fs: HostFS, cmd: Loaded & { kind: "command" }, o: CommandOptions = {}): WasiResult {
  const preopens: [string, string][] = [["/", "/"], [".", "/workspace"]];
  for (const [guest, dir] of Object.entries(o.preopens ?? {})) {
    preopens.push([guest, normalize(dir.startsWith("/") ? dir : "/workspace/" + dir)]);
  }
  const w: WasiOptions = {
    args: [o.argv0 || cmd.name, ...(o.args ?? [])],
    env: { HOME: "/", LANG: "C.UTF-8", ...(o.env ?? {}) },
    stdin: o.stdin ?? new Uint8Array(0),
    preopens,
  };
  return runWasi(fs, cmd.module, w);
}

/** The bin/*.wasm of every root, as [name, sandbox path], the first root
 * (in the roots' order: /workspace, /files, the mounts) winning a name. */
export function binCommands(fs: HostFS): [string, string][] {
  const out = new Map<string, string>();
  for (const root of fs.roots) {
    let names: string[];
    try {
      names = fs.readdir(root, "bin");
    } catch (_) {
      continue;
    }
    for (const n of names.sort()) {
      if (n.endsWith(".wasm") && n.length > 5 && !out.has(stem(n))) out.set(stem(n), `${root.target}/bin/${n}`);
    }
  }
  return [...out];
}
