// bashfs.ts: the file system bash() sees (just-bash's IFileSystem). Paths
// under /workspace, /files and the mounts go to the HostFS, which enforces
// the rules (confinement, read-only roots, masked modes, quota, tracking of
// written files: hostfs.ts); so bash sees what Python wrote and the
// reverse, at once (nothing is cached here). Every other path is an
// in-memory file system of bash's own, kept for the sandbox's life and
// shared with no one (as Python's in-memory files are Python's).
//
// Symlinks the host placed in a directory are followed while they stay in
// their root; one that leads out of it is refused (EACCES), as HostFS
// refuses it to Python. The sandbox creates no links (ln fails, EPERM).

import * as nodefs from "node:fs";
import { FsError, HostFS, Root, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "./hostfs.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

interface FsStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
  mode: number;
  size: number;
  mtime: Date;
}

interface DirentEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

const DESCRIPTIONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EEXIST: "file already exists",
  EISDIR: "illegal operation on a directory",
  ENOTDIR: "not a directory",
  ENOTEMPTY: "directory not empty",
  ENOSPC: "no space left on device (quota exceeded)",
  EINVAL: "invalid argument",
  EBUSY: "resource busy or locked",
  ELOOP: "too many symbolic links encountered",
  EXDEV: "cross-device link not permitted",
  ENOTSUP: "links cannot be created in the sandbox",
};

/** An error as node:fs words it ("ENOENT: no such file or directory, open
 * '/workspace/x'"), which just-bash's commands understand. */
function fail(code: string, op: string, path: string): Error {
  const e = new Error(`${code}: ${DESCRIPTIONS[code] ?? "i/o error"}, ${op} '${path}'`) as Error & { code: string };
  e.code = code;
  return e;
}

/** normalize makes an absolute path of plain names ("/a/../b" → "/b");
 * nothing goes above "/". */
export function normalize(p: string): string {
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return "/" + out.join("/");
}

const toBytes = (content: string | Uint8Array, encoding?: string): Uint8Array => {
  if (typeof content !== "string") return content;
  if (encoding === "binary" || encoding === "latin1") {
    const b = new Uint8Array(content.length);
    for (let i = 0; i < content.length; i++) b[i] = content.charCodeAt(i) & 0xff;
    return b;
  }
  if (encoding === "base64") return Uint8Array.from(atob(content), (c) => c.charCodeAt(0));
  if (encoding === "hex") return Uint8Array.from(content.match(/../g) ?? [], (h) => parseInt(h, 16));
  return new TextEncoder().encode(content);
};

const encodingOf = (o: Any): string | undefined => (typeof o === "string" ? o : o?.encoding ?? undefined);

function decode(b: Uint8Array, encoding?: string | null): string {
  if (encoding === "binary" || encoding === "latin1") {
    let s = "";
    for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
    return s;
  }
  if (encoding === "base64") {
    let s = "";
    for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
    return btoa(s);
  }
  if (encoding === "hex") return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return new TextDecoder().decode(b);
}

const statOf = (st: nodefs.Stats): FsStat => ({
  isFile: (st.mode & S_IFMT) === S_IFREG,
  isDirectory: (st.mode & S_IFMT) === S_IFDIR,
  isSymbolicLink: (st.mode & S_IFMT) === S_IFLNK,
  mode: st.mode,
  size: st.size,
  mtime: new Date(st.mtimeMs),
});

/** BashFS implements just-bash's IFileSystem. */
export class BashFS {
  constructor(private readonly host: HostFS, private readonly base: Any) {
    for (const r of host.roots) {
      try {
        base.mkdirSync(r.target, { recursive: true });
      } catch (_) { /* exists */ }
    }
  }

  // where is the root a path is in, with the path relative to it.
  private where(path: string): [Root | null, string, string] {
    const p = normalize(path);
    const [root, rel] = this.host.locate(p);
    return [root, rel, p];
  }

  // run calls a HostFS operation and words its error as node:fs does.
  private run<T>(op: string, path: string, f: () => T): T {
    try {
      return f();
    } catch (e) {
      const code = e instanceof FsError ? e.code : (e as Any)?.code ?? "EIO";
      throw fail(code, op, path);
    }
  }

  // follow resolves a symlink at rel (one that the host placed): HostFS
  // answers its target fully resolved, as a sandbox path in the same root,
  // or refuses it when it leads out (EACCES).
  private follow(root: Root, rel: string, op: string, path: string): [Root, string, nodefs.Stats] {
    return this.run(op, path, () => {
      let st = this.host.lstat(root, rel);
      if ((st.mode & S_IFMT) === S_IFLNK) {
        const [r2, rel2] = this.host.locate(this.host.readlink(root, rel));
        if (!r2) throw new FsError("EACCES");
        root = r2;
        rel = rel2;
        st = this.host.lstat(root, rel);
      }
      return [root, rel, st];
    });
  }

  private readHost(root: Root, rel: string, path: string): Uint8Array {
    const [r, p, st] = this.follow(root, rel, "open", path);
    if ((st.mode & S_IFMT) === S_IFDIR) throw fail("EISDIR", "read", path);
    return this.run("read", path, () => {
      const fd = this.host.open(r, p, nodefs.constants.O_RDONLY);
      try {
        const size = this.host.fstat(fd).size;
        const chunks: Uint8Array[] = [];
        let total = 0, pos = 0;
        for (;;) {
          const buf = new Uint8Array(Math.max(size - total, 65536));
          const n = this.host.read(fd, buf, 0, buf.length, pos);
          if (n === 0) break;
          chunks.push(buf.subarray(0, n));
          total += n;
          pos += n;
        }
        if (chunks.length === 1) return chunks[0];
        const out = new Uint8Array(total);
        let off = 0;
        for (const c of chunks) {
          out.set(c, off);
          off += c.length;
        }
        return out;
      } finally {
        this.host.close(fd);
      }
    });
  }

  private writeHost(root: Root, rel: string, path: string, data: Uint8Array, append: boolean): void {
    let r = root, p = rel;
    let exists = true;
    try {
      const st = this.host.lstat(root, rel);
      if ((st.mode & S_IFMT) === S_IFLNK) [r, p] = this.follow(root, rel, "open", path);
      else if ((st.mode & S_IFMT) === S_IFDIR) throw fail("EISDIR", "open", path);
    } catch (e) {
      if (!(e instanceof FsError) || e.code !== "ENOENT") {
        if (e instanceof FsError) throw fail(e.code, "open", path);
        throw e;
      }
      exists = false;
    }
    this.run("open", path, () => {
      if (!exists) this.host.create(r, p, 0o644);
      const fd = this.host.open(r, p, nodefs.constants.O_WRONLY);
      try {
        let pos = 0;
        if (append) pos = this.host.fstat(fd).size;
        else this.host.ftruncate(fd, 0);
        let off = 0;
        while (off < data.length) {
          const n = this.host.write(fd, data, off, data.length - off, pos);
          off += n;
          pos += n;
        }
      } finally {
        this.host.close(fd);
      }
    });
  }

  // --- IFileSystem --------------------------------------------------------

  async readFile(path: string, options?: Any): Promise<string> {
    return decode(await this.readFileBuffer(path), encodingOf(options));
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.readFileBuffer(p);
    return (this.readHost(root, rel, p));
  }

  async writeFile(path: string, content: string | Uint8Array, options?: Any): Promise<void> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.writeFile(p, content, options);
    this.writeHost(root, rel, p, toBytes(content, encodingOf(options)), false);
  }

  async appendFile(path: string, content: string | Uint8Array, options?: Any): Promise<void> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.appendFile(p, content, options);
    this.writeHost(root, rel, p, toBytes(content, encodingOf(options)), true);
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (_) {
      return false;
    }
  }

  async stat(path: string): Promise<FsStat> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.stat(p);
    return (statOf(this.follow(root, rel, "stat", p)[2]));
  }

  async lstat(path: string): Promise<FsStat> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.lstat(p);
    return (statOf(this.run("lstat", p, () => this.host.lstat(root, rel))));
  }

  async mkdir(path: string, options?: { recursive?: boolean }): Promise<void> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.mkdir(p, options);
    if (!options?.recursive) {
      this.run("mkdir", p, () => this.host.mkdir(root, rel, 0o755));
      return;
    }
    let cur = "";
    for (const part of rel.split("/").filter(Boolean)) {
      cur = cur === "" ? part : cur + "/" + part;
      let isDir = false;
      try {
        isDir = (this.follow(root, cur, "mkdir", p)[2].mode & S_IFMT) === S_IFDIR;
      } catch (e) {
        if ((e as Any)?.code !== "ENOENT") throw e;
        this.run("mkdir", p, () => this.host.mkdir(root, cur, 0o755));
        continue;
      }
      if (!isDir) throw fail("ENOTDIR", "mkdir", p);
    }
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.readdirWithFileTypes(path)).map((d) => d.name);
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.readdirWithFileTypes(p);
    const [r, dir, st] = this.follow(root, rel, "scandir", p);
    if ((st.mode & S_IFMT) !== S_IFDIR) throw fail("ENOTDIR", "scandir", p);
    const names = this.run("scandir", p, () => this.host.readdir(r, dir)).sort();
    // A mount whose target lies in this directory shows as a directory.
    const out: DirentEntry[] = [];
    for (const name of names) {
      try {
        const t = this.host.lstat(r, dir === "" ? name : dir + "/" + name).mode & S_IFMT;
        out.push({ name, isFile: t === S_IFREG, isDirectory: t === S_IFDIR, isSymbolicLink: t === S_IFLNK });
      } catch (_) { /* gone, or unreadable */ }
    }
    return (out);
  }

  async rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.rm(p, options);
    let st: nodefs.Stats;
    try {
      st = this.run("rm", p, () => this.host.lstat(root, rel));
    } catch (e) {
      if (options?.force && (e as Any)?.code === "ENOENT") return;
      throw e;
    }
    if ((st.mode & S_IFMT) !== S_IFDIR) {
      this.run("rm", p, () => this.host.unlink(root, rel));
      return;
    }
    if (rel === "") throw fail("EBUSY", "rm", p);
    if (!options?.recursive) { // an empty directory (rmdir)
      this.run("rm", p, () => this.host.rmdir(root, rel));
      return;
    }
    const remove = (d: string) => {
      for (const name of this.run("rm", p, () => this.host.readdir(root, d))) {
        const c = d + "/" + name;
        const t = this.run("rm", p, () => this.host.lstat(root, c)).mode & S_IFMT;
        if (t === S_IFDIR) remove(c);
        else this.run("rm", p, () => this.host.unlink(root, c));
      }
      this.run("rm", p, () => this.host.rmdir(root, d));
    };
    remove(rel);
  }

  async cp(src: string, dest: string, options?: { recursive?: boolean }): Promise<void> {
    const st = await this.stat(src);
    if (st.isDirectory) {
      if (!options?.recursive) throw fail("EISDIR", "cp", normalize(src));
      await this.mkdir(dest, { recursive: true });
      for (const name of await this.readdir(src)) {
        await this.cp(normalize(src + "/" + name), normalize(dest + "/" + name), options);
      }
      return;
    }
    await this.writeFile(dest, await this.readFileBuffer(src));
  }

  async mv(src: string, dest: string): Promise<void> {
    const [r1, rel1, p1] = this.where(src);
    const [r2, rel2, p2] = this.where(dest);
    if (!r1 && !r2) return this.base.mv(p1, p2);
    if (r1 && r1 === r2) {
      this.run("mv", p1, () => this.host.rename(r1, rel1, rel2));
      return;
    }
    // Across file systems: copy, then remove.
    await this.cp(p1, p2, { recursive: true });
    await this.rm(p1, { recursive: true });
  }

  resolvePath(base: string, path: string): string {
    return normalize(path.startsWith("/") ? path : base + "/" + path);
  }

  getAllPaths(): string[] {
    return [];
  }

  async chmod(path: string, mode: number): Promise<void> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.chmod(p, mode);
    const [r, target] = this.follow(root, rel, "chmod", p);
    this.run("chmod", p, () => this.host.chmod(r, target, mode));
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw fail("ENOTSUP", "symlink", normalize(linkPath));
  }

  async link(_existing: string, newPath: string): Promise<void> {
    throw fail("ENOTSUP", "link", normalize(newPath));
  }

  async readlink(path: string): Promise<string> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.readlink(p);
    const st = this.run("readlink", p, () => this.host.lstat(root, rel));
    if ((st.mode & S_IFMT) !== S_IFLNK) throw fail("EINVAL", "readlink", p);
    return (this.run("readlink", p, () => this.host.readlink(root, rel)));
  }

  async realpath(path: string): Promise<string> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.realpath(p);
    const [r, target] = this.follow(root, rel, "realpath", p);
    return (target === "" ? r.target : r.target + "/" + target);
  }

  async utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    const [root, rel, p] = this.where(path);
    if (!root) return this.base.utimes(p, atime, mtime);
    const [r, target] = this.follow(root, rel, "utimes", p);
    this.run("utimes", p, () => this.host.utimes(r, target, atime.getTime(), mtime.getTime()));
  }
}
