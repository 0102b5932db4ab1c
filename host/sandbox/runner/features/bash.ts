// bash.ts: bash(command) for Python, as the JS module `_pbx_bash`: a shell
// emulated in JS (just-bash) over the sandbox's file system (bashfs.ts:
// /workspace, /files and the mounts through the HostFS, with their rules;
// files bash writes are reported with the execution's). One shell object
// per sandbox, each call a fresh shell state (variables, functions and
// the working directory do not persist; files do), starting in /workspace.
//
// run(command, env_json) answers [0, stdout, stderr, exit_code], or [2]
// when an interrupt (the timeout) ended it. No processes: every command is
// just-bash's own, in this process. curl goes through the guest's fetch
// (jsglobals.ts), so the sandbox's network rules apply as to any fetch.
// Limits bound what one call may do (commands, loop iterations, call depth).

import { BashFS } from "../bashfs.ts";
import { justBashURL } from "../deps.ts";
import { guestFetch } from "../jsglobals.ts";
import { register, Runtime } from "../runtime.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

/** The limits of one bash() call (PARSELBOX-BEHAVIOUR.md §12). The
 * execution's timeout bounds its time. */
export const BASH_LIMITS = {
  maxCommandCount: 50_000,
  maxLoopIterations: 50_000,
  maxCallDepth: 100,
  maxAwkIterations: 10_000,
  maxSedIterations: 10_000,
  maxExecutionTimeMs: Infinity,
};

// Commands that bash() may run besides just-bash's (WASI programs, see
// wasm.ts), looked up before every call: just-bash Command objects,
// {name, execute(args, ctx) → Promise<{stdout, stderr, exitCode}>}.
type CommandSource = (rt: Runtime) => Any[];
const sources: CommandSource[] = [];

/** Adds commands to bash(): f is asked before every call. */
export function addBashCommands(f: CommandSource): void {
  sources.push(f);
}

// The address a refusal names, as http.ts words it.
function denied(e: Any, url: string): string | null {
  const name = String(e?.name ?? "");
  if (name !== "NotCapable" && name !== "PermissionDenied") return null;
  const m = /net access to "([^"]+)"/.exec(String(e?.message ?? ""));
  let addr = m?.[1] ?? url;
  if (!m) {
    try {
      const u = new URL(url);
      addr = u.port ? u.host : `${u.hostname}:${u.protocol === "https:" ? 443 : 80}`;
    } catch (_) { /* the URL as it is */ }
  }
  return `network access to ${addr} is not allowed in the sandbox (the host's network rules)`;
}

// curlFetch is just-bash's SecureFetch over the guest's fetch: each hop of
// a redirect is a fetch of its own, under the same rules.
async function curlFetch(url: string, o: Any = {}): Promise<Any> {
  const maxRedirects = o.maxRedirects ?? 20;
  let method = String(o.method ?? "GET");
  let body = o.body;
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  o.signal?.addEventListener("abort", onAbort, { once: true });
  const timer = o.timeoutMs > 0 ? setTimeout(() => abort.abort(), o.timeoutMs) : undefined;
  try {
    for (let hop = 0;; hop++) {
      let r: Response;
      try {
        r = await guestFetch(url, { method, headers: o.headers, body, redirect: "manual", signal: abort.signal });
      } catch (e) {
        const why = denied(e, url);
        throw new Error(why ?? String((e as Any)?.message ?? e).split("\n")[0]);
      }
      const location = r.headers.get("location");
      if (o.followRedirects && location && r.status >= 300 && r.status < 400) {
        await r.body?.cancel();
        if (hop >= maxRedirects) throw new Error(`maximum (${maxRedirects}) redirects followed`);
        url = new URL(location, url).href;
        if (r.status === 303 || ((r.status === 301 || r.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      const headers: Record<string, string> = {};
      r.headers.forEach((v, k) => (headers[k] = v));
      return {
        status: r.status,
        statusText: r.statusText,
        headers,
        body: new Uint8Array(await r.arrayBuffer()),
        url,
      };
    }
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener("abort", onAbort);
  }
}

register({
  name: "bash",
  order: -1, // its interrupt hook runs before exec.ts's
  install(rt: Runtime) {
    // just-bash is imported after boot (importing it takes 0.1-1 s, which
    // every boot would pay otherwise).
    let justBash: Any = null;
    let shell: Any = null;
    let added = new Set<string>(); // names of the commands from sources
    const make = () => {
      const fs = new BashFS(rt.fs, new justBash.InMemoryFs());
      return new justBash.Bash({
        fs,
        cwd: "/workspace",
        env: { HOME: "/workspace", USER: "user" },
        executionLimits: BASH_LIMITS,
        fetch: curlFetch,
        // It guards a host's JS realm from scripts; here the guest writes no
        // JS for it, and Deno's permissions are the boundary.
        defenseInDepth: false,
      });
    };

    let loading: Promise<void> | null = null;
    const load = () => {
      loading ??= (async () => {
        justBash ??= await import(justBashURL);
        shell ??= make();
      })().finally(() => {
        loading = null;
      });
      return loading;
    };
    // Imported ahead when the sandbox is idle after boot, so that the first
    // call does not wait; a call before that imports it itself.
    const preload = () => {
      if (shell) return;
      if (rt.current !== null) {
        setTimeout(preload, 500);
        return;
      }
      load().catch((e) => rt.channel.log("warn", `importing just-bash: ${String(e?.message ?? e)}`));
    };
    rt.hooks.booting.push(() => {
      setTimeout(preload, 500);
    });
    rt.hooks.warm.push({
      run: () => load().catch((e) => rt.channel.log("warn", `importing just-bash: ${String(e?.message ?? e)}`)),
      done: () => shell !== null,
    });

    // interrupted tells whether the execution was interrupted while the
    // main thread was busy here (importing, or running a command that does
    // not yield, such as a WASI program): the watchdog set the interrupt
    // byte, and its message may not have been handled yet. The byte is
    // cleared (Python would raise it at some later point), and the call
    // ends as interrupted.
    const interrupted = (abort: AbortController) => {
      if (abort.signal.aborted) return true;
      if (rt.watchdog.signal[0] === 0) return false;
      rt.watchdog.signal[0] = 0;
      return true;
    };

    const running = new Set<AbortController>();
    const run = async (command: string, envJSON: string): Promise<Any[]> => {
      const abort = new AbortController();
      running.add(abort);
      try {
        let env: Record<string, string> = {};
        try {
          env = JSON.parse(String(envJSON || "{}"));
        } catch (_) { /* no environment */ }
        await load();
        if (interrupted(abort)) return [2];
        const now = new Set<string>();
        for (const source of sources) {
          for (const cmd of source(rt)) {
            shell.registerCommand(cmd);
            now.add(cmd.name);
          }
        }
        // Commands whose source is gone (a deleted bin/NAME.wasm): what
        // they replaced comes back.
        for (const name of added) {
          if (now.has(name)) continue;
          const c = shell.commands.get(name);
          if (c?.internalOriginalCommand) shell.commands.set(name, c.internalOriginalCommand);
          else shell.commands.delete(name);
        }
        added = now;
        const r = await shell.exec(String(command), { cwd: "/workspace", env, signal: abort.signal });
        if (interrupted(abort)) return [2];
        return [0, String(r.stdout ?? ""), String(r.stderr ?? ""), Number(r.exitCode ?? 1)];
      } catch (e) {
        if (interrupted(abort)) return [2];
        return [0, "", `bash: ${String((e as Any)?.message ?? e)}\n`, 1];
      } finally {
        running.delete(abort);
      }
    };

    // An interrupt ends the calls Python waits for (at the next command).
    rt.hooks.interrupt.push(() => {
      const n = running.size;
      for (const a of running) a.abort();
      return n;
    });

    rt.py.registerJsModule("_pbx_bash", { run });
  },
});
