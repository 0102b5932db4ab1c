// emfs.ts: the Emscripten file system through which Python reaches the
// host directories: each root of a HostFS is mounted at its sandbox path,
// and every operation goes to the HostFS, which enforces the rules
// (hostfs.ts). It follows the shape of Emscripten's NODEFS, whose role it
// takes; NODEFS itself, which would reach the host without those rules, is
// taken out of Python's reach (lockdown.ts).

import { FsError, HostFS, Root, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from "./hostfs.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

// Emscripten's errno numbers (its ERRNO_CODES table) for the codes HostFS
// and node:fs raise; anything else is EIO.
const ERRNO: Record<string, number> = {
  EPERM: 63, ENOENT: 44, EIO: 29, EBADF: 8, EAGAIN: 6, ENOMEM: 48, EACCES: 2, EBUSY: 10,
  EEXIST: 20, EXDEV: 75, ENOTDIR: 54, EISDIR: 31, EINVAL: 28, ENFILE: 41, EMFILE: 33,
  EFBIG: 22, ENOSPC: 51, EROFS: 69, EMLINK: 34, ENAMETOOLONG: 37, ENOTEMPTY: 55, ELOOP: 32,
  ENOSYS: 52, EOPNOTSUPP: 138, ENOTSUP: 138, EDQUOT: 19, ESTALE: 72, EOVERFLOW: 61,
};

/** The name of an Emscripten errno number ("EACCES"), or "E?". */
export function errnoName(n: number): string {
  return Object.keys(ERRNO).find((k) => ERRNO[k] === n) ?? "E?";
}

export function mountHostFS(py: Any, hostfs: HostFS): void {
  const FS = py.FS;
  const Errno = FS.ErrnoError;

  const run = <T>(f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof Errno) throw e;
      const code = e instanceof FsError ? e.code : "EIO";
      throw new Errno(ERRNO[code] ?? ERRNO.EIO);
    }
  };

  // where returns a node's root and its path relative to the root.
  const where = (node: Any): [Root, string] => {
    const parts: string[] = [];
    while (node.parent !== node) {
      parts.push(node.name);
      node = node.parent;
    }
    parts.reverse();
    return [node.mount.opts.root, parts.join("/")];
  };
  const child = (rel: string, name: string) => (rel === "" ? name : rel + "/" + name);

  const attrs = (st: Any, node: Any) => ({
    dev: 1, ino: node.id, mode: st.mode, nlink: st.nlink, uid: 0, gid: 0, rdev: 0, size: st.size,
    atime: new Date(st.atimeMs), mtime: new Date(st.mtimeMs), ctime: new Date(st.ctimeMs),
    blksize: 4096, blocks: Math.ceil(st.size / 4096),
  });

  const setattr = (node: Any, attr: Any, fd: number | null) => {
    const [root, rel] = where(node);
    run(() => {
      if (attr.mode != null) {
        if (attr.dontFollow) throw new Errno(ERRNO.EOPNOTSUPP);
        const masked = fd === null ? hostfs.chmod(root, rel, attr.mode) : hostfs.fchmod(fd, attr.mode);
        node.mode = (node.mode & S_IFMT) | masked;
      }
      if (typeof (attr.atime ?? attr.mtime) === "number") {
        const st = fd === null ? hostfs.lstat(root, rel) : hostfs.fstat(fd);
        const atime = attr.atime ?? st.atimeMs, mtime = attr.mtime ?? st.mtimeMs;
        if (fd === null) hostfs.utimes(root, rel, atime, mtime);
        else hostfs.futimes(fd, atime, mtime);
      }
      if (attr.size !== undefined) {
        if (fd === null) hostfs.truncate(root, rel, attr.size);
        else hostfs.ftruncate(fd, attr.size);
      }
    });
  };

  const HOSTFS: Any = {
    mount(mount: Any) {
      const st = run(() => hostfs.lstat(mount.opts.root, ""));
      return HOSTFS.createNode(null, "/", st.mode, 0);
    },
    createNode(parent: Any, name: string, mode: number, _dev: number) {
      const t = mode & S_IFMT;
      if (t !== S_IFDIR && t !== S_IFREG && t !== S_IFLNK) throw new Errno(ERRNO.EINVAL);
      const node = FS.createNode(parent, name, mode);
      node.node_ops = HOSTFS.node_ops;
      node.stream_ops = HOSTFS.stream_ops;
      return node;
    },
    node_ops: {
      getattr(node: Any) {
        const [root, rel] = where(node);
        return attrs(run(() => hostfs.lstat(root, rel)), node);
      },
      setattr(node: Any, attr: Any) {
        setattr(node, attr, null);
      },
      lookup(parent: Any, name: string) {
        const [root, rel] = where(parent);
        const st = run(() => hostfs.lstat(root, child(rel, name)));
        return HOSTFS.createNode(parent, name, st.mode, 0);
      },
      mknod(parent: Any, name: string, mode: number, dev: number) {
        const [root, rel] = where(parent);
        const t = mode & S_IFMT;
        run(() => {
          if (t === S_IFDIR) hostfs.mkdir(root, child(rel, name), mode);
          else if (t === S_IFREG) hostfs.create(root, child(rel, name), mode);
          else throw new FsError("EPERM");
        });
        return HOSTFS.createNode(parent, name, t | (mode & 0o755), dev);
      },
      rename(oldNode: Any, newDir: Any, newName: string) {
        const [root, from] = where(oldNode);
        const [, dir] = where(newDir);
        let replaced: Any = null;
        try {
          replaced = FS.lookupNode(newDir, newName);
        } catch (_) { /* no target */ }
        run(() => hostfs.rename(root, from, child(dir, newName)));
        if (replaced && replaced !== oldNode) FS.hashRemoveNode(replaced);
        oldNode.name = newName;
      },
      unlink(parent: Any, name: string) {
        const [root, rel] = where(parent);
        run(() => hostfs.unlink(root, child(rel, name)));
      },
      rmdir(parent: Any, name: string) {
        const [root, rel] = where(parent);
        run(() => hostfs.rmdir(root, child(rel, name)));
      },
      readdir(node: Any) {
        const [root, rel] = where(node);
        return [".", "..", ...run(() => hostfs.readdir(root, rel))];
      },
      symlink(parent: Any, newName: string, oldPath: string) {
        const [root, rel] = where(parent);
        run(() => hostfs.symlink(root, child(rel, newName), oldPath));
      },
      readlink(node: Any) {
        const [root, rel] = where(node);
        return run(() => hostfs.readlink(root, rel));
      },
      statfs(_path: string) {
        return { ...hostfs.statfs(), bsize: 4096, frsize: 4096, namelen: 255 };
      },
    },
    stream_ops: {
      getattr(stream: Any) {
        return attrs(run(() => hostfs.fstat(stream.nfd)), stream.node);
      },
      setattr(stream: Any, attr: Any) {
        setattr(stream.node, attr, stream.nfd);
      },
      open(stream: Any) {
        const [root, rel] = where(stream.node);
        // Creation and truncation happened already (mknod, setattr), and
        // Emscripten positions appends itself: keep the access mode only
        // (O_RDONLY, O_WRONLY, O_RDWR have the same numbers on both sides).
        stream.shared.refcount = 1;
        stream.nfd = run(() => hostfs.open(root, rel, stream.flags & 3));
      },
      close(stream: Any) {
        if (stream.nfd !== undefined && --stream.shared.refcount === 0) run(() => hostfs.close(stream.nfd));
      },
      dup(stream: Any) {
        stream.shared.refcount++;
      },
      read(stream: Any, buffer: Int8Array, offset: number, length: number, position: number) {
        return run(() => hostfs.read(stream.nfd, buffer, offset, length, position));
      },
      write(stream: Any, buffer: Int8Array, offset: number, length: number, position: number) {
        return run(() => hostfs.write(stream.nfd, buffer, offset, length, position));
      },
      llseek(stream: Any, offset: number, whence: number) {
        let position = offset;
        if (whence === 1) position += stream.position;
        else if (whence === 2 && (stream.node.mode & S_IFMT) === S_IFREG) {
          position += run(() => hostfs.fstat(stream.nfd)).size;
        }
        if (position < 0) throw new Errno(ERRNO.EINVAL);
        return position;
      },
      mmap(stream: Any, length: number, position: number) {
        if ((stream.node.mode & S_IFMT) !== S_IFREG) throw new Errno(43); // ENODEV
        const ptr = py._module._malloc(length);
        if (!ptr) throw new Errno(ERRNO.ENOMEM);
        HOSTFS.stream_ops.read(stream, py._module.HEAP8, ptr, length, position);
        return { ptr, allocated: true };
      },
      msync(stream: Any, buffer: Int8Array, offset: number, length: number) {
        HOSTFS.stream_ops.write(stream, buffer, 0, length, offset);
        return 0;
      },
    },
  };

  // Emscripten keeps the nodes it looked up in a name table and trusts
  // them on the next lookup. The host (or bash, JS and WASI, which use
  // HostFS directly) may have removed or replaced the file since: a node
  // of ours found in the table is checked against the host first, and
  // dropped when the file is gone or no longer of its type, so that the
  // lookup asks the host again. Mount points stay.
  const lookupNode = FS.lookupNode;
  FS.lookupNode = (parent: Any, name: string) => {
    if (parent.node_ops === HOSTFS.node_ops) {
      for (let node = FS.nameTable[FS.hashName(parent.id, name)]; node; node = node.name_next) {
        if (node.parent.id !== parent.id || node.name !== name) continue;
        if (node.mounted) break;
        const [root, rel] = where(node);
        let fresh = false;
        try {
          fresh = (hostfs.lstat(root, rel).mode & S_IFMT) === (node.mode & S_IFMT);
        } catch (_) { /* gone or refused: looked up again below */ }
        if (!fresh) FS.hashRemoveNode(node);
        break;
      }
    }
    return lookupNode.call(FS, parent, name);
  };

  const mkdirs = (p: string) => {
    let cur = "";
    for (const part of p.split("/").filter(Boolean)) {
      cur += "/" + part;
      try {
        FS.mkdir(cur);
      } catch (_) { /* exists */ }
    }
  };
  for (const root of hostfs.roots) {
    mkdirs(root.target);
    FS.mount(HOSTFS, { root }, root.target);
  }
}
