// api.ts: the `api` method: one request to the app the host serves
// (host/serve), answered by the handler the code registered with @api.
//
// It is not an execution: it runs as an asyncio task of its own
// (_parselbox.api.start), beside a running execution (which it interleaves
// with wherever either waits: a tool call, a sleep), and takes nothing from
// the execution's result. What a handler writes to the workspace is
// reported in the files of the execution running, or of the next one;
// what it prints goes to the execution running, or else back to the host
// (stdout, stderr), which logs it. Its timeout is its own: at the deadline
// the answer is a 500 naming it, and the task is cancelled (a handler that
// blocks the sandbox without waiting is interrupted by the watchdog, as
// any callback between executions is).

import { MessageTooLarge } from "../channel.ts";
import { register, Runtime } from "../runtime.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

interface Answer {
  status: number;
  body: unknown;
  stdout?: string;
  stderr?: string;
}

register({
  name: "api",
  install(rt: Runtime) {
    const start = rt.pbx.api.start;

    rt.channel.handle("api", async (params: Any) => {
      const request = params?.request ?? {};
      const timeout = Number(params?.timeout) || 0;
      const what = `${String(request.method ?? "")} ${String(request.path ?? "")}`.trim();
      // JSON text, parsed by Python: the request the host sent, re-encoded.
      const task = start(JSON.stringify(request));
      const cancel = task.cancel; // awaiting the task destroys its proxy
      let timer: ReturnType<typeof setTimeout> | undefined;
      let answer: Answer;
      try {
        const done = (async (): Promise<Answer> => {
          const r = await task;
          try {
            const out = r.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
            return { status: Number(out.status) || 500, body: out.body ?? null };
          } finally {
            r.destroy();
          }
        })();
        const expired = new Promise<Answer>((resolve) => {
          if (timeout <= 0) return;
          timer = setTimeout(() => {
            try {
              cancel();
            } catch (_) { /* it ended meanwhile */ }
            resolve({
              status: 500,
              body: { error: `the handler of ${what} timed out after ${timeout}s and was cancelled` },
            });
          }, timeout * 1000);
        });
        answer = await Promise.race([done, expired]);
        done.catch(() => {}); // a cancelled task's late failure tells nobody
      } catch (e) {
        answer = { status: 500, body: { error: `the api router failed: ${String((e as Error)?.message ?? e)}` } };
      } finally {
        clearTimeout(timer);
        cancel.destroy();
      }
      if (rt.current === null) {
        // No execution takes what the handler printed: the host logs it.
        const stdout = rt.stdout.take(), stderr = rt.stderr.take();
        if (stdout) answer.stdout = stdout;
        if (stderr) answer.stderr = stderr;
      }
      try {
        rt.channel.encode({ id: 0, result: answer });
      } catch (e) {
        if (!(e instanceof MessageTooLarge)) throw e;
        return {
          status: 500,
          body: {
            error: `the answer of ${what} is ${e.size} bytes, over the max_message_size limit of ${e.limit} bytes`,
          },
        };
      }
      return answer;
    });
  },
});
