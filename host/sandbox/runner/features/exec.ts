// exec.ts: the `exec` method: run code, answer with its result.
//
// The result is built here: output and error come from Python as values
// (converted, never as JSON text), stdout and stderr from the captures,
// files from HostFS. One execution runs at a time; an execution over
// max_result_size answers with an error naming the option instead.

import { NO_REPLY, RemoteError } from "../channel.ts";
import { register, Runtime } from "../runtime.ts";
import { IDLE_LIMIT, REQUESTED, TIMEOUT } from "../watchdog.ts";
import { clearGuestTimers, onTimerError } from "../jsglobals.ts";

// deno-lint-ignore no-explicit-any
type Any = any;

interface ErrorValue {
  type: string;
  message: string;
  traceback?: string;
}

// errorValue takes only the strings of what Python said its error was.
function errorValue(e: Any): ErrorValue | null {
  if (e === null || e === undefined) return null;
  const out: ErrorValue = { type: String(e.type ?? "Error"), message: String(e.message ?? "") };
  if (e.traceback) out.traceback = String(e.traceback);
  return out;
}

// Python ints beyond 2^53 arrive as BigInt: they go on the line exactly.
Object.defineProperty(BigInt.prototype, "toJSON", {
  value: function (this: bigint) {
    // deno-lint-ignore no-explicit-any
    return (JSON as any).rawJSON(this.toString());
  },
  writable: false,
  configurable: false,
});

register({
  name: "exec",
  install(rt: Runtime) {
    const execute = rt.pbx.execute;
    const begin = execute.begin;
    const start = execute.start;
    // Tells a PyProxy (the pair execute.run returns) from a plain output
    // that Pyodide converted by itself.
    const PyProxy = rt.py.ffi.PyProxy;
    const isProxy = (v: unknown): v is Any => v instanceof PyProxy;
    // outcome reads what start returned: a plain output that Pyodide
    // converted already, or the pair (output, error) as a proxy, which it
    // converts and destroys.
    const outcome = (r: unknown): { output: unknown; error: ErrorValue | null } => {
      if (!isProxy(r)) return { output: r ?? null, error: null };
      try {
        const [out, err] = r.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
        return { output: out ?? null, error: errorValue(err) };
      } catch (e) {
        return {
          output: null,
          error: { type: "TypeError", message: `the result could not be converted: ${String((e as Error)?.message ?? e)}` },
        };
      } finally {
        r.destroy();
      }
    };
    const interrupt = execute.interrupt;
    const cancelBackground = execute.cancel_background;
    let chain: Promise<unknown> = Promise.resolve();
    let busy = false; // an execution runs

    // Before ready, one execution of nothing, unseen, and a garbage
    // collection of what boot left: the first real execution otherwise
    // pays for both (measured: 26-33 ms without, 18-30 ms with; without
    // the collection alone, `1+1` took 11 ms instead of 4-7 the first time
    // and 4 ms instead of 1-2 the next ones). Boot is when boot costs are
    // paid.
    rt.hooks.booting.push(async () => {
      try {
        begin(false);
        const r = await start.callPromising("None");
        if (isProxy(r)) r.destroy();
      } catch (_) { /* nothing to tell */ }
      rt.stdout.take();
      rt.stderr.take();
      rt.fs.take();
      rt.collectGarbage();
    });

    // Interrupted while waiting in a tool call or sleep: those waits end
    // (tools.ts); while awaiting anything else: the asyncio task is cancelled.
    // Either way, what the guest left running in the background (its tasks,
    // callbacks and timers; not tool tasks) is cancelled with it: an
    // interrupted execution (one that timed out) must not leave work behind
    // that swamps the event loop (a bomb of tasks that each start more,
    // none blocking long enough for the idle watchdog) and makes the next
    // execution time out and be blamed for it.
    //
    // Unless the code has ended already: the interrupt byte, set by the
    // watchdog's thread before it tells this one, often stops the code
    // first, and then the execution's result is on its way here in
    // callbacks on the loop, which cancelling the background would cancel
    // (the execution would never return). Python's interrupt() tells; what
    // such code left is cancelled once the result is here (execOne).
    rt.hooks.interrupt.push((_id, _reason, ended) => {
      let running = false;
      try {
        running = interrupt(ended === 0) === true;
      } catch (e) {
        rt.channel.log("warn", `interrupt: ${String(e)}`);
      }
      if (running) clearGuestTimers();
      // ended > 0: KeyboardInterrupt is raised where Python waited.
      return running && ended === 0 ? 1 : 0;
    });
    // What an interrupted execution left running, cancelled once its result
    // is here (the hook above may have come too late to).
    const cancelLeftovers = () => {
      try {
        clearGuestTimers();
        cancelBackground();
      } catch (e) {
        rt.channel.log("warn", `interrupt: cancelling background work: ${String(e)}`);
      }
    };
    // A callback that blocked the loop between executions was interrupted:
    // cancel everything the guest left running (once per interrupt, however
    // it is learnt: from the watchdog, a timer's callback, asyncio's loop)
    // before any of it runs again.
    let handledEpoch = 0;
    const idleInterrupted = () => {
      const epoch = rt.watchdog.idleEpoch();
      if (epoch === handledEpoch || rt.current !== null) return 0;
      handledEpoch = epoch;
      rt.watchdog.signal[0] = 0;
      let n = clearGuestTimers();
      try {
        n += cancelBackground();
      } catch (e) {
        rt.channel.log("warn", `cancelling background work: ${String(e)}`);
      }
      rt.watchdog.beat();
      rt.stderr.note(
        `[parselbox] a callback left by an earlier execution blocked the sandbox for more than ` +
          `${rt.limits.idleLimitMs / 1000}s between executions: it was interrupted, and the ` +
          `${n} task(s), callback(s) and timer(s) left running were cancelled (tool tasks keep running).`,
      );
      return n;
    };
    rt.hooks.idleInterrupt.push(idleInterrupted);
    // An interrupt that lands in a callback rather than in the execution's
    // code (a guest task's step, a timer's) is the execution's: it is
    // interrupted as the watchdog's message would (the waits end, and so on).
    const interrupted = () => {
      const id = rt.current;
      if (id === null) return;
      let ended = 0;
      for (const h of rt.hooks.interrupt) ended += h(id, rt.watchdog.reason() || REQUESTED, ended);
    };
    // An interrupt that lands in a guest timer's callback: between
    // executions, the blocked callback's; during one, the execution's.
    onTimerError((e) => {
      if ((e as Any)?.type !== "KeyboardInterrupt") {
        rt.channel.log("debug", `a timer's callback failed: ${String((e as Any)?.message ?? e).slice(0, 300)}`);
      } else if (rt.current === null) idleInterrupted();
      else interrupted();
    });
    rt.py.registerJsModule("_pbx_exec", { idle_interrupted: idleInterrupted, interrupted });

    const execOne = async (id: number, params: Any) => {
      const code = String(params?.code ?? "");
      const timeout = Number(params?.timeout) || 0;
      // A callback interrupted between executions that the runner has not
      // heard of yet (it caught the KeyboardInterrupt, and the watchdog's
      // message comes after this request; once this began, it would be
      // ignored): handled first, so that this execution starts clean and
      // is told.
      idleInterrupted();
      if (!rt.watchdog.begin(id, timeout)) return; // condemned: the host kills us
      busy = true;
      rt.current = id;
      if (params?.stream === true) {
        rt.stdout.streamTo((text) => rt.channel.notify("output", { id, stream: "stdout", text }));
        rt.stderr.streamTo((text) => rt.channel.notify("output", { id, stream: "stderr", text }));
      }
      for (const h of rt.hooks.begin) h();
      let output: unknown = null;
      let error: ErrorValue | null = null;
      try {
        // start() runs the execution as an asyncio task started eagerly,
        // through a promising entry, so that a tool call in it may look
        // synchronous (run_sync): code that does not await ends within the
        // call, with no turn of the event loop, and start returns its
        // result; otherwise it returns the task, whose steps the event loop
        // runs (with stack switching allowed), and the await waits for it.
        // An interrupt for it that came before it began (or comes before
        // its code does): its code begins with KeyboardInterrupt. (A fatal
        // error of the interpreter ends the process: see main.ts.)
        begin(rt.watchdog.pendingFor(id));
        ({ output, error } = outcome(await start.callPromising(code)));
      } catch (e) {
        // run() catches what Python raises: this is the runtime failing.
        error = { type: "SandboxError", message: String((e as Error)?.message ?? e) };
      } finally {
        rt.watchdog.end();
        rt.current = null;
      }
      const reason = rt.watchdog.reason();
      if (reason === TIMEOUT || reason === REQUESTED) cancelLeftovers();
      if (reason === TIMEOUT && error && (error.type === "KeyboardInterrupt" || error.type === "CancelledError")) {
        error = {
          type: "KeyboardInterrupt",
          message: `Execution timed out after ${timeout}s; the interpreter state was kept.`,
          traceback: error.traceback,
        };
      } else if (reason === IDLE_LIMIT) {
        rt.watchdog.signal[0] = 0;
      }
      rt.stdout.streamTo(null);
      rt.stderr.streamTo(null);
      const result: Record<string, Any> = {
        output,
        stdout: rt.stdout.take(),
        stderr: rt.stderr.take(),
        error,
        files: rt.fs.take(),
      };
      for (const h of rt.hooks.result) h(result);
      let line: Uint8Array;
      try {
        line = rt.channel.encode({ id, result });
        if (line.length > rt.limits.maxResult) throw new Error(`${line.length}`);
      } catch (e) {
        const size = (e as Any)?.size ?? Number((e as Error).message);
        const limit = Math.min(rt.limits.maxResult, rt.limits.maxMessage);
        result.output = null;
        delete result.view;
        result.error = {
          type: "ResultTooLarge",
          message: `The result of this execution is ${Number.isFinite(size) ? size + " bytes" : "too large"}, ` +
            `over the max_result_size limit of ${limit} bytes: nothing was returned. ` +
            `Return less, or write large data to a file in /workspace.`,
        };
        result.stdout = result.stdout.slice(0, 4096);
        result.stderr = result.stderr.slice(0, 4096);
        line = rt.channel.encode({ id, result });
      }
      busy = false;
      rt.channel.write(line);
    };

    // probe: whether the interpreter still runs code (the host asks after an
    // execution that ended in an error that may mean it cannot, such as
    // MemoryError): n + 1, on the host's n, run the way an execution's code
    // is; the answer is Python's value, which the host checks.
    rt.channel.handle("probe", async (params) => {
      const n = Number(params?.n);
      if (!Number.isSafeInteger(n)) throw new RemoteError("ValueError", "probe: n is not an integer");
      begin(false);
      const { output, error } = outcome(await start.callPromising(`${n} + 1`));
      if (error) throw new RemoteError(error.type, error.message);
      return output;
    });

    rt.channel.handle("exec", (params, id) => {
      // One execution at a time; the host serializes too, this is a backstop.
      // Started at once when nothing runs (waiting for a microtask would
      // let the next read of stdin start first).
      const go = () =>
        execOne(id, params).catch((e) => {
          rt.channel.replyError(id, { type: "SandboxError", message: String(e?.message ?? e) });
        });
      chain = busy ? chain.then(go) : go();
      return NO_REPLY;
    });
  },
});
