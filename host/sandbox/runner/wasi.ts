// wasi.ts: WASI preview1 (and the older wasi_unstable) for command
// modules, over the sandbox's file system. A guest path is a sandbox path:
// the preopened "/" is the sandbox's root (not the host's), "." is
// /workspace, and only /workspace, /files and the mounts hold files; every
// file operation goes through the HostFS, so its rules hold (confinement,
// read-only roots, masked modes, quota) and what the program writes is
// reported with the execution's files. No sockets; poll_oneoff returns at
// once (no real sleeping); calls not implemented return ENOSYS and are
// listed in the result's `missing`.
//
// A program runs synchronously, to its end or proc_exit: runaways are
// bounded by the execution's timeout only (the host restarts the sandbox).

import * as nodefs from "node:fs";
import { normalize } from "./bashfs.ts";
import { FsError, HostFS, Root, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "./hostfs.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

export interface WasiOptions {
  args: string[]; // argv, argv[0] included
  env: Record<string, string>;
  stdin: Uint8Array;
  /** Preopened directories, [guest name, sandbox path], from fd 3 on. */
  preopens: [string, string][];
}

export interface WasiResult {
  exit: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  missing: string[];
}

export const WASI_NAMESPACES = ["wasi_snapshot_preview1", "wasi_unstable"];

const E = {
  SUCCESS: 0, ACCES: 2, BADF: 8, EXIST: 20, INVAL: 28, IO: 29, ISDIR: 31, LOOP: 32, NOENT: 44,
  NOSPC: 51, NOSYS: 52, NOTDIR: 54, NOTEMPTY: 55, NOTSUP: 58, PERM: 63, ROFS: 69, SPIPE: 70, NOTCAP: 76,
};
const ERRNO: Record<string, number> = {
  EACCES: E.ACCES, EBADF: E.BADF, EEXIST: E.EXIST, EINVAL: E.INVAL, EIO: E.IO, EISDIR: E.ISDIR,
  ELOOP: E.LOOP, ENOENT: E.NOENT, ENOSPC: E.NOSPC, ENOTDIR: E.NOTDIR, ENOTEMPTY: E.NOTEMPTY,
  EPERM: E.PERM, EROFS: E.ROFS, EBUSY: E.ACCES, EXDEV: E.NOTSUP,
};
const FT = { UNKNOWN: 0, CHAR: 2, DIR: 3, FILE: 4, SYMLINK: 7 };
const O = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 };
const FDFLAG_APPEND = 1;
const LOOKUP_FOLLOW = 1;
const RIGHTS_ALL = 0x1fffffffn;
const RIGHT_FD_WRITE = 1n << 6n;

class Exit {
  constructor(readonly code: number) {}
}
class WasiError {
  constructor(readonly errno: number) {}
}

type Fd =
  | { kind: "stdin"; pos: number }
  | { kind: "out"; chunks: Uint8Array[] }
  | { kind: "dir"; path: string; preopen?: string }
  | { kind: "file"; path: string; root: Root; rel: string; hfd: number; pos: number; append: boolean };

const fileType = (mode: number) => {
  const t = mode & S_IFMT;
  return t === S_IFDIR ? FT.DIR : t === S_IFREG ? FT.FILE : t === S_IFLNK ? FT.SYMLINK : FT.UNKNOWN;
};

/** runWasi runs a command module to its end. */
export function runWasi(fs: HostFS, module: WebAssembly.Module, o: WasiOptions): WasiResult {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const missing = new Set<string>();
  const fds = new Map<number, Fd>();
  const stdout: Fd = { kind: "out", chunks: [] }, stderr: Fd = { kind: "out", chunks: [] };
  fds.set(0, { kind: "stdin", pos: 0 });
  fds.set(1, stdout);
  fds.set(2, stderr);
  o.preopens.forEach(([guest, path], i) => fds.set(3 + i, { kind: "dir", path: normalize(path), preopen: guest }));
  let memory: WebAssembly.Memory | null = null;
  const view = () => new DataView(memory!.buffer);
  const bytes = () => new Uint8Array(memory!.buffer);
  const str = (ptr: number, len: number) => dec.decode(bytes().slice(ptr, ptr + len));

  // --- paths -----------------------------------------------------------------

  const rootTargets = fs.roots.map((r) => r.target);
  // A directory that holds a root (/, /mnt): listed, not backed by disk.
  const isVirtualDir = (p: string) => p === "/" || rootTargets.some((t) => t.startsWith(p + "/"));
  const virtualEntries = (p: string) => {
    const names = new Set<string>();
    for (const t of rootTargets) {
      if (t.startsWith(p === "/" ? "/" : p + "/")) names.add(t.slice(p === "/" ? 1 : p.length + 1).split("/")[0]);
    }
    return [...names].sort();
  };

  const fsErr = (e: unknown): never => {
    if (e instanceof WasiError || e instanceof Exit) throw e;
    if (e instanceof FsError) throw new WasiError(ERRNO[e.code] ?? E.IO);
    throw new WasiError(E.IO);
  };

  // resolve names the sandbox path of `rel` under a directory fd. From the
  // preopened "/", a path that is not a sandbox path is tried under
  // /workspace (PARSELBOX-BEHAVIOUR.md §18.2).
  const resolve = (dirfd: number, rel: string): string => {
    const d = fds.get(dirfd);
    if (!d || d.kind !== "dir") throw new WasiError(E.BADF);
    if (rel.includes("\0")) throw new WasiError(E.INVAL);
    const p = normalize(d.path + "/" + rel);
    if (d.preopen === "/" && d.path === "/" && !fs.locate(p)[0] && !isVirtualDir(p)) {
      return normalize("/workspace/" + rel);
    }
    return p;
  };

  // lookup finds a sandbox path on disk, following a final symlink when
  // asked (HostFS refuses one that leads out of its root).
  const lookup = (p: string, follow: boolean): [Root, string, nodefs.Stats] => {
    let [root, rel] = fs.locate(p);
    if (!root) throw new WasiError(isVirtualDir(p) ? E.ISDIR : E.NOENT);
    try {
      let st = fs.lstat(root, rel);
      if (follow && (st.mode & S_IFMT) === S_IFLNK) {
        [root, rel] = fs.locate(fs.readlink(root, rel));
        if (!root) throw new WasiError(E.ACCES);
        st = fs.lstat(root, rel);
      }
      return [root, rel, st];
    } catch (e) {
      return fsErr(e);
    }
  };

  const fdOf = (fd: number): Fd => {
    const f = fds.get(fd);
    if (!f) throw new WasiError(E.BADF);
    return f;
  };
  const fileOf = (fd: number) => {
    const f = fdOf(fd);
    if (f.kind === "dir") throw new WasiError(E.ISDIR);
    return f;
  };

  // --- reading and writing ---------------------------------------------------

  const iovecs = (ptr: number, n: number): [number, number][] => {
    const v = view();
    const out: [number, number][] = [];
    for (let i = 0; i < n; i++) out.push([v.getUint32(ptr + 8 * i, true), v.getUint32(ptr + 8 * i + 4, true)]);
    return out;
  };

  const readInto = (f: Fd, iovs: [number, number][], at: number | null): number => {
    let total = 0;
    for (const [buf, len] of iovs) {
      if (len === 0) continue;
      let n = 0;
      if (f.kind === "stdin") {
        const pos = at ?? f.pos;
        const chunk = o.stdin.subarray(pos, pos + len);
        bytes().set(chunk, buf);
        n = chunk.length;
        if (at === null) f.pos += n;
        else at += n;
      } else if (f.kind === "file") {
        const pos = at ?? f.pos;
        const tmp = new Uint8Array(len);
        try {
          n = fs.read(f.hfd, tmp, 0, len, pos);
        } catch (e) {
          fsErr(e);
        }
        bytes().set(tmp.subarray(0, n), buf);
        if (at === null) f.pos += n;
        else at += n;
      } else throw new WasiError(E.BADF);
      total += n;
      if (n < len) break;
    }
    return total;
  };

  const writeFrom = (f: Fd, iovs: [number, number][], at: number | null): number => {
    let total = 0;
    for (const [buf, len] of iovs) {
      const data = bytes().slice(buf, buf + len);
      if (f.kind === "out") f.chunks.push(data);
      else if (f.kind === "file") {
        try {
          let pos = at ?? f.pos;
          if (f.append && at === null) pos = fs.fstat(f.hfd).size;
          let off = 0;
          while (off < data.length) off += fs.write(f.hfd, data, off, data.length - off, pos + off);
          if (at === null) f.pos = pos + data.length;
          else at += data.length;
        } catch (e) {
          fsErr(e);
        }
      } else throw new WasiError(E.BADF);
      total += len;
    }
    return total;
  };

  // --- stat ------------------------------------------------------------------

  const filestat = (ptr: number, st: { mode: number; size: number; ino?: number; mtimeMs: number; atimeMs: number; ctimeMs: number; nlink: number }, legacy: boolean) => {
    const v = view();
    const ns = (ms: number) => BigInt(Math.round(ms)) * 1_000_000n;
    v.setBigUint64(ptr, 1n, true);
    v.setBigUint64(ptr + 8, BigInt(st.ino ?? 0), true);
    v.setUint8(ptr + 16, fileType(st.mode));
    if (legacy) { // wasi_unstable: nlink is 32 bits, the rest moves up
      v.setUint32(ptr + 20, st.nlink, true);
      v.setBigUint64(ptr + 24, BigInt(st.size), true);
      v.setBigUint64(ptr + 32, ns(st.atimeMs), true);
      v.setBigUint64(ptr + 40, ns(st.mtimeMs), true);
      v.setBigUint64(ptr + 48, ns(st.ctimeMs), true);
    } else {
      v.setBigUint64(ptr + 24, BigInt(st.nlink), true);
      v.setBigUint64(ptr + 32, BigInt(st.size), true);
      v.setBigUint64(ptr + 40, ns(st.atimeMs), true);
      v.setBigUint64(ptr + 48, ns(st.mtimeMs), true);
      v.setBigUint64(ptr + 56, ns(st.ctimeMs), true);
    }
  };
  const virtualStat = { mode: S_IFDIR | 0o555, size: 0, mtimeMs: 0, atimeMs: 0, ctimeMs: 0, nlink: 1 };
  const statPath = (p: string, follow: boolean) => (isVirtualDir(p) && !fs.locate(p)[0] ? virtualStat : lookup(p, follow)[2]);
  const statFd = (f: Fd) => {
    if (f.kind === "file") {
      try {
        return fs.fstat(f.hfd);
      } catch (e) {
        return fsErr(e);
      }
    }
    if (f.kind === "dir") return statPath(f.path, true);
    return { mode: 0o020000, size: 0, mtimeMs: 0, atimeMs: 0, ctimeMs: 0, nlink: 1 }; // character device
  };

  // --- the calls -------------------------------------------------------------

  const argBuf = o.args.map((a) => enc.encode(a + "\0"));
  const envBuf = Object.entries(o.env).map(([k, v]) => enc.encode(`${k}=${v}\0`));
  const sizes = (list: Uint8Array[], countPtr: number, sizePtr: number) => {
    view().setUint32(countPtr, list.length, true);
    view().setUint32(sizePtr, list.reduce((n, b) => n + b.length, 0), true);
    return E.SUCCESS;
  };
  const fill = (list: Uint8Array[], ptrs: number, buf: number) => {
    for (const b of list) {
      view().setUint32(ptrs, buf, true);
      bytes().set(b, buf);
      ptrs += 4;
      buf += b.length;
    }
    return E.SUCCESS;
  };

  const calls = (legacy: boolean): Record<string, (...a: Any[]) => number | void> => ({
    args_sizes_get: (c: number, s: number) => sizes(argBuf, c, s),
    args_get: (p: number, b: number) => fill(argBuf, p, b),
    environ_sizes_get: (c: number, s: number) => sizes(envBuf, c, s),
    environ_get: (p: number, b: number) => fill(envBuf, p, b),
    clock_res_get: (_id: number, ptr: number) => {
      view().setBigUint64(ptr, 1000n, true);
      return E.SUCCESS;
    },
    clock_time_get: (id: number, _precision: bigint, ptr: number) => {
      const ns = id === 0 ? BigInt(Date.now()) * 1_000_000n : BigInt(Math.round(performance.now() * 1e6));
      view().setBigUint64(ptr, ns, true);
      return E.SUCCESS;
    },
    random_get: (buf: number, len: number) => {
      for (let off = 0; off < len; off += 65536) {
        crypto.getRandomValues(new Uint8Array(memory!.buffer, buf + off, Math.min(65536, len - off)));
      }
      return E.SUCCESS;
    },
    fd_read: (fd: number, iovs: number, n: number, nread: number) => {
      view().setUint32(nread, readInto(fileOf(fd), iovecs(iovs, n), null), true);
      return E.SUCCESS;
    },
    fd_pread: (fd: number, iovs: number, n: number, off: bigint, nread: number) => {
      view().setUint32(nread, readInto(fileOf(fd), iovecs(iovs, n), Number(off)), true);
      return E.SUCCESS;
    },
    fd_write: (fd: number, iovs: number, n: number, nwritten: number) => {
      view().setUint32(nwritten, writeFrom(fileOf(fd), iovecs(iovs, n), null), true);
      return E.SUCCESS;
    },
    fd_pwrite: (fd: number, iovs: number, n: number, off: bigint, nwritten: number) => {
      view().setUint32(nwritten, writeFrom(fileOf(fd), iovecs(iovs, n), Number(off)), true);
      return E.SUCCESS;
    },
    fd_seek: (fd: number, off: bigint, whence: number, ptr: number) => {
      const f = fileOf(fd);
      if (f.kind !== "file") throw new WasiError(E.SPIPE);
      // wasi_unstable numbers them CUR 0, END 1, SET 2; preview1 SET 0, CUR 1, END 2.
      const w = legacy ? [1, 2, 0][whence] : whence;
      let pos = Number(off);
      if (w === 1) pos += f.pos;
      else if (w === 2) pos += statFd(f).size;
      else if (w !== 0) throw new WasiError(E.INVAL);
      if (pos < 0) throw new WasiError(E.INVAL);
      f.pos = pos;
      view().setBigUint64(ptr, BigInt(pos), true);
      return E.SUCCESS;
    },
    fd_tell: (fd: number, ptr: number) => {
      const f = fileOf(fd);
      if (f.kind !== "file") throw new WasiError(E.SPIPE);
      view().setBigUint64(ptr, BigInt(f.pos), true);
      return E.SUCCESS;
    },
    fd_close: (fd: number) => {
      const f = fdOf(fd);
      if (f.kind === "file") {
        try {
          fs.close(f.hfd);
        } catch (_) { /* closed */ }
      }
      fds.delete(fd);
      return E.SUCCESS;
    },
    fd_renumber: (from: number, to: number) => {
      const f = fdOf(from);
      fdOf(to);
      calls(legacy).fd_close(to);
      fds.set(to, f);
      fds.delete(from);
      return E.SUCCESS;
    },
    fd_sync: (fd: number) => (fdOf(fd), E.SUCCESS),
    fd_datasync: (fd: number) => (fdOf(fd), E.SUCCESS),
    fd_advise: (fd: number) => (fdOf(fd), E.SUCCESS),
    fd_allocate: (fd: number, off: bigint, len: bigint) => {
      const f = fileOf(fd);
      if (f.kind !== "file") throw new WasiError(E.BADF);
      const end = Number(off + len);
      try {
        if (fs.fstat(f.hfd).size < end) fs.ftruncate(f.hfd, end);
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    fd_fdstat_get: (fd: number, ptr: number) => {
      const f = fdOf(fd);
      const v = view();
      const type = f.kind === "dir" ? FT.DIR : f.kind === "file" ? FT.FILE : FT.CHAR;
      v.setUint8(ptr, type);
      v.setUint16(ptr + 2, f.kind === "file" && f.append ? FDFLAG_APPEND : 0, true);
      v.setBigUint64(ptr + 8, RIGHTS_ALL, true);
      v.setBigUint64(ptr + 16, RIGHTS_ALL, true);
      return E.SUCCESS;
    },
    fd_fdstat_set_flags: (fd: number, flags: number) => {
      const f = fdOf(fd);
      if (f.kind === "file") f.append = (flags & FDFLAG_APPEND) !== 0;
      return E.SUCCESS;
    },
    fd_prestat_get: (fd: number, ptr: number) => {
      const f = fds.get(fd);
      if (!f || f.kind !== "dir" || f.preopen === undefined) return E.BADF;
      view().setUint8(ptr, 0);
      view().setUint32(ptr + 4, enc.encode(f.preopen).length, true);
      return E.SUCCESS;
    },
    fd_prestat_dir_name: (fd: number, ptr: number, len: number) => {
      const f = fds.get(fd);
      if (!f || f.kind !== "dir" || f.preopen === undefined) return E.BADF;
      bytes().set(enc.encode(f.preopen).subarray(0, len), ptr);
      return E.SUCCESS;
    },
    fd_filestat_get: (fd: number, ptr: number) => {
      filestat(ptr, statFd(fdOf(fd)), legacy);
      return E.SUCCESS;
    },
    fd_filestat_set_size: (fd: number, size: bigint) => {
      const f = fileOf(fd);
      if (f.kind !== "file") throw new WasiError(E.BADF);
      try {
        fs.ftruncate(f.hfd, Number(size));
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    fd_filestat_set_times: (fd: number) => (fdOf(fd), E.SUCCESS),
    fd_readdir: (fd: number, buf: number, len: number, cookie: bigint, usedPtr: number) => {
      const f = fdOf(fd);
      if (f.kind !== "dir") throw new WasiError(E.NOTDIR);
      let entries: [string, number][];
      const [root, rel] = fs.locate(f.path);
      if (!root) entries = virtualEntries(f.path).map((n) => [n, FT.DIR]);
      else {
        let names: string[] = [];
        try {
          names = fs.readdir(root, rel).sort();
        } catch (e) {
          fsErr(e);
        }
        entries = names.map((n) => {
          try {
            return [n, fileType(fs.lstat(root, rel === "" ? n : rel + "/" + n).mode)];
          } catch (_) {
            return [n, FT.UNKNOWN];
          }
        });
      }
      entries = [[".", FT.DIR], ["..", FT.DIR], ...entries];
      let used = 0;
      for (let i = Number(cookie); i < entries.length && used < len; i++) {
        const name = enc.encode(entries[i][0]);
        const head = new DataView(new ArrayBuffer(24));
        head.setBigUint64(0, BigInt(i + 1), true);
        head.setBigUint64(8, BigInt(i + 1), true);
        head.setUint32(16, name.length, true);
        head.setUint8(20, entries[i][1]);
        const ent = new Uint8Array(24 + name.length);
        ent.set(new Uint8Array(head.buffer), 0);
        ent.set(name, 24);
        const n = Math.min(ent.length, len - used);
        bytes().set(ent.subarray(0, n), buf + used);
        used += n;
      }
      view().setUint32(usedPtr, used, true);
      return E.SUCCESS;
    },
    path_open: (
      dirfd: number, dirflags: number, pathPtr: number, pathLen: number, oflags: number,
      rightsBase: bigint, _inheriting: bigint, fdflags: number, fdPtr: number,
    ) => {
      const p = resolve(dirfd, str(pathPtr, pathLen));
      const [root0, rel0] = fs.locate(p);
      const next = () => {
        let n = 3;
        while (fds.has(n)) n++;
        return n;
      };
      if (!root0) {
        if (!isVirtualDir(p)) return E.NOENT;
        if (oflags & (O.CREAT | O.TRUNC)) return E.ISDIR;
        const fd = next();
        fds.set(fd, { kind: "dir", path: p });
        view().setUint32(fdPtr, fd, true);
        return E.SUCCESS;
      }
      let root = root0, rel = rel0;
      let st: nodefs.Stats | null = null;
      try {
        [root, rel, st] = lookup(p, (dirflags & LOOKUP_FOLLOW) !== 0);
      } catch (e) {
        if (!(e instanceof WasiError) || e.errno !== E.NOENT || !(oflags & O.CREAT)) throw e;
      }
      if (st && (oflags & O.CREAT) && (oflags & O.EXCL)) return E.EXIST;
      if (st && (st.mode & S_IFMT) === S_IFDIR) {
        if (oflags & (O.CREAT | O.TRUNC)) return E.ISDIR;
        const fd = next();
        fds.set(fd, { kind: "dir", path: root.target + (rel === "" ? "" : "/" + rel) });
        view().setUint32(fdPtr, fd, true);
        return E.SUCCESS;
      }
      if (oflags & O.DIRECTORY) return st ? E.NOTDIR : E.NOENT;
      if (st && (st.mode & S_IFMT) === S_IFLNK) return E.LOOP; // not followed
      const write = (rightsBase & (RIGHT_FD_WRITE | (1n << 3n) | (1n << 22n))) !== 0n || (oflags & (O.CREAT | O.TRUNC)) !== 0 ||
        (fdflags & FDFLAG_APPEND) !== 0;
      try {
        if (!st) fs.create(root, rel, 0o644);
        const hfd = fs.open(root, rel, write ? nodefs.constants.O_RDWR : nodefs.constants.O_RDONLY);
        if (oflags & O.TRUNC) fs.ftruncate(hfd, 0);
        const fd = next();
        fds.set(fd, { kind: "file", path: p, root, rel, hfd, pos: 0, append: (fdflags & FDFLAG_APPEND) !== 0 });
        view().setUint32(fdPtr, fd, true);
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    path_filestat_get: (dirfd: number, flags: number, pathPtr: number, pathLen: number, ptr: number) => {
      filestat(ptr, statPath(resolve(dirfd, str(pathPtr, pathLen)), (flags & LOOKUP_FOLLOW) !== 0), legacy);
      return E.SUCCESS;
    },
    path_filestat_set_times: () => E.SUCCESS,
    path_create_directory: (dirfd: number, pathPtr: number, pathLen: number) => {
      const p = resolve(dirfd, str(pathPtr, pathLen));
      const [root, rel] = fs.locate(p);
      if (!root) return isVirtualDir(p) ? E.EXIST : E.NOENT;
      try {
        fs.mkdir(root, rel, 0o755);
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    path_unlink_file: (dirfd: number, pathPtr: number, pathLen: number) => {
      const p = resolve(dirfd, str(pathPtr, pathLen));
      const [root, rel, st] = lookup(p, false);
      if ((st.mode & S_IFMT) === S_IFDIR) return E.ISDIR;
      try {
        fs.unlink(root, rel);
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    path_remove_directory: (dirfd: number, pathPtr: number, pathLen: number) => {
      const p = resolve(dirfd, str(pathPtr, pathLen));
      const [root, rel, st] = lookup(p, false);
      if ((st.mode & S_IFMT) !== S_IFDIR) return E.NOTDIR;
      try {
        fs.rmdir(root, rel);
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    path_rename: (fd1: number, p1: number, l1: number, fd2: number, p2: number, l2: number) => {
      const from = resolve(fd1, str(p1, l1)), to = resolve(fd2, str(p2, l2));
      const [r1, rel1] = lookup(from, false);
      const [r2, rel2] = fs.locate(to);
      if (!r2) return E.NOENT;
      if (r1 !== r2) return E.NOTSUP; // across roots (EXDEV)
      try {
        fs.rename(r1, rel1, rel2);
      } catch (e) {
        fsErr(e);
      }
      return E.SUCCESS;
    },
    path_readlink: () => E.INVAL,
    poll_oneoff: (inPtr: number, outPtr: number, n: number, neventsPtr: number) => {
      const v = view();
      for (let i = 0; i < n; i++) {
        const sub = inPtr + 48 * i, ev = outPtr + 32 * i;
        v.setBigUint64(ev, v.getBigUint64(sub, true), true);
        v.setUint16(ev + 8, 0, true);
        v.setUint8(ev + 10, v.getUint8(sub + 8));
        v.setBigUint64(ev + 16, 0n, true);
        v.setUint16(ev + 24, 0, true);
      }
      v.setUint32(neventsPtr, n, true);
      return E.SUCCESS;
    },
    proc_exit: (code: number) => {
      throw new Exit(code);
    },
    sched_yield: () => E.SUCCESS,
  });

  // The import object: what the module asks for, each call guarded so that
  // a failure is an errno, and an unknown call ENOSYS (and named).
  const imports: Record<string, Record<string, Any>> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== "function" || !WASI_NAMESPACES.includes(imp.module)) continue;
    const impl = calls(imp.module === "wasi_unstable")[imp.name];
    (imports[imp.module] ??= {})[imp.name] = impl
      ? (...a: Any[]) => {
        try {
          return impl(...a);
        } catch (e) {
          if (e instanceof WasiError) return e.errno;
          throw e;
        }
      }
      : () => {
        missing.add(imp.name);
        return E.NOSYS;
      };
  }

  let exit = 0;
  try {
    const instance = new WebAssembly.Instance(module, imports);
    memory = instance.exports.memory as WebAssembly.Memory;
    if (!(memory instanceof WebAssembly.Memory)) throw new Error("the module exports no memory");
    (instance.exports._start as () => void)();
  } catch (e) {
    if (e instanceof Exit) exit = e.code;
    else throw e;
  } finally {
    for (const f of fds.values()) {
      if (f.kind === "file") {
        try {
          fs.close(f.hfd);
        } catch (_) { /* closed */ }
      }
    }
  }
  const join = (chunks: Uint8Array[]) => {
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let off = 0;
    for (const c of chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  };
  return {
    exit,
    stdout: join((stdout as { chunks: Uint8Array[] }).chunks),
    stderr: join((stderr as { chunks: Uint8Array[] }).chunks),
    missing: [...missing].sort(),
  };
}
