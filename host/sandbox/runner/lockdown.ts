// lockdown.ts: once booted, the sandbox reads only /workspace, /files and
// its mounts, and sees no host path.
//
//   - Deno's read permission for the runtime (the runner's files, the
//     snapshot, Pyodide's data files) and for the interrupt pipe (which the
//     watchdog's thread holds open) is revoked; nothing needs them after
//     boot. (A runtime path that lies inside a granted directory, or holds
//     one, cannot be revoked alone: Deno revokes the whole grant. It stays,
//     and the host is told.)
//   - JS stack traces name no host path: runtime files appear as
//     parselbox:/ and pyodide:/ URLs. The formatter cannot be replaced.
//   - Pyodide's ways to reach the host file system without HostFS (NODEFS
//     and the other host drivers, even called without a mount; mountNodeFS;
//     Emscripten's preloading; loading packages from paths or URLs) are
//     gone; FS.mount takes MEMFS only. Packages are the host's job (what
//     micropip downloads under the network rules it may still install).
//   - No process: Emscripten's system() (which C code reaches through
//     ctypes) calls node:child_process, which Deno refuses by throwing out
//     of the WebAssembly import, a fatal error for the interpreter. The
//     module's functions are replaced: spawnSync reports a command that
//     could not run (status 127), the others throw, and Python lives on.
//   - Pyodide's configuration holds no host path (nor the snapshot's bytes,
//     which it would keep in memory for nothing).

import { createRequire } from "node:module";
import type { Channel } from "./channel.ts";
import type { HostFS } from "./hostfs.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

export interface RuntimePaths {
  runnerDir: string;
  pyodideDir: string;
  snapshot?: string;
  pyodideFiles: string[]; // the data files read at boot
  cacheDir?: string; // DENO_DIR's parent: the host's cache directory
  interruptPipe?: string; // the watchdog's pipe (/dev/fd/3), open in its thread
}

export function lockdown(py: Any, fs: HostFS, paths: RuntimePaths, channel: Channel): void {
  hideStackPaths(fs, paths);
  closeFileSystems(py);
  closeProcesses();
  scrubConfig(py, paths);
  revoke(fs, paths, channel);
}

function hideStackPaths(fs: HostFS, p: RuntimePaths): void {
  const subs: [string, string][] = [
    [p.runnerDir, "parselbox:"],
    [p.pyodideDir, "pyodide:"],
  ];
  if (p.cacheDir) subs.push([p.cacheDir, "cache:"]);
  for (const r of fs.roots) subs.push([r.dir, r.target]);
  subs.sort((a, b) => b[0].length - a[0].length);
  const hide = (s: string) => {
    for (const [host, shown] of subs) {
      s = s.replaceAll("file://" + host, shown).replaceAll(host, shown);
    }
    return s;
  };
  Object.defineProperty(Error, "prepareStackTrace", {
    value: (err: Error, frames: unknown[]) => {
      let head: string;
      try {
        head = `${err?.name ?? "Error"}: ${err?.message ?? ""}`;
      } catch (_) {
        head = "Error";
      }
      return hide(head + frames.map((f) => `\n    at ${f}`).join(""));
    },
    writable: false,
    configurable: false,
  });
}

function refuse(what: string) {
  return () => {
    throw new Error(`${what} is not available in the sandbox (the host installs packages and mounts)`);
  };
}

// The Emscripten drivers that reach the host's files (NODEFS and the
// like). Besides FS.filesystems, the module exports each by name, and a
// driver's functions work without a mount (a hand-made node is enough):
// every function of theirs is replaced, and the exports are removed.
const HOST_DRIVERS = ["NODEFS", "NODERAWFS", "PROXYFS", "IDBFS", "WORKERFS", "OPFS"];

// The loaders that read a path or URL of the host into the in-memory file
// system (Emscripten's preloading), on FS and as module exports.
const LOADERS = ["createPreloadedFile", "preloadFile", "createLazyFile", "forceLoadFile"];

function closeFileSystems(py: Any): void {
  const FS = py.FS;
  const MEMFS = FS.filesystems.MEMFS;
  for (const name of Object.keys(FS.filesystems)) if (name !== "MEMFS") delete FS.filesystems[name];
  const module = py._module;
  for (const name of HOST_DRIVERS) {
    const driver = module?.[name];
    if (driver && typeof driver === "object") disable(driver, name);
    try {
      delete module[name];
    } catch (_) { /* not configurable: disabled above */ }
  }
  for (const name of LOADERS) {
    if (typeof FS[name] === "function") FS[name] = refuse(`FS.${name}`);
    if (module && typeof module["FS_" + name] === "function") module["FS_" + name] = refuse(`FS.${name}`);
  }
  const mount = FS.mount;
  FS.mount = (type: Any, opts: Any, mountpoint: string) => {
    if (type !== MEMFS) throw new Error("FS.mount: only MEMFS can be mounted in the sandbox");
    return mount.call(FS, type, opts, mountpoint);
  };
  for (const name of ["mountNodeFS", "mountNativeFS", "loadPackage", "loadPackagesFromImports"]) {
    if (name in py) py[name] = refuse(name);
  }
  // _api.install stays: it unpacks wheel bytes the guest already holds into
  // the in-memory file system and loads their shared libraries from there,
  // which Python can do by itself (zipfile, ctypes); micropip uses it.
  const api = py._api;
  for (const name of ["loadPackage", "loadBinaryFile", "loadPackagesFromImports"]) {
    if (api && typeof api[name] === "function") api[name] = refuse(name);
  }
}

// disable replaces every function of a driver, and of its node and stream
// operations, with one that refuses.
function disable(driver: Any, name: string): void {
  for (const obj of [driver, driver.node_ops, driver.stream_ops]) {
    if (!obj || typeof obj !== "object") continue;
    for (const key of Object.keys(obj)) {
      if (typeof obj[key] === "function") obj[key] = refuse(`${name}.${key}`);
    }
  }
}

function closeProcesses(): void {
  const cp = createRequire(import.meta.url)("node:child_process");
  const why = "processes cannot be started in the sandbox";
  for (const name of Object.keys(cp)) {
    if (typeof cp[name] !== "function" || /^[A-Z]/.test(name)) continue;
    cp[name] = name === "spawnSync"
      ? () => ({ pid: 0, output: [null, null, null], stdout: null, stderr: null, status: 127, signal: null, error: new Error(why) })
      : () => {
        throw new Error(`child_process.${name}: ${why}`);
      };
  }
}

function scrubConfig(py: Any, p: RuntimePaths): void {
  const config = py._api?.config;
  if (!config) return;
  // The snapshot's header (python.ts), kept by Pyodide after the restore.
  delete config._loadSnapshot;
  for (const key of Object.keys(config)) {
    const v = config[key];
    if (typeof v === "string" && (v.includes(p.pyodideDir) || v.includes(p.runnerDir) || v.startsWith("file:"))) {
      config[key] = key === "indexURL" ? "pyodide:/" : "";
    }
  }
}

function runtimePaths(p: RuntimePaths): string[] {
  const paths = [p.runnerDir, ...p.pyodideFiles];
  if (p.snapshot) paths.push(p.snapshot);
  return paths;
}

/** The runtime's files that Deno would still let the sandbox read. */
export function readableRuntime(p: RuntimePaths): string[] {
  return runtimePaths(p).filter((path) => Deno.permissions.querySync({ name: "read", path }).state === "granted");
}

function revoke(fs: HostFS, p: RuntimePaths, channel: Channel): void {
  const paths = runtimePaths(p);
  const within = (a: string, b: string) => a === b || a.startsWith(b + "/");
  for (const path of paths) {
    const root = fs.roots.find((r) => within(path, r.dir) || within(r.dir, path));
    if (root) {
      channel.log("warn", `${path} stays readable: it lies in or holds the directory of ${root.target}`);
      continue;
    }
    Deno.permissions.revokeSync({ name: "read", path });
  }
  // The watchdog's thread opened the interrupt pipe under its own
  // permissions; nothing else may read it (guest code would take the
  // host's interrupt requests).
  if (p.interruptPipe) Deno.permissions.revokeSync({ name: "read", path: p.interruptPipe });
}
