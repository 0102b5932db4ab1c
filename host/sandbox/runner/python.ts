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
  const snapshot = o.snapshot && !o.make ? Deno.readFileSync(o.snapshot) : undefined;
  const py: Any = await loadPyodide({
    indexURL: o.indexURL,
    createPyodideModule,
    jsglobals: jsglobals(),
    env: { HOME: "/workspace" },
    stdout: o.onOutput,
    stderr: o.onOutput,
    ...(o.make ? { _makeSnapshot: true } : {}),
    ...(snapshot ? { _loadSnapshot: snapshot } : {}),
  });
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
