// tools.ts: Python's requests to the host (tool calls, discovery, tasks)
// and an interruptible sleep, as the JS module `_pbx_js`.
//
// request(method, params_json, sync) takes the parameters as JSON text
// from Python, parses them, and sends a message built from the parsed
// value: what Python wrote is never written as text. The answer reaches
// Python as Python values, converted once from the parsed reply (no JSON
// round trip): [0, value, has_bytes] for a result, [1, type, message] for
// an error, [2] when an interrupt ended the wait.

import { MessageTooLarge, Outcome } from "../channel.ts";
import { register, Runtime } from "../runtime.ts";
import { toPython } from "../convert.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

register({
  name: "tools",
  order: -1,
  install(rt: Runtime) {
    const py = rt.py;
    const answer = (o: Outcome): Any[] => {
      if (o.ok) {
        const [value, bytes] = toPython(py, o.result);
        return [0, value, bytes];
      }
      if ("interrupted" in o) return [2];
      return [1, o.error.type, o.error.message];
    };

    const request = (method: string, paramsJSON: string, sync: boolean): Promise<Any[]> => {
      let params: unknown;
      try {
        params = JSON.parse(String(paramsJSON));
      } catch (e) {
        return Promise.resolve([1, "ValueError", `the request's parameters are not JSON: ${String(e)}`]);
      }
      let p: Promise<Outcome>;
      try {
        p = rt.channel.request(String(method), params, !!sync);
      } catch (e) {
        if (e instanceof MessageTooLarge) {
          return Promise.resolve([1, "ValueError",
            `the arguments are ${e.size} bytes, over the max_message_size limit of ${e.limit} bytes`]);
        }
        throw e;
      }
      return p.then(answer);
    };

    // Sleeps end early, with [2], when the execution is interrupted.
    const sleeps = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: (v: Any[]) => void }>();
    const sleep = (ms: number): Promise<Any[]> =>
      new Promise((resolve) => {
        const s = {
          timer: setTimeout(() => {
            sleeps.delete(s);
            resolve([0]);
          }, Math.max(0, Number(ms) || 0)),
          resolve,
        };
        sleeps.add(s);
      });

    // An interrupt ends the waits Python is suspended in; if there were
    // none, exec.ts cancels what it awaits (this feature installs first).
    rt.hooks.interrupt.push(() => {
      let n = rt.channel.interruptWaits();
      for (const s of sleeps) {
        clearTimeout(s.timer);
        s.resolve([2]);
        n++;
      }
      sleeps.clear();
      return n;
    });

    py.registerJsModule("_pbx_js", { request, sleep });
  },
});
