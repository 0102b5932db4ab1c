// python.ts: Pyodide, from the memory snapshot or booted cold. The Python
// half of the runner (python/_parselbox/) is imported before the snapshot
// is taken, so it must hold no JS object; JS helpers are registered after
// every start (features).

import { Buffer } from "node:buffer";
import { createPyodideModule, loadPyodide } from "./deps.ts";
import { jsglobals } from "./jsglobals.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** Where the Python package lives in the interpreter's memory. */
export const PACKAGE_DIR = "/lib/parselbox";

export interface BootOptions {
  indexURL: string;
  snapshot?: string; // the snapshot to load, or with make, to write
  make?: boolean;
  onOutput: (text: string) => void; // Pyodide's own messages while booting
  beforeSnapshot?: (py: Any) => void; // with make: the last step before the snapshot
}

export async function loadPython(o: BootOptions): Promise<Any> {
  const snapshot = o.snapshot && !o.make ? openSnapshot(o.snapshot) : undefined;
  let py: Any;
  try {
    py = await loadPyodide({
      indexURL: o.indexURL,
      createPyodideModule: snapshot ? (settings: Any) => sparseRestore(settings, snapshot) : createPyodideModule,
      jsglobals: jsglobals(),
      env: { HOME: "/workspace" },
      stdout: o.onOutput,
      stderr: o.onOutput,
      ...(o.make ? { _makeSnapshot: true } : {}),
      ...(snapshot ? { _loadSnapshot: snapshot.header } : {}),
    });
  } finally {
    snapshot?.file.close();
  }
  if (o.make || !snapshot) {
    installPackage(py);
    quotaMessage(py);
  }
  if (o.make) {
    o.beforeSnapshot?.(py);
    const snap: Uint8Array = py.makeMemorySnapshot();
    Deno.writeFileSync(o.snapshot!, snap);
    Deno.exit(0);
  }
  return py;
}

// A snapshot file, open, read up to the memory image: its header (magic,
// where the image starts, the build id and metadata) is what Pyodide's
// loader is given; the image is read from the file into the memory
// (copyImage), a piece at a time, never whole. Read whole (readFileSync),
// the 30 MB took ~45 ms of each start and 60 MB of memory until the
// garbage collection before ready, which then took longer to free it.
interface Snapshot {
  file: Deno.FsFile;
  size: number; // bytes of the file
  header: Uint8Array;
}

function openSnapshot(path: string): Snapshot {
  const file = Deno.openSync(path);
  try {
    const size = file.statSync().size;
    const head = new Uint8Array(8);
    readFull(file, head);
    const start = new Uint32Array(head.buffer)[1];
    if (start < head.length || start > size) throw new Error(`${path} is not a memory snapshot`);
    const header = new Uint8Array(start);
    header.set(head);
    readFull(file, header.subarray(head.length));
    return { file, size, header };
  } catch (e) {
    file.close();
    throw e;
  }
}

// readFull fills buf from the file's position; the file ending first is
// an error.
function readFull(file: Deno.FsFile, buf: Uint8Array): void {
  for (let off = 0; off < buf.length;) {
    const n = file.readSync(buf.subarray(off));
    if (!n) throw new Error("the memory snapshot is truncated");
    off += n;
  }
}

// sparseRestore creates the module as createPyodideModule does, with a
// restoreSnapshot that leaves the fresh wasm memory's untouched pages
// alone where the snapshot has zeros: the memory reads as zeros until a
// page is written, and half of the 30 MB snapshot is zero pages (the
// unused depth of the 10 MB C stack and the free top of the heap), which
// the plain copy made resident in every sandbox.
//
// Before the restore, the module wrote its static data (data segments),
// and its constructors used the top of the stack and allocated a few KB
// (up to the sbrk break). There, a page the snapshot has as zeros may not
// be zero in memory: it is compared and cleared. Reading a page of the
// fresh memory makes it resident too, so only those places are read: the
// static data, the heap below the break, and the stack from its base down
// to the first run of untouched pages.
async function sparseRestore(settings: Any, snap: Snapshot): Promise<Any> {
  settings.INITIAL_MEMORY = snap.size; // as Pyodide sets it from a whole snapshot
  const mod: Any = await createPyodideModule(settings);
  const api = mod.API;
  const restore = api.restoreSnapshot;
  api.restoreSnapshot = (header: Uint8Array) => {
    // The header is checked and read by Pyodide's own restoreSnapshot; the
    // image, which follows it in the file, is copied here.
    const meta = restore.call(api, header);
    copyImage(mod, snap.file, snap.size - header.length);
    return meta;
  };
  return mod;
}

const PAGE = 4096;
// Untouched stack pages in a row below which the constructors did not
// reach (a frame of 64 KB of zeros is not what they leave).
const STACK_CLEAN_RUN = 16;
// The image is read this much at a time (whole pages).
const CHUNK = 256 * PAGE;

// copyImage reads the memory image (length bytes, from the file's
// position) into the module's memory.
function copyImage(mod: Any, file: Deno.FsFile, length: number): void {
  const heap: Uint8Array = mod.HEAPU8;
  if (length > heap.length) {
    throw new RangeError(`the memory snapshot's image (${length} bytes) is larger than the memory`);
  }
  const stackLow: number = mod._emscripten_stack_get_end(); // the stack grows down to here
  const stackBase: number = mod._emscripten_stack_get_base();
  const brk: number = mod.HEAPU32[mod._emscripten_get_sbrk_ptr() >>> 2];
  if (!(stackLow > 0 && stackLow < stackBase && stackBase <= brk && brk <= length) || heap.byteOffset % 4 !== 0) {
    readFull(file, heap.subarray(0, length)); // not the layout this relies on: copy it all
    return;
  }
  const mem = new Uint32Array(heap.buffer, heap.byteOffset, length >> 2);
  const isZero = (a: Uint32Array, p: number) => zeroWords(a, p * WORDS, Math.min((p + 1) * WORDS, a.length));
  // Which pages may have been written before the restore.
  const stackTop = Math.floor((stackBase - 1) / PAGE); // the base's page
  let stackClean = -1; // stack pages below this one are untouched
  for (let p = stackTop, run = 0; p >= Math.floor(stackLow / PAGE); p--) {
    run = isZero(mem, p) ? run + 1 : 0;
    if (run === STACK_CLEAN_RUN) {
      stackClean = p;
      break;
    }
  }
  const written = (p: number) => {
    const from = p * PAGE;
    if (from < stackLow) return true; // static data
    if (from < stackBase) return stackClean < 0 || p >= stackClean; // the stack
    return from < brk; // the heap below the break
  };
  const chunk = new Uint8Array(CHUNK);
  const words = new Uint32Array(chunk.buffer);
  for (let at = 0; at < length; at += CHUNK) {
    const n = Math.min(CHUNK, length - at);
    readFull(file, chunk.subarray(0, n));
    const img = words.subarray(0, n >> 2);
    const pages = Math.ceil(n / PAGE), first = at / PAGE;
    let run = -1; // the first page (of the chunk) of a run of pages to copy
    for (let i = 0; i <= pages; i++) {
      const copy = i < pages && (!isZero(img, i) || written(first + i) && !isZero(mem, first + i));
      if (copy) {
        if (run < 0) run = i;
        continue;
      }
      if (run >= 0) {
        heap.set(chunk.subarray(run * PAGE, Math.min(i * PAGE, n)), at + run * PAGE);
        run = -1;
      }
    }
    // A tail shorter than a word (the image is whole pages: not expected).
    for (let i = n & ~3; i < n; i++) heap[at + i] = chunk[i];
  }
}

const WORDS = PAGE / 4;

// zeroWords says whether a[from:to] is all zeros.
function zeroWords(a: Uint32Array, from: number, to: number): boolean {
  let acc = 0;
  let i = from;
  for (; i + 8 <= to; i += 8) {
    acc |= a[i] | a[i + 1] | a[i + 2] | a[i + 3] | a[i + 4] | a[i + 5] | a[i + 6] | a[i + 7];
    if (acc !== 0) return false;
  }
  for (; i < to; i++) acc |= a[i];
  return acc === 0;
}

// installPackage writes python/_parselbox/*.py into the interpreter's file
// system and imports it: it defines everything that can live in the snapshot.
function installPackage(py: Any): void {
  const dir = new URL("./python/_parselbox/", import.meta.url);
  const FS = py.FS;
  const dest = PACKAGE_DIR + "/_parselbox";
  FS.mkdirTree(dest);
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isFile && e.name.endsWith(".py")) {
      FS.writeFile(`${dest}/${e.name}`, Deno.readFileSync(new URL(e.name, dir)));
    }
  }
  py.runPython(
    `import sys\nsys.path.insert(0, ${JSON.stringify(PACKAGE_DIR)})\nimport _parselbox\n_parselbox.prepare()\n`,
  );
}

// quotaMessage makes ENOSPC read "Disk quota exceeded" in Python
// (os.strerror, OSError): in the sandbox a write fails with ENOSPC when it
// would pass the workspace quota (hostfs.ts), and Python's message comes
// from the C library's table, which is in the interpreter's memory (and so
// in the snapshot). The new text is not longer than the old.
function quotaMessage(py: Any): void {
  const heap: Uint8Array = py._module.HEAPU8;
  const enc = new TextEncoder();
  const old = enc.encode("\0No space left on device\0");
  const text = enc.encode("Disk quota exceeded");
  const buf = Buffer.from(heap.buffer, heap.byteOffset, heap.length);
  const at = buf.indexOf(old);
  if (at < 0 || buf.indexOf(old, at + 1) >= 0) {
    throw new Error("ENOSPC's message is not where it was expected in the C library's table");
  }
  heap.set(text, at + 1);
  heap.fill(0, at + 1 + text.length, at + old.length - 1);
}
