// wasm.ts (feature): WebAssembly modules for Python, as the JS module
// `_pbx_wasm` (the loader is ../wasm.ts), and WASI commands for bash():
// every directory's bin/NAME.wasm is the command NAME, looked up before
// each bash() call, usable in pipelines (stdin from the pipeline, the
// shell's exported variables as its environment).
//
// load(path) answers [0, "library", name, path, exports],
// [0, "command", name, path] or [1, message]; run(path, args_json, stdin,
// env_json, preopens_json, argv0) answers [0, exit, stdout (bytes),
// stderr, missing] or [1, message].

import { justBash } from "../deps.ts";
import { addBashCommands } from "./bash.ts";
import { binCommands, Loaded, loadWasm, runCommand } from "../wasm.ts";
import { register, Runtime } from "../runtime.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

const message = (e: unknown) => String((e as Error)?.message ?? e);

function parse<T>(json: string, fallback: T): T {
  try {
    return json ? JSON.parse(String(json)) ?? fallback : fallback;
  } catch (_) {
    return fallback;
  }
}

const latin1 = (b: Uint8Array) => {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return s;
};
const utf8 = new TextDecoder("utf-8", { fatal: true });

register({
  name: "wasm",
  install(rt: Runtime) {
    const command = (path: string): Loaded & { kind: "command" } => {
      const m = loadWasm(rt.fs, path);
      if (m.kind !== "command") throw new Error(`"${path}" is a library, not a WASI command`);
      return m;
    };

    rt.py.registerJsModule("_pbx_wasm", {
      load(path: string) {
        try {
          const m = loadWasm(rt.fs, String(path));
          return m.kind === "library" ? [0, "library", m.name, m.path, m.exports] : [0, "command", m.name, m.path];
        } catch (e) {
          return [1, message(e)];
        }
      },
      run(path: string, argsJSON: string, stdin: Any, envJSON: string, preopensJSON: string, argv0: string) {
        try {
          const input = stdin instanceof Uint8Array ? stdin : new TextEncoder().encode(String(stdin ?? ""));
          const r = runCommand(rt.fs, command(String(path)), {
            args: parse<unknown[]>(argsJSON, []).map(String),
            stdin: input,
            env: parse<Record<string, string>>(envJSON, {}),
            preopens: parse<Record<string, string>>(preopensJSON, {}),
            argv0: argv0 ? String(argv0) : undefined,
          });
          return [0, r.exit, r.stdout, new TextDecoder().decode(r.stderr), r.missing];
        } catch (e) {
          return [1, message(e)];
        }
      },
    });

    // bash(): bin/*.wasm as commands. A module that is not a runnable
    // command, or fails, exits 126 saying so.
    addBashCommands(() =>
      binCommands(rt.fs).map(([name, path]) =>
        justBash.defineCommand(name, (args: string[], ctx: Any) => {
          let cmd: Loaded & { kind: "command" };
          try {
            const m = loadWasm(rt.fs, path);
            if (m.kind !== "command") throw new Error("library");
            cmd = m;
          } catch (_) {
            return Promise.resolve({ stdout: "", stderr: `${name}: not a runnable WASI command\n`, exitCode: 126 });
          }
          try {
            const s = ctx.stdin;
            const stdin = s instanceof Uint8Array ? s : Uint8Array.from(String(s ?? ""), (c) => c.charCodeAt(0) & 0xff);
            const r = runCommand(rt.fs, cmd, { args, stdin, env: { ...(ctx.exportedEnv ?? {}) } });
            let stdout: string, kind: "text" | "bytes" = "text";
            try {
              stdout = utf8.decode(r.stdout);
            } catch (_) {
              stdout = latin1(r.stdout); // not UTF-8: passed on as bytes
              kind = "bytes";
            }
            return Promise.resolve({ stdout, stdoutKind: kind, stderr: new TextDecoder().decode(r.stderr), exitCode: r.exit });
          } catch (e) {
            return Promise.resolve({ stdout: "", stderr: `${name}: ${message(e)}\n`, exitCode: 126 });
          }
        })
      )
    );
  },
});
