// python.ts: Pyodide, from the memory snapshot or booted cold. The Python
// half of the runner (python/_parselbox/) is imported before the snapshot
// is taken, so it must hold no JS object; JS helpers are registered after
// every start (features).

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
  if (o.make || !snapshot) installPackage(py);
  if (o.make) {
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
