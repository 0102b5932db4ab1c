// hostfs.ts: the host directories the sandbox sees (/workspace, /files and
// the mounts under /mnt), and the one place where the rules for them are
// enforced. Every guest that touches these directories goes through a
// HostFS: Python through the Emscripten adapter (emfs.ts), and later
// bash, JS and WASI through adapters of their own. The rules:
//
//   - Confinement: a path never leaves its root. Symlinks that the host
//     placed in a directory are shown as links whose target is a sandbox
//     path; one that leads out of its root cannot be read, listed or
//     followed (EACCES), however and whenever it was made. The sandbox
//     cannot create symlinks (EPERM).
//   - Modes: every mode the sandbox sets or creates is masked with 0o755:
//     no setuid, setgid or sticky bit, no group or world write. The roots
//     themselves cannot be chmod-ed (EPERM).
//   - Read-only roots refuse every change (EROFS, "Read-only file system",
//     as a read-only mount does on Linux).
//   - Quota: what the writable roots hold (counted from what is there at
//     start) cannot grow beyond the limit: a write, truncate, new file or
//     new directory that would pass it fails with ENOSPC and writes
//     nothing. Every entry counts ENTRY_BYTES besides its data, so that
//     empty files and directories cannot fill the disk's inodes; a file
//     removed while the sandbox still holds it open counts until closed.
//   - Tracking: the sandbox paths of files created or written are recorded
//     for the execution's result.
//
// Errors are FsError values with POSIX codes ("ENOENT", ...); adapters map
// them to their guest's errors.

import * as fs from "node:fs";

export class FsError extends Error {
  constructor(readonly code: string, message?: string) {
    super(message ?? code);
  }
}

/** A host directory seen at a sandbox path. */
export interface Root {
  target: string; // sandbox path: /workspace, /files, /mnt/data
  dir: string; // host directory, symlinks resolved
  readOnly: boolean;
}

/** The modes the sandbox may set: rwxr-xr-x at most. */
export const MODE_MASK = 0o755;
const S_IFMT = 0o170000, S_IFREG = 0o100000, S_IFDIR = 0o040000, S_IFLNK = 0o120000;

interface OpenFile {
  root: Root;
  rel: string;
  write: boolean;
}

/** What an entry (file, directory) costs in the quota besides its data:
 * one block. */
export const ENTRY_BYTES = 4096;

/** The error for a quota refusal, shared with adapters. */
export const QUOTA_EXCEEDED = "ENOSPC";

export class HostFS {
  readonly roots: Root[];
  /** Bytes the writable roots may hold, and hold now. */
  readonly quota: { limit: number; used: number };
  /** Sandbox paths created or written since the last take(). */
  private changed = new Set<string>();
  private open_ = new Map<number, OpenFile>();
  /** Inodes of files removed while open: freed when the last fd closes. */
  private orphans = new Set<number>();

  constructor(roots: Root[], quotaBytes: number) {
    this.roots = roots;
    this.quota = { limit: quotaBytes > 0 ? quotaBytes : Infinity, used: 0 };
    for (const r of roots) if (!r.readOnly) this.quota.used += usage(r.dir);
  }

  /** The sandbox paths of regular files created or written since the
   * last call, that still exist. */
  take(): string[] {
    const out: string[] = [];
    for (const p of this.changed) {
      if (p.includes("/.parselbox/")) continue;
      const [root, rel] = this.locate(p);
      if (!root) continue;
      try {
        const st = fs.lstatSync(this.path(root, rel));
        if ((st.mode & S_IFMT) === S_IFREG) out.push(p);
      } catch (_) { /* removed since */ }
    }
    this.changed.clear();
    return out;
  }

  /** Records a file written at a host path (by guest JS, through Deno's
   * own file functions) when it lies in a root, for take(). */
  noteHostPath(host: string): void {
    let best: Root | null = null;
    for (const r of this.roots) {
      if ((host === r.dir || host.startsWith(r.dir + "/")) && (!best || r.dir.length > best.dir.length)) best = r;
    }
    if (best && host !== best.dir) this.track(best, host.slice(best.dir.length + 1));
  }

  /** The root a sandbox path is in, and the path relative to it. */
  locate(p: string): [Root | null, string] {
    let best: Root | null = null;
    for (const r of this.roots) {
      if ((p === r.target || p.startsWith(r.target + "/")) && (!best || r.target.length > best.target.length)) best = r;
    }
    if (!best) return [null, ""];
    return [best, p.slice(best.target.length + 1)];
  }

  // --- paths ---------------------------------------------------------------

  // path joins a root and a relative path made of plain names.
  private path(root: Root, rel: string): string {
    if (rel === "") return root.dir;
    for (const part of rel.split("/")) {
      if (part === "" || part === "." || part === "..") throw new FsError("EINVAL");
    }
    return root.dir + "/" + rel;
  }

  // inside reports whether a resolved host path is within root.
  private inside(root: Root, real: string): boolean {
    return real === root.dir || real.startsWith(root.dir + "/");
  }

  // confine resolves the directory holding rel (rel itself with dir) and
  // refuses it when a symlink on the way leads out of the root.
  private confine(root: Root, rel: string, dir = false): string {
    const p = this.path(root, rel);
    if (rel === "") return p;
    const parent = dir ? p : p.slice(0, p.lastIndexOf("/"));
    let real: string;
    try {
      real = fs.realpathSync(parent);
    } catch (e) {
      throw fsError(e);
    }
    if (!this.inside(root, real)) throw new FsError("EACCES");
    return p;
  }

  private writable(root: Root): void {
    if (root.readOnly) throw new FsError("EROFS");
  }

  private track(root: Root, rel: string): void {
    this.changed.add(rel === "" ? root.target : root.target + "/" + rel);
  }

  // grow accounts for growth bytes in a writable root, or refuses them.
  private grow(growth: number): void {
    if (growth <= 0) return;
    if (this.quota.used + growth > this.quota.limit) {
      throw new FsError(QUOTA_EXCEEDED, "quota exceeded");
    }
  }

  // --- operations on paths -------------------------------------------------

  lstat(root: Root, rel: string): fs.Stats {
    const p = this.confine(root, rel);
    try {
      return fs.lstatSync(p);
    } catch (e) {
      throw fsError(e);
    }
  }

  readdir(root: Root, rel: string): string[] {
    const p = this.confine(root, rel, true);
    try {
      return fs.readdirSync(p);
    } catch (e) {
      throw fsError(e);
    }
  }

  /** The target of a symlink as a sandbox path, if it stays in its root. */
  readlink(root: Root, rel: string): string {
    const p = this.confine(root, rel);
    let real: string;
    try {
      real = fs.realpathSync(p);
    } catch (e) {
      throw fsError(e);
    }
    if (!this.inside(root, real)) throw new FsError("EACCES");
    return real === root.dir ? root.target : root.target + real.slice(root.dir.length);
  }

  mkdir(root: Root, rel: string, mode: number): void {
    this.writable(root);
    const p = this.confine(root, rel);
    this.grow(ENTRY_BYTES);
    try {
      fs.mkdirSync(p, { mode: mode & MODE_MASK });
    } catch (e) {
      throw fsError(e);
    }
    this.quota.used += ENTRY_BYTES;
  }

  /** Creates an empty regular file (it must not exist). */
  create(root: Root, rel: string, mode: number): void {
    this.writable(root);
    const p = this.confine(root, rel);
    this.grow(ENTRY_BYTES);
    try {
      const fd = fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, mode & MODE_MASK);
      fs.closeSync(fd);
    } catch (e) {
      throw fsError(e);
    }
    this.quota.used += ENTRY_BYTES;
    this.track(root, rel);
  }

  chmod(root: Root, rel: string, mode: number): number {
    this.writable(root);
    if (rel === "") throw new FsError("EPERM"); // a root keeps its mode
    const p = this.confine(root, rel);
    const masked = mode & MODE_MASK;
    try {
      if ((fs.lstatSync(p).mode & S_IFMT) === S_IFLNK) throw new FsError("EACCES");
      fs.chmodSync(p, masked);
    } catch (e) {
      throw fsError(e);
    }
    return masked;
  }

  utimes(root: Root, rel: string, atime: number, mtime: number): void {
    this.writable(root);
    const p = this.confine(root, rel);
    try {
      if ((fs.lstatSync(p).mode & S_IFMT) === S_IFLNK) throw new FsError("EACCES");
      fs.utimesSync(p, atime / 1000, mtime / 1000);
    } catch (e) {
      throw fsError(e);
    }
  }

  truncate(root: Root, rel: string, size: number): void {
    this.writable(root);
    const fd = this.open(root, rel, fs.constants.O_WRONLY);
    try {
      this.ftruncate(fd, size);
    } finally {
      this.close(fd);
    }
  }

  rename(root: Root, from: string, to: string): void {
    this.writable(root);
    const src = this.confine(root, from);
    const dst = this.confine(root, to);
    let replaced: fs.Stats | null = null;
    try {
      replaced = fs.lstatSync(dst);
    } catch (_) { /* no target */ }
    try {
      fs.renameSync(src, dst);
    } catch (e) {
      throw fsError(e);
    }
    if (replaced) this.release(replaced);
    this.track(root, to);
  }

  unlink(root: Root, rel: string): void {
    this.writable(root);
    const p = this.confine(root, rel);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
      fs.unlinkSync(p);
    } catch (e) {
      throw fsError(e);
    }
    this.release(st);
  }

  // release gives back the quota of an entry that was removed (or
  // replaced): its block, and a regular file's data unless another link
  // keeps it. A file the sandbox still holds open keeps counting until
  // its last fd is closed.
  private release(st: fs.Stats): void {
    let freed = ENTRY_BYTES;
    if ((st.mode & S_IFMT) === S_IFREG && st.nlink === 1) {
      if (this.isOpen(st.ino)) {
        this.orphans.add(st.ino);
        return;
      }
      freed += st.size;
    }
    this.quota.used = Math.max(0, this.quota.used - freed);
  }

  private isOpen(ino: number, except?: number): boolean {
    for (const fd of this.open_.keys()) {
      if (fd === except) continue;
      try {
        if (fs.fstatSync(fd).ino === ino) return true;
      } catch (_) { /* closed meanwhile */ }
    }
    return false;
  }

  rmdir(root: Root, rel: string): void {
    this.writable(root);
    if (rel === "") throw new FsError("EBUSY");
    const p = this.confine(root, rel);
    try {
      fs.rmdirSync(p);
    } catch (e) {
      throw fsError(e);
    }
    this.quota.used = Math.max(0, this.quota.used - ENTRY_BYTES);
  }

  symlink(root: Root, _rel: string, _target: string): never {
    this.writable(root);
    throw new FsError("EPERM");
  }

  /** File-system figures, the quota as the size. */
  statfs(): { blocks: number; bfree: number; bavail: number } {
    const q = this.quota;
    const total = Number.isFinite(q.limit) ? q.limit : 1 << 40;
    const free = Math.max(0, total - q.used);
    return { blocks: Math.floor(total / 4096), bfree: Math.floor(free / 4096), bavail: Math.floor(free / 4096) };
  }

  // --- operations on open files --------------------------------------------

  /** Opens an existing file or directory (creation is create()); flags are
   * O_RDONLY, O_WRONLY or O_RDWR. */
  open(root: Root, rel: string, flags: number): number {
    const write = (flags & 3) !== fs.constants.O_RDONLY;
    if (write) this.writable(root);
    const p = this.confine(root, rel);
    let fd: number;
    try {
      // A symlink here was placed after the guest resolved the path (the
      // guest resolves links itself): do not follow it.
      fd = fs.openSync(p, flags | fs.constants.O_NOFOLLOW);
    } catch (e) {
      throw fsError(e);
    }
    this.open_.set(fd, { root, rel, write });
    return fd;
  }

  close(fd: number): void {
    if (this.orphans.size > 0 && this.open_.has(fd)) {
      try {
        const st = fs.fstatSync(fd);
        if (this.orphans.has(st.ino) && !this.isOpen(st.ino, fd)) {
          this.orphans.delete(st.ino);
          this.quota.used = Math.max(0, this.quota.used - st.size - ENTRY_BYTES);
        }
      } catch (_) { /* closed below */ }
    }
    this.open_.delete(fd);
    try {
      fs.closeSync(fd);
    } catch (e) {
      throw fsError(e);
    }
  }

  private file(fd: number): OpenFile {
    const f = this.open_.get(fd);
    if (!f) throw new FsError("EBADF");
    return f;
  }

  read(fd: number, buf: Uint8Array | Int8Array, off: number, len: number, pos: number): number {
    this.file(fd);
    try {
      return fs.readSync(fd, buf, off, len, pos);
    } catch (e) {
      throw fsError(e);
    }
  }

  write(fd: number, buf: Uint8Array | Int8Array, off: number, len: number, pos: number): number {
    const f = this.file(fd);
    if (!f.write) throw new FsError("EBADF");
    let size: number;
    try {
      size = fs.fstatSync(fd).size;
    } catch (e) {
      throw fsError(e);
    }
    const growth = Math.max(0, pos + len - size);
    this.grow(growth);
    let n: number;
    try {
      n = fs.writeSync(fd, buf, off, len, pos);
    } catch (e) {
      throw fsError(e);
    }
    this.quota.used += Math.max(0, pos + n - size);
    this.track(f.root, f.rel);
    return n;
  }

  fstat(fd: number): fs.Stats {
    this.file(fd);
    try {
      return fs.fstatSync(fd);
    } catch (e) {
      throw fsError(e);
    }
  }

  ftruncate(fd: number, size: number): void {
    const f = this.file(fd);
    if (!f.write) throw new FsError("EINVAL");
    let cur: number;
    try {
      cur = fs.fstatSync(fd).size;
    } catch (e) {
      throw fsError(e);
    }
    this.grow(size - cur);
    try {
      fs.ftruncateSync(fd, size);
    } catch (e) {
      throw fsError(e);
    }
    this.quota.used = Math.max(0, this.quota.used + size - cur);
    this.track(f.root, f.rel);
  }

  fchmod(fd: number, mode: number): number {
    const f = this.file(fd);
    return this.chmod(f.root, f.rel, mode);
  }

  futimes(fd: number, atime: number, mtime: number): void {
    const f = this.file(fd);
    this.utimes(f.root, f.rel, atime, mtime);
  }
}

/** fsError turns what node:fs threw into an FsError. Deno's own refusal
 * (NotCapable: no permission) is EACCES. */
export function fsError(e: unknown): FsError {
  if (e instanceof FsError) return e;
  // deno-lint-ignore no-explicit-any
  const err = e as any;
  if (err?.name === "NotCapable" || err instanceof Deno.errors.NotCapable) return new FsError("EACCES");
  if (typeof err?.code === "string" && /^E[A-Z0-9]+$/.test(err.code)) return new FsError(err.code);
  return new FsError("EIO");
}

/** usage sums the sizes of the regular files under dir (not following
 * links) and ENTRY_BYTES for each entry, up to a bound on the entries
 * visited. */
function usage(dir: string): number {
  let total = 0, seen = 0;
  const stack = [dir];
  while (stack.length > 0 && seen < 200_000) {
    const d = stack.pop()!;
    let names: string[];
    try {
      names = fs.readdirSync(d);
    } catch (_) {
      continue;
    }
    for (const n of names) {
      seen++;
      total += ENTRY_BYTES;
      try {
        const st = fs.lstatSync(d + "/" + n);
        const t = st.mode & S_IFMT;
        if (t === S_IFREG) total += st.size;
        else if (t === S_IFDIR) stack.push(d + "/" + n);
      } catch (_) { /* gone */ }
    }
  }
  return total;
}

export { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG };
