// http.ts: one HTTP exchange for Python's ordinary clients (http.client,
// urllib.request and what builds on them; python/_parselbox/httpclient.py),
// as the JS module `_pbx_http`.
//
// exchange(url, method, headers_json, body, timeout_ms) sends the request
// with the guest's fetch (jsglobals.ts: network URLs only), so the
// sandbox's network rules apply exactly as to any fetch: Deno refuses an
// address the host did not allow. Redirects are not followed here (the
// Python client follows them, each hop under the same rules). The answer
// is [0, status, reason, headers_json, body] or [1, kind, message] where
// kind is "denied", "timeout", "refused" or "error"; [2] when an interrupt
// ended the wait. denied() takes the addresses any guest fetch was refused
// since it was last called (jsglobals.ts).

import { guestFetch, takeDenied } from "../jsglobals.ts";
import { register, Runtime } from "../runtime.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

interface Pending {
  abort: AbortController;
  resolve: (v: Any[]) => void;
}

// The address Deno named in its refusal, else the URL's.
function address(e: Any, url: string): string {
  const m = /net access to "([^"]+)"/.exec(String(e?.message ?? ""));
  if (m) return m[1];
  try {
    const u = new URL(url);
    return u.port ? u.host : `${u.hostname}:${u.protocol === "https:" ? 443 : 80}`;
  } catch (_) {
    return url;
  }
}

function failure(e: Any, url: string, timedOut: boolean): Any[] {
  const name = String(e?.name ?? "");
  const msg = String(e?.message ?? e);
  if (name === "NotCapable" || name === "PermissionDenied") {
    return [1, "denied", `network access to ${address(e, url)} is not allowed in the sandbox (the host's network rules)`];
  }
  if (timedOut) return [1, "timeout", "timed out"];
  if (/connection refused/i.test(msg)) return [1, "refused", `connection to ${address(e, url)} refused`];
  // Deno's messages can be long (a chain of causes): the first line.
  return [1, "error", msg.split("\n")[0].slice(0, 500)];
}

register({
  name: "http",
  order: -1, // its interrupt hook runs before exec.ts's
  install(rt: Runtime) {
    const pending = new Set<Pending>();

    const exchange = (url: string, method: string, headersJSON: string, body: Any, timeoutMs: number): Promise<Any[]> => {
      url = String(url);
      let headers: [string, string][];
      try {
        headers = JSON.parse(String(headersJSON));
      } catch (e) {
        return Promise.resolve([1, "error", `bad headers: ${String(e)}`]);
      }
      const abort = new AbortController();
      let timedOut = false;
      const timer = timeoutMs > 0
        ? setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, timeoutMs)
        : undefined;
      return new Promise<Any[]>((resolve) => {
        const p: Pending = { abort, resolve };
        pending.add(p);
        const done = (v: Any[]) => {
          clearTimeout(timer);
          pending.delete(p);
          resolve(v);
        };
        const init: RequestInit = {
          method: String(method),
          headers,
          redirect: "manual",
          signal: abort.signal,
        };
        if (body !== null && body !== undefined && body.length > 0) init.body = body;
        guestFetch(url, init)
          .then(async (r: Response) => {
            const bytes = new Uint8Array(await r.arrayBuffer());
            const hs: [string, string][] = [];
            r.headers.forEach((v, k) => hs.push([k, v]));
            done([0, r.status, r.statusText, JSON.stringify(hs), bytes]);
          })
          .catch((e: Any) => done(failure(e, url, timedOut)));
      });
    };

    // An interrupt ends the exchanges Python waits for.
    rt.hooks.interrupt.push(() => {
      const n = pending.size;
      for (const p of pending) {
        p.abort.abort();
        p.resolve([2]);
      }
      pending.clear();
      return n;
    });

    // An execution names the refusals made while it ran (Python's
    // httpclient asks only when it failed): those before it are dropped.
    rt.hooks.begin.push(() => void takeDenied());
    rt.py.registerJsModule("_pbx_http", { exchange, denied: () => takeDenied() });
  },
});
